# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/run, the micro benchmark: floor vs per-run vs pooled runguard."""

CONTENDERS = ('floor', 'per-run', 'pooled')
RUNGUARD_CONTENDERS = ('per-run', 'pooled')


class BenchError(Exception):
    """A problem that stops the benchmark, with a message for the user."""
