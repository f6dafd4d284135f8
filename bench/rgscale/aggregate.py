# SPDX-License-Identifier: LGPL-2.1-or-later
"""Per-minute aggregates of the records, and the trends over the minutes.

Percentiles are nearest-rank (rgbench.stats.nearest_rank), as in every
result bench/scale has recorded.
"""

import math

from rgbench.stats import nearest_rank

KINDS = ('compile', 'run', 'compare')


def ms(x):
    return None if x is None else round(x * 1000, 2)


def pct(x):
    return None if x is None else round(min(x, 1.0) * 100, 1)


def kind_stats(kind, calls):
    """Count, wall - cpu and call duration of one kind of call. A call
    without both meta times (or with a negative cpu time) has no wall -
    cpu."""
    kc = [c for c in calls if c[1] == kind]
    wc = [c[4] - c[5] for c in kc if c[4] is not None and
          c[5] is not None and c[5] >= 0]
    cd = [c[3] for c in kc]
    # the share of the wall time that CPU time and the waits explain
    cov = [(c[5] + c[8]) / c[4] for c in kc if c[4] and c[5] is not None
           and c[5] >= 0 and c[8] is not None]
    return {
        '%s_explained_pct' % kind: {
            'median': pct(nearest_rank(cov, 50)),
            'p10': pct(nearest_rank(cov, 10)),
            'n': len(cov)},
        '%s_calls' % kind: len(kc),
        '%s_wall_minus_cpu_ms' % kind: {
            'median': ms(nearest_rank(wc, 50)),
            'p99': ms(nearest_rank(wc, 99)),
            'max': ms(max(wc) if wc else None)},
        '%s_call_ms' % kind: {'median': ms(nearest_rank(cd, 50)),
                              'p99': ms(nearest_rank(cd, 99))},
    }


def sample_stats(samples):
    """Mean load, most D tasks, and the kernel memory at the minute's end."""
    if not samples:
        return {}
    last = samples[-1]
    return {
        'load1_mean': round(sum(s['load1'] for s in samples) /
                            len(samples), 2),
        'd_tasks_max': max(s['d_tasks'] for s in samples),
        'slab_kb_last': last['slab_kb'],
        'memory_cgroups_last': last['memory_cgroups'],
        'memory_cgroups_dying_last': last['memory_cgroups_dying'],
    }


def minute_row(m, calls, subs, samples):
    row = {'minute': m, 'submissions': len(subs),
           'submissions_failed': sum(1 for s in subs if not s[5]),
           'calls': len(calls)}
    for kind in KINDS:
        row.update(kind_stats(kind, calls))
    row.update(sample_stats(samples))
    return row


def prorated(subs, lo, hi):
    """Submissions worked on in [lo, hi): each one counts with the share
    of its duration inside. Workers start in step and a submission can
    take minutes under emulation, so completions come in bursts."""
    total = 0.0
    for s in subs:
        end, dur = s[0], s[4]
        start = end - dur
        if dur <= 0:
            total += lo <= end < hi
        else:
            total += max(0.0, min(end, hi) - max(start, lo)) / dur
    return round(total, 2)


def aggregate(calls, subs, samples, minutes):
    """One row a started minute; records are binned by their end time."""
    bins = int(math.ceil(minutes))
    rows = []
    for m in range(bins):
        lo, hi = 60 * m, 60 * (m + 1)
        row = minute_row(m, [c for c in calls if lo <= c[0] < hi],
                         [s for s in subs if lo <= s[0] < hi],
                         [s for s in samples if lo <= s['t'] < hi])
        row['submissions_prorated'] = prorated(subs, lo, hi)
        rows.append(row)
    return rows


def slope(points):
    """Least-squares slope of (x, y) points; None for fewer than two."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    return round(sum((x - mx) * (y - my) for x, y in points) / var, 3) \
        if var else None


def _ratio(a, b):
    """a / b to three places (the JSON's precision); None without both."""
    return round(a / b, 3) if a is not None and b else None


def throughput_ratios(rows):
    """The last full minute over the first and over the second (the first
    includes the cold page cache)."""
    first, second, last = rows[0], rows[1], rows[-1]
    out = {
        'throughput_last_over_first': _ratio(
            last['submissions_prorated'], first['submissions_prorated']),
        'throughput_last_over_second': _ratio(
            last['submissions_prorated'], second['submissions_prorated']),
        'completed_last_over_first': _ratio(last['submissions'],
                                            first['submissions']),
    }
    out['target_throughput_met'] = \
        (out['throughput_last_over_first'] or 0) >= 0.95
    # Test-case runs and compares a minute: with many tests a submission,
    # the finer measure of a lab run whose compiles take minutes.
    judged = [r['run_calls'] + r['compare_calls'] for r in rows]
    out['judging_calls_last_over_first'] = _ratio(judged[-1], judged[0])
    out['judging_calls_last_over_second'] = _ratio(judged[-1], judged[1])
    return out


def wall_cpu_trend(rows):
    """Run wall - cpu p99 from the first minute that has runs (in the lab,
    the first compiles take a minute) to the last, and its slope."""
    with_runs = [r for r in rows if r['run_wall_minus_cpu_ms']['p99']
                 is not None]
    if not with_runs:
        return {}
    p99 = [(r['minute'], r['run_wall_minus_cpu_ms']['p99'])
           for r in with_runs]
    return {
        'run_wall_minus_cpu_p99_first_ms': p99[0][1],
        'run_wall_minus_cpu_p99_last_ms': p99[-1][1],
        'run_wall_minus_cpu_p99_slope_ms_per_min': slope(p99),
        'run_call_p99_first_ms': with_runs[0]['run_call_ms']['p99'],
        'run_call_p99_last_ms': with_runs[-1]['run_call_ms']['p99'],
    }


def ratios(rows, minutes):
    """The summary's trends over the full minutes (a partial last minute
    would look like a slowdown)."""
    full = int(minutes)
    out = {'full_minutes': full}
    if full < 2:
        return out
    rows = rows[:full]
    out.update(throughput_ratios(rows))
    out.update(wall_cpu_trend(rows))
    return out
