# SPDX-License-Identifier: LGPL-2.1-or-later
"""main(): set up, preflight, run the workers for D minutes, clean up, and
write the result. Exit status: 0 all calls as expected, 1 some failed (or
the run was interrupted, or the pool not destroyed), 2 no start."""

import os
import shutil
import signal
import subprocess
import sys
import time

from . import SetupError
from .options import POOL_MODES, parse_args
from .problem import load_variants, make_testdata
from .report import build_result, print_summary, progress, write_result
from .sampler import Sampler, take_sample
from .prepare import (machine_info, pool_create, pool_destroy, preflight,
                    private_runguard, setup)
from .worker import Worker


def run_workers(bench, workers, sampler):
    """Start the workers and wait for them, a progress line a minute."""
    bench.deadline = time.monotonic() + 60 * bench.opts.minutes
    for w in workers:
        w.start()
    next_report = 60
    while True:
        alive = [w for w in workers if w.is_alive()]
        if not alive:
            break
        alive[0].join(1.0)
        if bench.now() >= next_report:
            progress(bench, sampler)
            next_report += 60


class Run:
    """One benchmark run after set-up: what has been started, so that
    clean_up() undoes exactly that, also after an error or a signal."""

    def __init__(self, bench):
        self.bench = bench
        self.opts = bench.opts
        self.started = time.strftime('%Y-%m-%dT%H:%M:%S%z')
        self.pool_made = self.interrupted = self.destroyed = False
        self.sampler = self.workers = None
        self.preflight_report = self.machine = None
        self.variants = self.cases = None

    def prepare(self):
        """The private runguard, the test data and the preflight."""
        bench, opts = self.bench, self.opts
        os.makedirs(bench.base)
        private_runguard(bench)
        if opts.workload == 'trivial':
            self.preflight_report = {'workload': 'trivial',
                                     'program': bench.trivial}
            return
        print('scale: test data (%d cases, up to %d numbers)' % (
            opts.tests, opts.test_size), flush=True)
        self.cases = make_testdata(os.path.join(bench.base, 'testdata'),
                                   opts.tests, opts.test_size, opts.seed)
        self.variants = load_variants()
        self.preflight_report = preflight(bench, self.variants, self.cases,
                                          bench.compiler_cmd)

    def measure(self):
        """The pool (pooled mode), then the workers for D minutes."""
        bench, opts = self.bench, self.opts
        self.machine = machine_info(bench)
        if opts.mode in POOL_MODES:
            self.pool_made = True   # destroy also a half-created pool
            pool_create(bench)
        self.workers = [Worker(bench, w, self.variants, self.cases)
                        for w in range(opts.workers)]
        bench.t0 = time.monotonic()
        self.sampler = Sampler(bench, opts.sample_seconds)
        self.sampler.start()
        print('scale: %s, %d workers for %g min' % (opts.mode, opts.workers,
                                                    opts.minutes), flush=True)
        run_workers(bench, self.workers, self.sampler)

    def interrupt(self):
        """SIGTERM or Ctrl-C: end the runguard calls; their meta files and
        the records so far still make a result."""
        self.interrupted = True
        print('scale: interrupted; ending the runs', file=sys.stderr)
        self.bench.stop.set()
        self.bench.terminate_calls()
        for w in self.workers or []:
            w.join(60)

    def clean_up(self):
        if self.sampler:
            self.sampler.done.set()
            self.sampler.join(30)
        if self.pool_made:
            self.destroyed = pool_destroy(self.bench)
        if not self.opts.keep:
            base = self.bench.base
            shutil.rmtree(base, ignore_errors=True)
            try:    # the parent, when no other bench/scale uses it
                os.rmdir(os.path.dirname(base))
            except OSError:
                pass

    def finish(self):
        """Write and print the result; the exit status."""
        bench, sampler = self.bench, self.sampler
        sampler.samples.append(take_sample(bench.now()))
        result = build_result(bench, sampler, self.preflight_report,
                              self.machine, self.started)
        result['interrupted'] = self.interrupted
        if self.pool_made:
            result['pool_destroyed'] = self.destroyed
        path = os.path.join(self.opts.outdir, 'scale-%s.json' % self.opts.mode)
        write_result(path, result)
        print_summary(result)
        print('scale: wrote %s' % path)
        worker_errors = [w.error for w in self.workers if w.error]
        failed = bool(result['failure_counts']) or worker_errors or \
            self.interrupted or (self.pool_made and not self.destroyed)
        return 1 if failed else 0


def on_signal(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    opts = parse_args(argv)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        bench = setup(opts)
    except (SetupError, subprocess.CalledProcessError) as e:
        print('scale: %s' % e, file=sys.stderr)
        return 2
    os.makedirs(opts.outdir, exist_ok=True)
    run = Run(bench)
    try:
        run.prepare()
        if opts.preflight_only:
            return 0
        run.measure()
    except SetupError as e:
        print('scale: %s' % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        run.interrupt()
    finally:
        run.clean_up()
    if run.sampler is None:     # interrupted before the clock started
        return 2
    return run.finish()
