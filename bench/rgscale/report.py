# SPDX-License-Identifier: LGPL-2.1-or-later
"""Output: the result (OUTDIR/scale-<mode>.json), its summary on the
console, and a progress line a minute."""

import json
import os

from .aggregate import aggregate, ratios
from .judging import CALL_COLUMNS
from .worker import SUB_COLUMNS
from .options import POOL_MODES

# The options recorded in the result's params, under their own names.
PARAM_OPTIONS = ('mode', 'workload', 'workers', 'tests', 'minutes',
                 'sample_seconds', 'pool_size', 'pool_dir', 'test_size',
                 'time_scale', 'seed')


def _params(bench):
    opts = bench.opts
    params = {k: getattr(opts, k) for k in PARAM_OPTIONS}
    params.update({'compiler_command': bench.compiler_cmd,
                   'chroot_prefix': bench.prefix, 'runuser': bench.runuser,
                   'rungroup': bench.rungroup, 'compare': bench.compare})
    if opts.mode not in POOL_MODES:
        params['pool_size'] = 0
    return params


def build_result(bench, sampler, preflight_report, machine, started):
    """Everything recorded, with per-minute aggregates and the summary."""
    opts = bench.opts
    calls = sorted(bench.calls)
    subs = sorted(bench.submissions)
    rows = aggregate(calls, subs, sampler.samples, opts.minutes)
    summary = {'submissions': len(subs),
               'submissions_failed': sum(1 for s in subs if not s[5]),
               'calls': len(calls),
               'calls_failed': sum(1 for c in calls if not c[6]),
               'duration_s': round(bench.now(), 1)}
    summary.update(ratios(rows, opts.minutes))
    return {
        'tool': 'bench/scale', 'format': 1, 'started': started,
        'params': _params(bench), 'machine': machine,
        'preflight': preflight_report,
        'summary': summary, 'minutes': rows,
        'verdicts': dict(bench.verdicts),
        'failure_counts': dict(bench.failure_counts),
        'failures': bench.failures,
        'samples': sampler.samples,
        'calls': {'columns': CALL_COLUMNS, 'rows': calls},
        'submissions': {'columns': SUB_COLUMNS, 'rows': subs},
    }


def write_result(path, result):
    """Through a temporary file: a reader never sees half a result."""
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(result, f, separators=(',', ':'))
    os.replace(tmp, path)


def fmt(x, spec='%.1f'):
    return '-' if x is None else spec % x


def _minute_line(r):
    wc = r['run_wall_minus_cpu_ms']
    slab = r.get('slab_kb_last')
    return '%3d %5d (%8.2f) %6d  %8s/%-8s  %12s  %16s  %5s  %5s  %8s  ' \
        '%s (%s)' % (
            r['minute'], r['submissions'], r['submissions_prorated'],
            r['calls'], fmt(wc['median']),
            fmt(wc['p99']), fmt(r['run_call_ms']['p99']),
            fmt(r['compile_call_ms']['p99']), fmt(r.get('load1_mean')),
            fmt(r.get('d_tasks_max'), '%d'),
            fmt(slab / 1024 if slab else None),
            fmt(r.get('memory_cgroups_last'), '%d'),
            fmt(r.get('memory_cgroups_dying_last'), '%d'))


def _print_trends(s):
    """The summary's ratios (there are none below two full minutes)."""
    print('scale: throughput (prorated) last/first minute %s (target >= '
          '0.95: %s), last/second %s; run wall-cpu p99 first %s ms, '
          'last %s ms, slope %s ms/min' % (
              s['throughput_last_over_first'],
              'met' if s['target_throughput_met'] else 'NOT met',
              s['throughput_last_over_second'],
              s.get('run_wall_minus_cpu_p99_first_ms'),
              s.get('run_wall_minus_cpu_p99_last_ms'),
              s.get('run_wall_minus_cpu_p99_slope_ms_per_min')))
    print('scale: test-case runs and compares a minute, last/first %s, '
          'last/second %s' % (s['judging_calls_last_over_first'],
                              s['judging_calls_last_over_second']))


def print_summary(result):
    p, s = result['params'], result['summary']
    print('scale: %s, %d workers, %d tests, %s min on %s (%s, %d CPUs)' % (
        p['mode'], p['workers'], p['tests'], p['minutes'],
        result['machine']['kernel'], result['machine']['cgroup_mode'],
        result['machine']['nproc']))
    print('min  subs (prorated)  calls  run w-c med/p99 ms  run call p99  '
          'compile call p99  load1  D max  slab MiB  memcg (dying)')
    for r in result['minutes']:
        print(_minute_line(r))
    print('scale: %d submissions (%d failed), %d runguard calls; verdicts %s'
          % (s['submissions'], s['submissions_failed'], s['calls'],
             dict(result['verdicts'])))
    if s['full_minutes'] >= 2:
        _print_trends(s)
    if result['failure_counts']:
        print('scale: FAILURES %s' % dict(result['failure_counts']))
        for f in result['failures'][:3]:
            print('scale:   %s' % json.dumps(f, sort_keys=True)[:800])


def progress(bench, sampler):
    """One line a minute, so a long (lab) run shows it is alive."""
    subs = len(bench.submissions)
    calls = len(bench.calls)
    last = sampler.samples[-1] if sampler.samples else {}
    print('scale: t=%4.0f s  %d submissions, %d calls, %d failures, load %s,'
          ' D %s, memcg %s' % (bench.now(), subs, calls,
                               sum(bench.failure_counts.values()),
                               last.get('load1'), last.get('d_tasks'),
                               last.get('memory_cgroups')), flush=True)
