# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/run, the micro benchmark: floor vs per-run vs pooled vs resident
(pooled with a keeper per slot) runguard, and the pooled and resident
command lines run in-process through librunguard."""

CONTENDERS = ('floor', 'per-run', 'pooled', 'resident', 'library',
              'library-resident')
# the contenders that start the runguard binary (the churn scenario)
RUNGUARD_CONTENDERS = ('per-run', 'pooled', 'resident')


class BenchError(Exception):
    """A problem that stops the benchmark, with a message for the user."""
