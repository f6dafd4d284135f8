# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard.Config: the library's validation as exceptions, types,
immutability.  Nothing runs: no root needed."""

import errno
import os
import unittest

import pyrgtest  # noqa: F401  (sys.path)
import runguard


class ConfigTest(unittest.TestCase):

    def test_package_is_the_built_one(self):
        build = os.environ.get('PYTHONPATH', '').split(os.pathsep)[0]
        if build:
            self.assertTrue(runguard.__file__.startswith(build),
                            runguard.__file__)
        self.assertRegex(runguard.version(), r'^\d+\.\d+\.\d+')

    def assertConfigError(self, regex, **kw):
        kw.setdefault('command', ['/bin/true'])
        with self.assertRaisesRegex(runguard.ConfigError, regex) as cm:
            runguard.Config(kw.pop('command'), **kw)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertIsInstance(cm.exception, OSError)
        return cm.exception

    def test_library_messages(self):
        e = self.assertConfigError(r'invalid wall time limit',
                                   wall_limit=(2, 1))
        self.assertEqual(e.errno, errno.EINVAL)
        self.assertConfigError(r'cpu time limit', cpu_limit=0)
        self.assertConfigError(r'no command specified', command=[])
        self.assertConfigError(r'illegal user', user=0)
        self.assertConfigError(r'CPU 4095 which is not online',
                               cpuset='4095')
        self.assertConfigError(r'kill', kill_grace=-1)
        self.assertConfigError(r'must be "sampled" or "exact"',
                               pool_v2_memory_peak='often')

    def test_names_resolved_here(self):
        self.assertConfigError(r"no user named 'no-such-user-rg'",
                               user='no-such-user-rg')
        self.assertConfigError(r"no group named", group='no-such-group-rg')
        self.assertEqual(runguard.Config(['x'], user=5, group=7).user, 5)

    def test_python_type_errors(self):
        with self.assertRaisesRegex(TypeError, 'memory_limit'):
            runguard.Config(['/bin/true'], memory_limit='1G')
        with self.assertRaisesRegex(TypeError, 'not a string'):
            runguard.Config('/bin/true')
        with self.assertRaisesRegex(TypeError, 'stdin'):
            runguard.Config(['/bin/true'], stdin=1.5)
        with self.assertRaisesRegex(TypeError, 'Config'):
            runguard.run(['/bin/true'])
        with self.assertRaisesRegex(runguard.ConfigError, 'negative'):
            runguard.Config(['/bin/true'], file_limit=-1)

    def test_normalized_values(self):
        cfg = runguard.Config([b'/bin/echo', 'x'], wall_limit=2,
                              cpu_limit=(1, 1.5), cpuset=[0],
                              environment={'A': '1', 'B': None},
                              stdin=os.devnull)
        self.assertEqual(cfg.command, (b'/bin/echo', 'x'))
        self.assertEqual(cfg.wall_limit, (2.0, 2.0))
        self.assertEqual(cfg.cpu_limit, (1.0, 1.5))
        self.assertEqual(cfg.cpuset, '0')
        self.assertEqual(cfg.environment, ('A=1', 'B'))
        self.assertEqual(cfg.stdin, os.devnull)
        self.assertIn("wall_limit=(2.0, 2.0)", repr(cfg))

    def test_immutable_and_replace(self):
        cfg = runguard.Config(['/bin/true'], wall_limit=2)
        with self.assertRaises(AttributeError):
            cfg.wall_limit = (3, 3)
        other = cfg.replace(wall_limit=3, stdout='out')
        self.assertEqual(cfg.wall_limit, (2.0, 2.0))
        self.assertEqual(other.wall_limit, (3.0, 3.0))
        self.assertEqual(other.stdout, 'out')
        self.assertEqual(cfg, cfg.replace())
        self.assertEqual(hash(cfg), hash(cfg.replace()))
        with self.assertRaises(runguard.ConfigError):
            cfg.replace(wall_limit=(3, 1))
        with self.assertRaisesRegex(TypeError, 'unknown'):
            cfg.replace(wal_limit=1)

    def test_file_object_stays_referenced(self):
        with open(os.devnull) as f:
            cfg = runguard.Config(['/bin/true'], stdin=f)
            self.assertIs(cfg.stdin, f)

    def test_exceptions(self):
        self.assertTrue(issubclass(runguard.Error, OSError))
        for cls in (runguard.SetupError, runguard.CleanupError,
                    runguard.Cancelled):
            self.assertTrue(issubclass(cls, runguard.RunError))
            self.assertTrue(issubclass(cls, runguard.Error))
        with self.assertRaises(TypeError):
            runguard.Result()
        self.assertEqual(int(runguard.Outcome.EXEC_FAILED), 1)
        self.assertEqual(runguard.Limit.SOFT | runguard.Limit.HARD, 3)

    def test_pool_errors_without_pool(self):
        with self.assertRaises(runguard.Error) as cm:
            runguard.pool_show('/nonexistent/rg-pool')
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        with self.assertRaisesRegex(runguard.Error,
                                    'pool size must be 1 to 1024'):
            runguard.Pool(0, '/nonexistent/rg-pool')
        with self.assertRaises(TypeError):
            runguard.pool_prewarm('/etc')


if __name__ == '__main__':
    unittest.main()
