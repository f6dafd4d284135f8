# SPDX-License-Identifier: LGPL-2.1-or-later
"""The timed scenarios: plans for the driver and their summaries.

Contenders are interleaved within each scenario, with the order rotated
every round, so that a slow phase of the (shared, noisy) machine hits all
of them alike.  Durations in summaries are milliseconds."""

from collections import defaultdict

from . import CONTENDERS
from .plan import Plan, run_driver
from .stats import median, ratio, summary

NS_PER_MS = 1e6
PAUSE_MS = 10


def rotated(rnd, contenders=CONTENDERS):
    k = rnd % len(contenders)
    return contenders[k:] + contenders[:k]


def by_contender(records):
    """{contender: (successful records, failed records)}"""
    ok, bad = defaultdict(list), defaultdict(list)
    for r in records:
        (bad if r['problem'] else ok)[r['contender']].append(r)
    return {c: (ok[c], bad[c]) for c in CONTENDERS}


def failure_info(failed):
    """The distinct problems, and the first failed calls in full: when,
    how long, the meta file and runguard's stderr."""
    problems = []
    for r in failed:
        if r['problem'] not in problems:
            problems.append(r['problem'])
    calls = [{k: r.get(k) for k in ('round', 'worker', 'start_ns', 'dur_ns',
                                    'exit', 'signal', 'meta', 'stderr')}
             for r in failed[:5]]
    return {'failed': len(failed), 'failures': problems[:5],
            'failed_calls': calls}


def ms(values_ns):
    return [v / NS_PER_MS for v in values_ns]


# (numerator, denominator) of the ratios reported, in this order
RATIOS = (('pooled', 'floor'), ('pooled', 'per-run'), ('per-run', 'floor'),
          ('library', 'floor'), ('resident', 'floor'),
          ('resident', 'pooled'), ('library-resident', 'floor'),
          ('library-resident', 'library'))


def ratios(med):
    """The contenders' medians against each other."""
    return {'%s/%s' % (a, b): ratio(med[a], med[b]) for a, b in RATIOS}


def sample_table(columns, rows):
    return {'columns': columns, 'rows': rows}


# ---- back-to-back throughput ----------------------------------------------

def run_backtoback(sb, name, workers, seconds, rounds):
    plan = Plan(sb.workers)
    cmds = {c: [sb.command(c, w, 'trivial') for w in range(workers)]
            for c in CONTENDERS}
    for rnd in range(rounds):
        for c in rotated(rnd):
            plan.block(name, rnd, seconds, cmds[c])
    records = run_driver(sb, plan)
    result = {
        'description': 'trivial program back-to-back, %d worker%s; runs/s '
                       'per block of %.2g s, median over %d blocks'
                       % (workers, 's' if workers > 1 else '', seconds,
                          rounds),
        'params': {'workers': workers, 'seconds': seconds, 'rounds': rounds},
        'contenders': {}, 'samples': {},
    }
    for c, (ok, bad) in by_contender(records).items():
        result['contenders'][c] = backtoback_summary(records, c, ok, bad)
        result['samples'][c] = sample_table(
            ['round', 'worker', 'start_ns', 'dur_ns', 'cpu_ns'],
            [[r['round'], r['worker'], r['start_ns'], r['dur_ns'],
              r['cpu_ns']] for r in ok])
    med = {c: result['contenders'][c]['runs_per_s']['median']
           for c in CONTENDERS}
    result['ratios'] = ratios(med)
    return result


def block_rates(records, contender):
    """Successful runs per second of each block of contender."""
    blocks = defaultdict(list)
    for r in records:
        if r['contender'] == contender:
            blocks[r['round']].append(r)
    rates = []
    for calls in blocks.values():
        start = min(r['start_ns'] for r in calls)
        end = max(r['start_ns'] + r['dur_ns'] for r in calls)
        good = sum(1 for r in calls if not r['problem'])
        rates.append(good / ((end - start) / 1e9) if end > start else 0.0)
    return rates


def backtoback_summary(records, contender, ok, bad):
    s = {'n': len(ok), 'runs_per_s': summary(block_rates(records, contender)),
         'duration_ms': summary(ms([r['dur_ns'] for r in ok]))}
    s.update(failure_info(bad))
    return s


# ---- spaced calls ---------------------------------------------------------

def memory_kib(records):
    """The meta files' memory-bytes in KiB: the same trivial program in
    every mode, so a mode's own pages counted as the run's show here."""
    return [int(m['memory-bytes']) // 1024 for m in
            (r.get('meta') or {} for r in records) if 'memory-bytes' in m]


def share_over_per_run(kib, contender):
    """The share of a contender's runs that reported more than the
    per-run median + 64 KiB (issue 20's bound for a trivial run), or
    None without per-run figures."""
    base = median(kib.get('per-run') or [])
    runs = kib[contender]
    if base is None or not runs:
        return None
    return sum(1 for k in runs if k > base + 64) / len(runs)


def run_spaced(sb, rounds, pause_ms=PAUSE_MS):
    plan = Plan(sb.workers)
    for rnd in range(rounds):
        for c in rotated(rnd):
            plan.pause(pause_ms)
            plan.once('spaced', rnd, [sb.command(c, 0, 'trivial')])
    records = run_driver(sb, plan)
    result = {
        'description': '1 worker, trivial program, %d ms pause before '
                       'every call; per-call duration (ms), and overhead '
                       'over floor paired by round' % pause_ms,
        'params': {'rounds': rounds, 'pause_ms': pause_ms},
        'contenders': {}, 'samples': {},
    }
    split = by_contender(records)
    floor = {r['round']: r['dur_ns'] for r in split['floor'][0]}
    kib = {c: memory_kib(ok) for c, (ok, bad) in split.items()
           if c != 'floor'}
    for c, (ok, bad) in split.items():
        s = {'n': len(ok), 'duration_ms': summary(ms([r['dur_ns']
                                                      for r in ok]))}
        if c != 'floor':
            s['overhead_ms'] = summary(ms([r['dur_ns'] - floor[r['round']]
                                           for r in ok
                                           if r['round'] in floor]))
            s['memory_kib'] = summary(kib[c])
            s['memory_kib']['over_per_run'] = share_over_per_run(kib, c)
        s.update(failure_info(bad))
        result['contenders'][c] = s
        result['samples'][c] = sample_table(
            ['round', 'dur_ns', 'cpu_ns'],
            [[r['round'], r['dur_ns'], r['cpu_ns']] for r in ok])
    med = {c: result['contenders'][c]['duration_ms']['median']
           for c in CONTENDERS}
    result['ratios'] = ratios(med)
    return result


# ---- fidelity of the reported times ----------------------------------------

def reported(r):
    """(wall, cpu) in ns as the contender reports them: the driver's clock
    and rusage for floor, the meta file (ms resolution) for runguard."""
    if r['contender'] == 'floor':
        return r['dur_ns'], r['cpu_ns']
    m = r['meta']
    return (round(float(m['wall-time']) * 1e9),
            round(float(m['cpu-time']) * 1e9))


def diff_summary(diffs_ns):
    return {'diff_ms': summary(ms(diffs_ns)),
            'absdiff_ms': summary(ms([abs(d) for d in diffs_ns]))}


def run_fidelity(sb, name, program, rounds, workers=2):
    plan = Plan(sb.workers)
    for rnd in range(rounds):
        for c in rotated(rnd):
            plan.pause(PAUSE_MS)
            plan.once(name, rnd, [sb.command(c, w, program, self_line=True)
                                  for w in range(workers)])
    records = run_driver(sb, plan)
    result = {
        'description': '%s on %d workers at once; reported - actual (ms): '
                       'meta wall-time/cpu-time (floor: driver clock and '
                       'rusage) against the program\'s own clocks'
                       % (program, workers),
        'params': {'rounds': rounds, 'workers': workers, 'program': program},
        'contenders': {}, 'samples': {},
    }
    for c, (ok, bad) in by_contender(records).items():
        rows = []
        for r in ok:
            wall, cpu = reported(r)
            rows.append([r['round'], r['worker'], wall, r['self_wall_ns'],
                         cpu, r['self_cpu_ns']])
        s = {'n': len(ok),
             'wall': diff_summary([row[2] - row[3] for row in rows]),
             'cpu': diff_summary([row[4] - row[5] for row in rows]),
             'actual_wall_ms': median(ms([row[3] for row in rows])),
             'actual_cpu_ms': median(ms([row[5] for row in rows]))}
        s.update(failure_info(bad))
        result['contenders'][c] = s
        result['samples'][c] = sample_table(
            ['round', 'worker', 'reported_wall_ns', 'actual_wall_ns',
             'reported_cpu_ns', 'actual_cpu_ns'], rows)
    return result
