# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard calls, their records, and the verdicts of DOMjudge."""

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from .options import POOL_MODES

# A record of Bench.calls, in this order (the JSON names its columns).
# wait_s: the waits runguard reported (wait-*-time, summed; None when it
# reported none), cause: its wall-time-cause (docs/meta-file.md).
CALL_COLUMNS = ('t_end', 'kind', 'worker', 'call_s', 'wall_s', 'cpu_s',
                'ok', 'status', 'wait_s', 'cause')
WAIT_KEYS = ('wait-cpu-time', 'wait-io-time', 'wait-memory-time',
             'wait-throttled-time')
MAX_FAILURE_DETAILS = 30


def read_meta(path):
    """runguard's meta file as {key: value}; {} when it is missing."""
    meta = {}
    try:
        with open(path) as f:
            for line in f:
                if ':' in line:
                    k, v = line.split(':', 1)
                    meta[k.strip()] = v.strip()
    except OSError:
        pass
    return meta


def meta_float(meta, key):
    try:
        return float(meta[key])
    except (KeyError, ValueError):
        return None


def tail(path, limit=600):
    """The end of a file, for a failure report."""
    try:
        with open(path, 'rb') as f:
            return f.read()[-limit:].decode('utf-8', 'replace')
    except OSError:
        return ''


def run_verdict(run_meta, cmp_meta, cmp_status):
    """As scripts/sample-judging (and DOMjudge's judgedaemon) decide."""
    if 'internal-error' in run_meta or 'internal-error' in cmp_meta:
        return 'JUDGEHOST-ERROR'
    if not run_meta:
        return 'NO-META'
    if 'timelimit' in run_meta.get('time-result', ''):
        return 'TIMELIMIT'
    if run_meta.get('exitcode') != '0':
        return 'RUN-ERROR'
    if 'stdout' in run_meta.get('output-truncated', ''):
        return 'OUTPUT-LIMIT'
    if cmp_status == 42:
        return 'CORRECT'
    if cmp_status == 43:
        return 'WRONG-ANSWER'
    return 'COMPARE-ERROR'


def _open_or_devnull(path, mode):
    return open(path, mode) if path else subprocess.DEVNULL


class Bench:
    """Shared state: options, the records, the stop flag."""

    def __init__(self, opts, prefix, runuser, rungroup):
        self.opts = opts
        self.runguard_src = os.path.abspath(opts.runguard)
        self.runguard = self.runguard_src   # the private copy, once made
        self.prefix = prefix
        self.runuser = runuser
        self.rungroup = rungroup
        self.base = os.path.join(prefix, 'runguard-scale', str(os.getpid()))
        self.compare = os.path.abspath(opts.compare or os.path.join(
            os.path.dirname(os.path.dirname(self.runguard)), 'bench',
            'scale_compare'))
        self.trivial = os.path.abspath(opts.trivial_program or os.path.join(
            os.path.dirname(os.path.dirname(self.runguard)), 'bench',
            'programs', 'trivial'))
        self.compiler_cmd = None
        self.calls = []
        self.submissions = []
        self.failures = []
        self.failure_counts = collections.Counter()
        self.verdicts = collections.Counter()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.counter = 0
        self.t0 = time.monotonic()
        self.deadline = None
        self.procs = {}

    def pool_args(self):
        if self.opts.mode not in POOL_MODES:
            return []
        keeper = ['--pool-keeper=%s'
                  % ('yes' if self.opts.mode == 'resident' else 'no')]
        return ['--pool-size=%d' % self.opts.pool_size,
                '--pool-dir=' + self.opts.pool_dir] + keeper

    def limit(self, seconds):
        return '%g' % (seconds * self.opts.time_scale)

    def next_index(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def now(self):
        return time.monotonic() - self.t0

    def fail(self, kind, worker, status, detail):
        """Count every failure; keep the details of the first few."""
        with self.lock:
            self.failure_counts['%s:%s' % (kind, status)] += 1
            if len(self.failures) < MAX_FAILURE_DETAILS:
                self.failures.append(dict(detail, kind=kind, worker=worker,
                                          status=status, t=self.now()))

    def call(self, worker, kind, args, cwd, stdin=None, stdout=None,
             stderr=None):
        """One runguard invocation; returns (exit status, seconds)."""
        cmd = [self.runguard] + self.pool_args() + args
        fin = _open_or_devnull(stdin, 'rb')
        fout = _open_or_devnull(stdout, 'wb')
        ferr = _open_or_devnull(stderr, 'wb')
        try:
            start = time.monotonic()
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=fin, stdout=fout,
                                    stderr=ferr)
            self.procs[worker] = proc   # for terminate_calls()
            try:
                status = proc.wait(timeout=self.opts.call_timeout)
            except subprocess.TimeoutExpired:
                self.hung(worker, kind, proc)
                status = proc.wait()
            elapsed = time.monotonic() - start
        finally:
            self.procs.pop(worker, None)
            for f in (fin, fout, ferr):
                if f is not subprocess.DEVNULL:
                    f.close()
        return status, elapsed

    def record(self, kind, worker, elapsed, meta, ok, status):
        """One row of CALL_COLUMNS."""
        wall = meta_float(meta, 'wall-time')
        cpu = meta_float(meta, 'cpu-time')
        waits = [w for w in (meta_float(meta, k) for k in WAIT_KEYS)
                 if w is not None]
        self.calls.append((round(self.now(), 3), kind, worker,
                           round(elapsed, 4), wall, cpu, ok, status,
                           round(sum(waits), 4) if waits else None,
                           meta.get('wall-time-cause')))

    def hung(self, worker, kind, proc):
        """A call past --call-timeout: what it waits on, then SIGKILL (our
        child, unreaped: the pid is still its own)."""
        where = {name: tail('/proc/%d/%s' % (proc.pid, name), 2000)
                 for name in ('wchan', 'stack', 'status')}
        print('scale: worker %d: a %s call (pid %d) hung for %g s; killed.'
              ' Kernel stack:\n%s' % (worker, kind, proc.pid,
                                       self.opts.call_timeout,
                                       where['stack'] or where['wchan']),
              file=sys.stderr, flush=True)
        self.fail(kind, worker, 'hung', dict(where, pid=proc.pid))
        proc.kill()

    def terminate_calls(self):
        """SIGTERM to the runguard processes we started (by pid): each
        ends its run and writes its meta file."""
        for proc in list(self.procs.values()):
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
