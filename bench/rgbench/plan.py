# SPDX-License-Identifier: LGPL-2.1-or-later
"""Plans for the C driver (bench/driver.c describes the format), running
it, and judging each call: a call that did not do what the program does
is a failure, counted and reported, never a sample."""

import json
import subprocess

from . import BenchError


class Plan:
    def __init__(self, workers):
        self.lines = ['workers\t%d' % workers]
        self.index = {}

    def cmd(self, command):
        """The driver's number of command (defined once)."""
        if command not in self.index:
            self.index[command] = len(self.index)
            fields = ['cmd', command.contender, command.stdin,
                      command.stdout, command.stderr, command.meta or '-',
                      '1' if command.self_line else '0'] + list(command.argv)
            for f in fields:
                if '\t' in f or '\n' in f:
                    raise BenchError('tab or newline in %r' % f)
            self.lines.append('\t'.join(fields))
        return self.index[command]

    def block(self, tag, rnd, seconds, commands):
        self.lines.append('\t'.join(['block', tag, str(rnd), '%.3f' % seconds]
                                    + [str(self.cmd(c)) for c in commands]))

    def once(self, tag, rnd, commands):
        self.lines.append('\t'.join(['once', tag, str(rnd)]
                                    + [str(self.cmd(c)) for c in commands]))

    def pause(self, ms):
        self.lines.append('pause\t%d' % ms)

    def text(self):
        return '\n'.join(self.lines) + '\n'


def run_driver(sandbox, plan):
    """Run the plan; return the driver's records, each judged ('problem')."""
    proc = subprocess.run([sandbox.driver], input=plan.text(),
                          capture_output=True, text=True, env=sandbox.env(),
                          cwd=sandbox.work)
    if proc.returncode:
        raise BenchError('the driver failed (status %d): %s'
                         % (proc.returncode, proc.stderr.strip()))
    records = [json.loads(ln) for ln in proc.stdout.splitlines()]
    selfs = {i for c, i in plan.index.items() if c.self_line}
    for r in records:
        r['problem'] = call_problem(r, r['cmd'] in selfs)
        if r['contender'] != 'floor':
            r['meta'] = parse_meta(r.get('meta', ''))
    return records


def parse_meta(text):
    meta = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition(':')
        if sep:
            meta[key] = value.strip()
    return meta


def _stderr(r):
    err = (r.get('stderr') or '').strip().replace('\n', ' | ')
    return ': ' + err[:200] if err else ''


def meta_problem(meta):
    """Why a runguard meta file is not that of a normal run, or None."""
    if not meta:
        return 'no meta file'
    if 'internal-error' in meta:
        return 'internal-error: %s' % meta['internal-error']
    if meta.get('exitcode') != '0':
        return 'meta exitcode %s' % meta.get('exitcode')
    if 'signal' in meta:
        return 'meta signal %s' % meta['signal']
    if meta.get('time-result'):
        return 'time-result %s' % meta['time-result']
    for key in ('wall-time', 'cpu-time'):
        if key not in meta:
            return 'meta has no %s' % key
    return None


def call_problem(r, expect_self):
    """Why a driver record is not a successful call, or None."""
    if 'error' in r:
        return 'cannot spawn: %s' % r['error']
    if 'signal' in r:
        return 'killed by signal %d%s' % (r['signal'], _stderr(r))
    if r['contender'] != 'floor':
        problem = meta_problem(parse_meta(r.get('meta', '')))
        if problem:
            return '%s (runguard exit %d)%s' % (problem, r['exit'],
                                                _stderr(r))
    if r['exit'] != 0:
        return 'exit status %d%s' % (r['exit'], _stderr(r))
    if expect_self and 'self_wall_ns' not in r:
        return 'no self line on stdout'
    return None
