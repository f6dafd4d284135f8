# SPDX-License-Identifier: LGPL-2.1-or-later
"""librunguard's messages in Python: a Config's log callback gets the
run's messages up to its level, from the run's thread; a callback that
raises loses nothing of the run; set_log() gets the pool administration's
steps; log_to_logger() feeds the logging module."""

import logging
import sys
import threading
import unittest

import pyrgtest
import runguard

SOFT_WALL = (0.2, 5)


class Collector:
    """A log callback that keeps what it got, with the calling thread."""

    def __init__(self):
        self.got = []

    def __call__(self, level, message):
        self.got.append((level, message, threading.get_ident()))

    def messages(self, level=None):
        return [m for lvl, m, _ in self.got if level is None or lvl == level]


class LogConfigTest(unittest.TestCase):
    """Checks of the log arguments, no run."""

    def test_arguments(self):
        cfg = runguard.Config(['true'], log=print)
        self.assertIs(cfg.log, print)
        self.assertIs(cfg.log_level, runguard.LogLevel.WARNING)
        self.assertIs(cfg.replace(log_level=3).log_level,
                      runguard.LogLevel.DEBUG)
        self.assertEqual(cfg, runguard.Config(['true'], log=print))
        self.assertIn('log=', repr(cfg))
        with self.assertRaisesRegex(TypeError, 'log: expected a callable'):
            runguard.Config(['true'], log=5)
        with self.assertRaisesRegex(runguard.ConfigError, 'not a LogLevel'):
            runguard.Config(['true'], log_level=7)
        with self.assertRaisesRegex(TypeError, 'log_level'):
            runguard.Config(['true'], log_level='debug')
        with self.assertRaisesRegex(TypeError, 'callable'):
            runguard.set_log(5)

    def test_levels_map_to_logging(self):
        self.assertEqual([lvl.logging_level for lvl in runguard.LogLevel],
                         [logging.ERROR, logging.WARNING, logging.INFO,
                          logging.DEBUG])


class LogRunTest(pyrgtest.PrivilegedCase):

    def test_run_messages_reach_the_callback(self):
        """From a thread other than the main one, the run (and so the
        callback) happens in the calling thread."""
        sink = Collector()
        results = []
        caller = threading.Thread(target=lambda: results.append(
            runguard.run(self.config('sleep', 0.5, wall_limit=SOFT_WALL,
                                     log=sink))))
        caller.start()
        caller.join()
        self.assertEqual(results[0].wall_limit, runguard.Limit.SOFT)
        self.assertIn('timelimit exceeded (soft wall time)',
                      sink.messages(runguard.LogLevel.WARNING), sink.got)
        for level, _, thread in sink.got:
            self.assertIs(type(level), runguard.LogLevel)
            self.assertLessEqual(level, runguard.LogLevel.WARNING)
            self.assertEqual(thread, caller.ident)

    def test_level_filters(self):
        sink = Collector()
        runguard.run(self.config('sleep', 0.5, wall_limit=SOFT_WALL,
                                 log=sink,
                                 log_level=runguard.LogLevel.ERROR))
        self.assertEqual(sink.got, [])

    def test_a_raising_callback_loses_nothing(self):
        def broken(level, message):
            raise RuntimeError('sink broke on ' + message)

        seen = []
        old_hook = sys.unraisablehook
        sys.unraisablehook = seen.append
        try:
            res = runguard.run(self.config('sleep', 0.5,
                                           wall_limit=SOFT_WALL, log=broken))
        finally:
            sys.unraisablehook = old_hook
        self.assertEqual(res.exit_code, 0)
        self.assertEqual(res.wall_limit, runguard.Limit.SOFT)
        self.assertTrue(seen)
        self.assertIsInstance(seen[0].exc_value, RuntimeError)

    def test_to_logger(self):
        logger = logging.getLogger('rgtest.runguard')
        with self.assertLogs(logger, logging.WARNING) as cm:
            runguard.run(self.config(
                'sleep', 0.5, wall_limit=SOFT_WALL,
                log=runguard.log_to_logger(logger)))
        self.assertIn('WARNING:rgtest.runguard:timelimit exceeded (soft wall '
                      'time)', cm.output)


class LogPoolTest(pyrgtest.PoolDirCase):

    def tearDown(self):
        try:
            runguard.set_log(None)
        finally:
            super().tearDown()

    def test_admin_steps(self):
        sink = Collector()
        runguard.set_log(sink)
        runguard.pool_create(2, self.pool_dir,
                             cgroup_parent=pyrgtest.CGROUP_PARENT)
        runguard.pool_destroy(self.pool_dir)
        got = sink.messages(runguard.LogLevel.NOTICE)
        self.assertTrue(any(m.startswith('creating the pool') for m in got),
                        got)
        self.assertTrue(any('slot 1' in m for m in got), got)
        self.assertTrue(any(m.startswith('destroying the pool') for m in got),
                        got)
        runguard.set_log(sink, runguard.LogLevel.WARNING)
        before = len(sink.got)
        runguard.pool_create(1, self.pool_dir,
                             cgroup_parent=pyrgtest.CGROUP_PARENT)
        self.assertEqual(len(sink.got), before)

    def test_a_run_waiting_for_a_slot_says_so(self):
        sink = Collector()
        cfg = self.config('sleep', 0.5, log=sink,
                          log_level=runguard.LogLevel.NOTICE)
        with runguard.Pool(1, self.pool_dir,
                           cgroup_parent=pyrgtest.CGROUP_PARENT) as pool:
            threads = [threading.Thread(target=pool.run, args=(cfg,))
                       for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertIn('all 1 slots busy, waiting',
                      sink.messages(runguard.LogLevel.NOTICE), sink.got)


if __name__ == '__main__':
    pyrgtest.rgtest.main()
