# SPDX-License-Identifier: LGPL-2.1-or-later
"""Order statistics of small samples, without numpy."""

import math


def percentile(values, p):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    v = sorted(values)
    pos = (len(v) - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def nearest_rank(values, q):
    """The nearest-rank percentile: the smallest value with at least q %
    of the values at or below it; None for no values.

    Unlike percentile() it never interpolates, so it is always one of the
    values: the p99 of a minute's calls is a call that happened.
    bench/scale uses it, and the results it has recorded
    (docs/performance.md) were computed with it; bench/run uses
    percentile().
    """
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(math.ceil(q / 100.0 * len(s))) - 1))
    return s[k]


def median(values):
    return percentile(values, 50)


def summary(values):
    """n, median, p90, p99, min, max of values (None when empty)."""
    return {
        'n': len(values),
        'median': median(values),
        'p90': percentile(values, 90),
        'p99': percentile(values, 99),
        'min': min(values) if values else None,
        'max': max(values) if values else None,
    }


def ratio(a, b):
    return a / b if a is not None and b else None
