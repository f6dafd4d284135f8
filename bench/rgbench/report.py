# SPDX-License-Identifier: LGPL-2.1-or-later
"""Machine description, results.json and the plain-text tables."""

import datetime
import json
import os
import platform
import subprocess

from . import CONTENDERS, RUNGUARD_CONTENDERS


def first_line(argv, cwd=None):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    except OSError:
        return None
    return out.stdout.splitlines()[0] if out.returncode == 0 and \
        out.stdout else None


def cgroup_mode():
    if os.path.exists('/sys/fs/cgroup/cgroup.controllers'):
        return 'v2'
    if os.path.exists('/sys/fs/cgroup/unified/cgroup.controllers'):
        return 'v1 (hybrid: cgroup2 at /sys/fs/cgroup/unified)'
    return 'v1'


def cpu_model():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def build_source(sb):
    """The source tree the measured build (-B) was configured from: with
    another build than this tree's, its commit is the one measured."""
    try:
        with open(os.path.join(sb.build, 'meson-info',
                               'meson-info.json')) as f:
            return json.load(f)['directories']['source']
    except (OSError, ValueError, KeyError):
        return sb.source


def machine_info(sb):
    source = build_source(sb)
    commit = first_line(['git', 'rev-parse', 'HEAD'], cwd=source)
    dirty = first_line(['git', 'status', '--porcelain'], cwd=source)
    return {
        'date': datetime.datetime.now(datetime.timezone.utc)
        .strftime('%Y-%m-%dT%H:%M:%SZ'),
        'kernel': platform.release(),
        'kernel_version': platform.version(),
        'cgroup_mode': cgroup_mode(),
        'cpu_model': cpu_model(),
        'nproc': len(os.sched_getaffinity(0)),
        'runguard_version': first_line([sb.runguard, '--version']),
        'git_commit': commit,
        'git_dirty': bool(dirty),
        'hostname': platform.node(),
    }


def write_json(results, path):
    with open(path, 'w') as f:
        json.dump(results, f, indent=1)
        f.write('\n')


# ---- text ------------------------------------------------------------------

def fmt(v, spec='%.3f'):
    return '-' if v is None else spec % v


def header(results):
    m, p = results['machine'], results['parameters']
    return [
        'runguard micro benchmark (bench/run)  %s' % m['date'],
        'kernel %s, cgroup %s, %d CPUs (%s)' % (m['kernel'], m['cgroup_mode'],
                                                 m['nproc'], m['cpu_model']),
        '%s, git %s%s' % (m['runguard_version'], (m['git_commit'] or '?')[:12],
                          ' (uncommitted changes)' if m['git_dirty'] else ''),
        'contenders: floor = the program directly (driver posix_spawn, '
        'wait4); per-run = runguard --pool-size 0;',
        '            pooled = runguard --pool-size %d --pool-dir %s; '
        'DOMjudge test-case run options' % (p['pool_size'], p['pool_dir']),
        '            resident = the pooled command line with '
        '--pool-keeper=yes, --pool-dir %s' % p.get('resident_pool_dir', '?'),
        '                       (a keeper per slot forks the runs)',
        '            library = the pooled command line run in-process '
        '(rg_run() in the driver\'s threads);',
        '            library-resident = the resident command line run '
        'in-process',
        '',
    ]


def failed_col(s):
    return '%d' % s['failed'] if 'failed' in s else '-'


def ratios_lines(result, what):
    r = result['ratios']
    items = ['%s %s' % (k, fmt(v)) for k, v in r.items()]
    lines = ['ratios (%s):' % what]
    for i in range(0, len(items), 4):
        lines.append('  ' + '  '.join(items[i:i + 4]))
    return lines


def text_backtoback(name, result):
    lines = ['== %s: %s' % (name, result['description']),
             '%-16s %9s %9s %9s | %-24s | %7s %6s'
             % ('contender', 'runs/s', 'min', 'max',
                'call ms: median p90 p99', 'calls', 'failed')]
    for c in CONTENDERS:
        s = result['contenders'][c]
        rps, d = s['runs_per_s'], s['duration_ms']
        lines.append('%-16s %9s %9s %9s | %7s %7s %8s | %7d %6s'
                     % (c, fmt(rps['median'], '%.1f'), fmt(rps['min'], '%.1f'),
                        fmt(rps['max'], '%.1f'), fmt(d['median']),
                        fmt(d['p90']), fmt(d['p99']), s['n'], failed_col(s)))
    lines += ratios_lines(result, 'median runs/s')
    return lines


def text_spaced(name, result):
    lines = ['== %s: %s' % (name, result['description']),
             '%-16s %6s | %8s %8s %8s | %-22s | %6s'
             % ('contender', 'n', 'median', 'p90', 'p99',
                'overhead: median p99', 'failed')]
    for c in CONTENDERS:
        s = result['contenders'][c]
        d, o = s['duration_ms'], s.get('overhead_ms')
        lines.append('%-16s %6d | %8s %8s %8s | %10s %10s | %6s'
                     % (c, s['n'], fmt(d['median']), fmt(d['p90']),
                        fmt(d['p99']), fmt(o and o['median']),
                        fmt(o and o['p99']), failed_col(s)))
    lines += ratios_lines(result, 'median duration')
    items = ['%s %s / %s' % (c, fmt(o['median']), fmt(o['p99']))
             for c in CONTENDERS
             for o in [result['contenders'][c].get('overhead_ms')] if o]
    lines.append('overhead over floor, paired by round (ms, median / p99):')
    for i in range(0, len(items), 3):
        lines.append('  ' + '  '.join(items[i:i + 3]))
    items = ['%s %s (%s-%s)' % (c, m['median'], m['min'], m['max'])
             for c in CONTENDERS
             for m in [result['contenders'][c].get('memory_kib')]
             if m and m['n']]
    if items:
        lines.append('memory-bytes of the trivial run (KiB, median '
                     '(min-max)):')
        for i in range(0, len(items), 3):
            lines.append('  ' + '  '.join(items[i:i + 3]))
    items = ['%s %.0f %%' % (c, 100 * m['over_per_run'])
             for c in CONTENDERS
             for m in [result['contenders'][c].get('memory_kib')]
             if m and m.get('over_per_run') is not None]
    if items:
        lines.append('runs reporting more than per-run\'s median + 64 KiB:')
        for i in range(0, len(items), 3):
            lines.append('  ' + '  '.join(items[i:i + 3]))
    return lines


def text_fidelity(name, result):
    lines = ['== %s: %s' % (name, result['description']),
             '%-16s %-5s %5s | %-19s | %-19s | %9s | %6s'
             % ('contender', 'clock', 'n', 'diff: median   p99',
                '|diff|: median  p99', 'actual', 'failed')]
    for c in CONTENDERS:
        s = result['contenders'][c]
        for clock in ('wall', 'cpu'):
            diff, ad = s[clock]['diff_ms'], s[clock]['absdiff_ms']
            lines.append('%-16s %-5s %5d | %9s %9s | %9s %9s | %9s | %6s'
                         % (c, clock, s['n'], fmt(diff['median']),
                            fmt(diff['p99']), fmt(ad['median']),
                            fmt(ad['p99']),
                            fmt(s['actual_%s_ms' % clock], '%.1f'),
                            failed_col(s)))
    return lines


def text_churn(name, result):
    cs = [c for c in RUNGUARD_CONTENDERS if c in result['contenders']]
    first = result['contenders'][cs[0]]
    lines = ['== %s: %s' % (name, result['description']),
             '%-40s' % 'per run' + ''.join('%12s' % c for c in cs)]
    keys = []
    for c in cs:
        keys += [k for k in result['contenders'][c]['per_run']
                 if k not in keys]
    for k in keys:
        lines.append('%-40s' % k + ''.join(
            '%12s' % fmt(result['contenders'][c]['per_run'].get(k))
            for c in cs))
    lines.append('%-40s' % 'runs (failed)' + ''.join(
        '%12s' % ('%d (%d)' % (result['contenders'][c]['runs'],
                               result['contenders'][c]['failed']))
        for c in cs))
    for c in cs:
        for part in ('cgroups', 'kmem'):
            why = result['contenders'][c][part].get('unavailable')
            if why:
                lines.append('%s %s: unavailable: %s' % (c, part, why))
    lines.append('dying memory cgroups: %s' % first['dying_memory']['method'])
    lines += ['note: %s' % n for n in result['notes']]
    return lines


TEXT = {'backtoback': text_backtoback, 'spaced': text_spaced,
        'fidelity': text_fidelity, 'churn': text_churn}


def failure_lines(results):
    lines = ['failed calls: %d' % results['failed_calls']]
    for name, result in results['scenarios'].items():
        for c, s in result['contenders'].items():
            for problem in s.get('failures', []):
                lines.append('  %s %s: %s' % (name, c, problem))
            for call in s.get('failed_calls', []):
                lines.append('    round %s worker %s at %.3f s, %.1f ms: '
                             'meta %s' % (
                                 call['round'], call['worker'],
                                 call['start_ns'] / 1e9,
                                 call['dur_ns'] / 1e6,
                                 ', '.join('%s=%s' % kv for kv in
                                           (call['meta'] or {}).items())))
    lines += ['cleanup: %s' % p for p in results.get('cleanup_problems', [])]
    lines += ['cleanup note: %s' % p for p in results.get('cleanup_notes', [])]
    return lines


def text_report(results):
    lines = header(results)
    for name, result in results['scenarios'].items():
        lines += TEXT[name.split('-')[0]](name, result) + ['']
    lines += failure_lines(results)
    if results.get('plots'):
        lines.append('plots: %s' % ', '.join(results['plots']))
    return '\n'.join(lines) + '\n'
