# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/run, the micro benchmark: floor vs per-run vs pooled runguard,
and the pooled command line run in-process through librunguard."""

CONTENDERS = ('floor', 'per-run', 'pooled', 'library')
# the contenders that start the runguard binary (the churn scenario)
RUNGUARD_CONTENDERS = ('per-run', 'pooled')


class BenchError(Exception):
    """A problem that stops the benchmark, with a message for the user."""
