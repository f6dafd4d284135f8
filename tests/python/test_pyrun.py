# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard.run(): real programs under real limits, the result's fields,
the outcomes as exceptions, the GIL released, cancelling and Ctrl-C."""

import errno
import io
import os
import signal
import threading
import time

import pyrgtest
import runguard

MIB = 1 << 20


class RunTest(pyrgtest.PrivilegedCase):

    def test_exit_code_streams_and_meta(self):
        out = self.path('out')
        res = runguard.run(self.config('output', 1000, stdout=out))
        self.assertEqual(res.outcome, runguard.Outcome.COMPLETED)
        self.assertIs(type(res.outcome), runguard.Outcome)
        self.assertEqual((res.exit_code, res.term_signal, res.status),
                         (0, 0, 0))
        self.assertEqual(res.stdout_bytes, 1000)
        self.assertEqual(os.path.getsize(out), 1000)
        self.assertFalse(res.stdout_truncated)
        self.assertGreater(res.memory_bytes, 0)
        self.assertIn(res.memory_method, pyrgtest.rgtest.MEMORY_METHODS)
        self.assertFalse(res.pooled)
        self.assertIsNone(res.pool_slot)
        self.assertEqual(res.time_result(), '')
        meta = res.meta(time_used='wall', extra_keys=True)
        self.assertIn('exitcode: 0\n', meta)
        self.assertIn('time-used: wall-time\n', meta)
        self.assertIn('stdout-bytes: 1000\n', meta)
        buf = io.StringIO()
        res.write_meta(buf)
        res.write_meta(self.path('meta'))
        with open(self.path('meta')) as f:
            self.assertEqual(f.read(), buf.getvalue())
        self.assertIn('COMPLETED exit_code=0', repr(res))

        res = runguard.run(self.config('exitcode', 7))
        self.assertEqual(res.exit_code, 7)

    def test_waits(self):
        """Where the wall time went, as the meta file says it."""
        keys = pyrgtest.rgtest.wait_keys()
        if not keys:
            self.skipTest('this host gives no waits')
        res = runguard.run(self.config('sleep', 0.2))
        self.assertGreaterEqual(res.wall_time, 0.2)
        self.assertEqual(res.wall_time_cause, 'program')
        self.assertIsNotNone(res.wait_method)
        self.assertLess(res.wait_cpu_time, 0.1)
        full = 'wait-io-time' in keys
        for wait in (res.wait_io_time, res.wait_memory_time):
            if full:
                self.assertLess(wait, 0.1)
            else:
                self.assertIsNone(wait)
        if 'host-pressure' in keys:
            self.assertEqual(sorted(res.host_pressure),
                             ['cpu', 'io', 'memory'])
            for pct in res.host_pressure.values():
                self.assertTrue(0 <= pct <= 100, res.host_pressure)
        meta = res.meta(extra_keys=True)
        self.assertIn('wall-time-cause: program\n', meta)
        self.assertIn('wait-cpu-time: %.3f\n' % res.wait_cpu_time, meta)

    def test_stdin_path_and_file_object(self):
        with open(self.path('in'), 'w') as f:
            f.write('x' * 123)
        res = runguard.run(self.config('readstdin', stdin=self.path('in'),
                                       stdout=self.path('out')))
        with open(self.path('out')) as f:
            self.assertEqual(f.read().split(), ['read', '123', 'bytes'])
        with open(self.path('in')) as fin, open(self.path('out2'), 'w') as fo:
            res = runguard.run(self.config('readstdin', stdin=fin,
                                           stdout=fo))
        self.assertEqual(res.exit_code, 0)
        with open(self.path('out2')) as f:
            self.assertEqual(f.read().split(), ['read', '123', 'bytes'])

    def test_cpu_time_limit(self):
        res = runguard.run(self.config('spin', 5, cpu_limit=(0.3, 0.6)))
        self.assertEqual(res.outcome, runguard.Outcome.COMPLETED)
        self.assertTrue(res.cpu_limit & runguard.Limit.SOFT, res)
        self.assertIn(res.time_result('cpu'),
                      ('soft-timelimit', 'hard-timelimit'))
        self.assertGreaterEqual(res.cpu_time, 0.3)
        self.assertLess(res.wall_time, 5)

    def test_wall_time_limit(self):
        res = runguard.run(self.config('sleep', 10, wall_limit=(0.3, 0.5)))
        self.assertEqual(res.wall_limit, runguard.Limit.SOFT |
                         runguard.Limit.HARD)
        self.assertEqual(res.time_result('wall'), 'hard-timelimit')
        self.assertEqual(res.received_signal, signal.SIGALRM)
        self.assertIn(res.term_signal, (signal.SIGTERM, signal.SIGKILL))
        self.assertLess(res.wall_time, 3)

    def test_memory_limit(self):
        res = runguard.run(self.config('memhog', 200,
                                       memory_limit=64 * MIB))
        self.assertNotEqual(res.exit_code, 0)
        self.assertTrue(res.oom_killed or res.term_signal, res)
        self.assertGreaterEqual(res.memory_bytes, 60 * MIB)
        self.assertLessEqual(res.memory_bytes, 64 * MIB)

        res = runguard.run(self.config('memhog', 16,
                                       memory_limit=64 * MIB))
        self.assertEqual(res.exit_code, 0)
        self.assertGreaterEqual(res.memory_bytes, 16 * MIB)
        self.assertFalse(res.oom_killed)

    def test_output_limit(self):
        res = runguard.run(self.config('output', 100000, 'both',
                                       stream_limit=1000,
                                       stdout=self.path('out'),
                                       stderr=self.path('err')))
        self.assertEqual(res.stdout_bytes, 100000)
        self.assertTrue(res.stdout_truncated)
        self.assertTrue(res.stderr_truncated)
        self.assertEqual(os.path.getsize(self.path('out')), 1000)
        self.assertIn('output-truncated: stdout,stderr',
                      res.meta(stream_limit_given=True))

    def test_exec_failed_is_a_result(self):
        cfg = self.config('hello', stderr=self.path('err')).replace(
            command=[self.path('no-such-program')])
        res = runguard.run(cfg)
        self.assertEqual(res.outcome, runguard.Outcome.EXEC_FAILED)
        self.assertEqual(res.exec_errno, errno.ENOENT)
        self.assertEqual(res.exit_code, 255)

    def test_error_and_setup_failure_raise(self):
        with self.assertRaises(runguard.Error) as cm:
            runguard.run(self.config('hello', stdin=self.path('missing')))
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertIn("cannot open `%s'" % self.path('missing'),
                      str(cm.exception))
        self.assertNotIsInstance(cm.exception, runguard.RunError)

        # the chroot has no such directory: the child's set-up fails
        cfg = self.config('hello', root=self.chroot,
                          workdir='/no-such-dir').replace(
            command=['/bin/static-hello'])
        with self.assertRaises(runguard.SetupError) as cm:
            runguard.run(cfg)
        self.assertEqual(cm.exception.result.outcome,
                         runguard.Outcome.SETUP_FAILED)
        self.assertEqual(cm.exception.result.exit_code, 255)
        self.assertIn('no-such-dir', str(cm.exception))

    def test_gil_released_while_a_run_waits(self):
        """A Python thread keeps running while the main thread's run
        sleeps, and the other way round."""
        counts = []

        def count(stop):
            n = 0
            while not stop.is_set():
                n += 1
            counts.append(n)

        stop = threading.Event()
        t = threading.Thread(target=count, args=(stop,))
        t.start()
        start = time.monotonic()
        res = runguard.run(self.config('sleep', 1))
        stop.set()
        t.join()
        self.assertEqual(res.exit_code, 0)
        self.assertGreater(time.monotonic() - start, 0.9)
        # a thread that gets the GIL counts millions per second; a
        # thread starved by the run would count (next to) nothing
        self.assertGreater(counts[0], 10000, counts)

        results = []
        t = threading.Thread(target=lambda: results.append(
            runguard.run(self.config('sleep', 1))))
        t.start()
        n = 0
        while t.is_alive():
            n += 1
        t.join()
        self.assertEqual(results[0].exit_code, 0)
        self.assertGreater(n, 10000)

    def test_cancel_all_from_another_thread(self):
        errors = []

        def worker():
            try:
                runguard.run(self.config('sleep', 30, wall_limit=60))
            except runguard.Cancelled as e:
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        start = time.monotonic()
        runguard.cancel_all()
        for t in threads:
            t.join(10)
        self.assertLess(time.monotonic() - start, 5)
        self.assertEqual(len(errors), 3)
        for e in errors:
            self.assertEqual(e.errno, errno.ECANCELED)
            self.assertEqual(e.result.received_signal, signal.SIGTERM)
            self.assertNotEqual(e.result.exit_code, 0)
        # the next run is not cancelled
        self.assertEqual(runguard.run(self.config('exitcode', 3)).exit_code,
                         3)

    def test_keyboard_interrupt_cancels_the_run(self):
        """Ctrl-C while the main thread waits for a run: the run is
        killed and cleaned up (tearDown checks processes and cgroups),
        KeyboardInterrupt propagates at once."""
        main = threading.get_ident()
        # to the main thread (its wait is interrupted at once), and to
        # the process (the kernel may pick another thread)
        for target, kill in (('main', lambda: signal.pthread_kill(
                                  main, signal.SIGINT)),
                             ('process', lambda: os.kill(os.getpid(),
                                                         signal.SIGINT))):
            timer = threading.Timer(0.5, kill)
            timer.start()
            start = time.monotonic()
            with self.assertRaises(KeyboardInterrupt):
                runguard.run(self.config('sleep', 30, wall_limit=60))
            timer.join()
            self.assertLess(time.monotonic() - start, 5, target)


if __name__ == '__main__':
    pyrgtest.rgtest.main()
