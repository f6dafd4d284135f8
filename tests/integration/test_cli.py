# SPDX-License-Identifier: LGPL-2.1-or-later
"""Command line: help/version, option errors, user checks (spec §1, §2.3)."""


import os
import struct
import time

from rgtest import RGTestCase, RUN_USER, RUN_GROUP, main
from test_pool import PoolTestCase, parse_kv


class CliTest(RGTestCase):

    def test_help(self):
        res = self.run_raw(['--help'])
        self.assertEqual(res.rc, 0, res.describe())
        self.assertRegex(res.stdout, r'\AUsage: \S*runguard \[OPTION\]\.\.\. '
                         r'COMMAND\.\.\.')
        for opt in ('--root', '--user', '--group', '--chdir', '--walltime',
                    '--cputime', '--memsize', '--filesize', '--nproc',
                    '--cpuset', '--no-core', '--stdout', '--stderr',
                    '--streamsize', '--environment', '--variable',
                    '--outmeta', '--runpipepid', '--verbose', '--quiet',
                    '--help', '--version', '--seccomp', '--allow-core-dumps',
                    '--pool-size', '--pool-dir', '--pool-create',
                    '--pool-show', '--pool-destroy[=force|wait]',
                    '--pool-prewarm'):
            self.assertIn(opt, res.stdout)
        # sudo strips RUNGUARD_POOL_*: DOMjudge's runs need the file
        self.assertIn('sudo strips the environment', res.stdout)
        self.assertIn('/etc/runguard.conf is the way to configure a pool',
                      res.stdout.replace('\n', ' '))

    def test_version(self):
        res = self.run_raw(['--version'])
        self.assertEqual(res.rc, 0, res.describe())
        self.assertIn('runguard', res.stdout)

    def test_help_wins_over_version(self):
        res = self.run_raw(['--version', '--help'])
        self.assertEqual(res.rc, 0, res.describe())
        self.assertIn('Usage:', res.stdout)

    def test_help_is_acted_on_after_option_errors(self):
        # A fatal option error comes first (spec §1.1).
        res = self.run_raw(['--help', '-m', 'abc'])
        self.assertEqual(res.rc, 255, res.describe())
        self.assertNotIn('Usage:', res.stdout)

    def test_help_with_meta_writes_no_meta(self):
        meta = self.path('meta')
        res = self.run_raw(['-M', meta, '--help'], meta_path=meta)
        self.assertEqual(res.rc, 0, res.describe())
        self.assertNoMeta(res)

    def test_invalid_options(self):
        hello = self.prog('hello')
        cases = {
            'unknown long option': (['--bogus-option', hello],
                                    'unknown option or missing argument'),
            'unknown short option': (['-Z', hello],
                                     'unknown option or missing argument'),
            'missing argument': (['-t'], 'unknown option or missing argument'),
            'zero time': (['-t', '0', hello], None),
            'negative time': (['-t', '-1', hello], None),
            'hard below soft': (['-t', '2:1', hello], None),
            'empty hard': (['-t', '1:', hello], None),
            'junk time': (['-t', '1x', hello], None),
            'bad cputime': (['-C', 'abc', hello], None),
            'non-numeric memsize': (['-m', 'abc', hello], None),
            'zero memsize': (['-m', '0', hello], None),
            'negative filesize': (['-f', '-5', hello], None),
            'bad nproc': (['-p', '10x', hello], None),
            'negative streamsize': (['-s', '-1', hello], None),
            'no command': ([], 'no command specified'),
        }
        for name, (args, message) in cases.items():
            with self.subTest(name):
                meta = self.path('meta-' + name.replace(' ', '-'))
                argv = self.user_opts() + ['-M', meta] + args
                res = self.run_raw(argv, meta_path=meta)
                self.assertEqual(res.rc, 255, res.describe())
                self.assertNotEqual(res.stderr.strip(), '', res.describe())
                if message:
                    self.assertIn(message, res.stderr, res.describe())
                # The command must not have run, and no meta file exists.
                self.assertNotIn('hello stdout', res.stdout, res.describe())
                self.assertNoMeta(res)

    def test_illegal_user_root(self):
        for user in ('root', '0'):
            with self.subTest(user=user):
                res = self.rg('-u', user, '-g', RUN_GROUP, self.prog('hello'),
                              user=False)
                self.assertEqual(res.rc, 255, res.describe())
                self.assertIn('illegal user specified', res.stderr,
                              res.describe())
                self.assertNotIn('hello stdout', res.stdout)
                if res.meta is not None:
                    self.assertIn('internal-error', res.keys, res.describe())

    def test_user_not_in_valid_users(self):
        # "nobody" exists but does not match VALID_USERS.
        res = self.rg('-u', 'nobody', '-g', RUN_GROUP, self.prog('hello'),
                      user=False)
        self.assertEqual(res.rc, 255, res.describe())
        self.assertIn('illegal user specified', res.stderr, res.describe())
        self.assertNotIn('hello stdout', res.stdout)

    def test_unknown_user(self):
        res = self.rg('-u', RUN_USER + '-nosuchuser', '-g', RUN_GROUP,
                      self.prog('hello'), user=False)
        self.assertEqual(res.rc, 255, res.describe())
        self.assertIn('invalid username or ID specified', res.stderr,
                      res.describe())
        self.assertNotIn('hello stdout', res.stdout)

    def test_numeric_uid_of_glob_user_rejected(self):
        # spec §1.2: the uid of RUNUSER-N does not match "RUNUSER-*".
        res = self.rg('-u', str(self.uid), '-g', str(self.gid),
                      self.prog('hello'), user=False)
        self.assertEqual(res.rc, 255, res.describe())
        self.assertIn('illegal user specified', res.stderr, res.describe())
        self.assertNotIn('hello stdout', res.stdout)

    def test_unknown_group(self):
        res = self.rg('-u', RUN_USER, '-g', 'rgtest-nosuchgroup',
                      self.prog('hello'), user=False)
        self.assertEqual(res.rc, 255, res.describe())
        self.assertNotIn('hello stdout', res.stdout)

    def test_group_defaults_to_user_name(self):
        res = self.rg('-u', RUN_USER, self.prog('probe'), user=False)
        self.assertRun(res)
        self.assertIn('gid: %d %d %d\n' % ((self.gid,) * 3), res.stdout)

    def test_no_user_as_root_is_internal_error(self):
        res = self.rg(self.prog('hello'), user=False)
        self.assertEqual(res.rc, 255, res.describe())
        self.assertIn('root privileges not dropped', res.stderr,
                      res.describe())
        self.assertMeta(res, internal_error=True)
        self.assertIn('root privileges not dropped', res.m['internal-error'])
        self.assertEqual(res.i('exitcode'), 255)
        self.assertNotIn('hello stdout', res.stdout)

    def test_exec_failure(self):
        res = self.rg('-e', 'err.txt', self.path('no-such-program'))
        self.assertRun(res, exitcode=255)
        with open(self.path('err.txt')) as f:
            err = f.read()
        self.assertIn("cannot start `%s'" % self.path('no-such-program'), err,
                      res.describe())
        self.assertEqual(res.i('stderr-bytes'), len(err.encode()))

    def test_command_not_on_path(self):
        # execvp with the reduced PATH: a bare unknown name cannot start.
        res = self.rg('-e', 'err.txt', 'rgtest-no-such-command')
        self.assertRun(res, exitcode=255)
        with open(self.path('err.txt')) as f:
            self.assertIn('cannot start', f.read())

    def test_command_found_on_path(self):
        res = self.rg('true')
        self.assertRun(res, exitcode=0)
        res = self.rg('false')
        self.assertRun(res, exitcode=1)

    def test_options_stop_at_command(self):
        for with_dashdash in (False, True):
            with self.subTest(with_dashdash=with_dashdash):
                args = ['--'] if with_dashdash else []
                args += [self.prog('printargs'), '-t', '0', '--help', '--',
                         '-M', 'x']
                res = self.rg(*args)
                self.assertRun(res)
                self.assertEqual(res.stdout.splitlines(), [
                    'argc=7',
                    'argv[0]=' + self.prog('printargs'),
                    'argv[1]=-t', 'argv[2]=0', 'argv[3]=--help',
                    'argv[4]=--', 'argv[5]=-M', 'argv[6]=x'])

    def test_long_option_prefixes_and_attached_arguments(self):
        res = self.rg('--wall=5', '--mem=262144', '-C5', '-cq',
                      '--nproc', '64', '--stream=100', '--cput', '5:6',
                      self.prog('hello'))
        self.assertRun(res, truncated=True)
        self.assertEqual(res.m['time-used'], 'cpu-time')
        self.assertEqual(res.stdout, 'hello stdout\n')

    def test_repeated_option_last_wins(self):
        res = self.rg('-t', '0.1', '-t', '5', self.prog('sleep'), '0.4')
        self.assertRun(res)
        self.assertEqual(res.m['time-used'], 'wall-time')

    def test_time_formats(self):
        # strtod syntax: exponents, hex floats, leading blanks and '+'.
        res = self.rg('-t', '5e-1:0x1p0', self.prog('sleep'), '10')
        self.assertMeta(res, signal=True)
        self.assertEqual(res.m['time-result'], 'hard-timelimit')
        self.assertLess(res.f('wall-time'), 2.5, res.describe())
        for spec in (' +2', '2', '1.5:2', '2:2', '0x10'):
            with self.subTest(spec=spec):
                res = self.rg('-t', spec, '-C', spec, self.prog('hello'))
                self.assertRun(res)

    def test_huge_sizes_accepted(self):
        big = '9223372036854775807'
        res = self.rg('-m', big, '-f', big, '-s', big, self.prog('hello'))
        self.assertRun(res, truncated=True)
        self.assertEqual(res.stdout, 'hello stdout\n')

    def test_rlimit_eperm_is_only_a_warning(self):
        # spec §3.2: an rlimit that cannot be set with EPERM (e.g. raising a
        # hard limit without CAP_SYS_RESOURCE) is a warning, not fatal.
        res = self.rg('-p', '9223372036854775807', self.prog('hello'))
        self.assertRun(res)
        self.assertEqual(res.stdout, 'hello stdout\n')

    def test_cpuset_syntax(self):
        for spec in ('0', '0-0', '0,0'):
            with self.subTest(spec=spec):
                res = self.rg('-P', spec, self.prog('hello'))
                self.assertRun(res)
        for spec in ('0x', 'abc', '1-0-', '-1'):
            with self.subTest(spec=spec):
                res = self.rg('-P', spec, self.prog('hello'))
                self.assertEqual(res.rc, 255, res.describe())
                self.assertNotIn('hello stdout', res.stdout)

    def test_verbose_and_quiet_accepted(self):
        for opt in ('-v', '-q', '--verbose', '--quiet'):
            with self.subTest(opt=opt):
                res = self.rg(opt, self.prog('hello'))
                self.assertRun(res)
                self.assertEqual(res.stdout, 'hello stdout\n')


class PooledCliTest(PoolTestCase):
    """What is valid without the pool is valid with it."""

    pool_size = 1

    def test_long_cpuset_list(self):
        # Over the 71 characters the slot record shows; two lists with the
        # same beginning that name different CPUs, in the same slot.
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.skipTest('needs two CPUs')
        a, b = cpus[:2]
        head = ','.join([str(a)] * 40)
        for i, (tail, expect) in enumerate([
                (str(a), str(a)), (str(b), '%d,%d' % (a, b)),
                (str(a), str(a))]):
            with self.subTest(step=i, tail=tail):
                r = self.prg('-P', head + ',' + tail, '-t', '20',
                             self.probe, 'ns', meta='meta%d' % i)
                self.assertPoolMeta(r, slots=(0,))
                self.assertNotIn('internal-error', r.stderr)
                self.assertIn(parse_kv(r.stdout).get('cpus'),
                              (expect, expect.replace(',', '-')),
                              r.describe())
        r = self.admin('--pool-show')
        self.assertEqual(r.rc, 0, r.describe())
        row = r.stdout.splitlines()[2].split()
        self.assertEqual(row[-1], (head + ',' + str(a))[:68] + '...',
                         r.stdout)

    def test_table_of_the_old_layout_is_not_trusted(self):
        # The slot record grew (the CPUs of -P): a slots.table written by
        # an older runguard ("RGS1" records, 112 bytes) must not be read as
        # settings in force. Here its record says "no memory limit" while
        # the slot's cgroup still has the 64 MiB of the last run.
        r = self.prg('-m', '65536', self.prog('hello'), meta='meta-limited')
        self.assertPoolMeta(r, slots=(0,))
        old = struct.pack('<IIiIQqQ72s', 0x31534752, 1, 0, 0x3, 1,
                          int(time.time()), (1 << 64) - 1, b'')
        with open(os.path.join(self.pool, 'slots.table'), 'r+b') as f:
            f.write(old * 3)
        r = self.prg('-t', '20', self.prog('memhog'), '100',
                     meta='meta-unlimited')
        self.assertPoolMeta(r, slots=(0,))
        self.assertIn('allocated 100 MiB', r.stdout, r.describe())

    def test_memory_limit_below_setup(self):
        # -m 1 kills the child during its set-up: a run, pooled as not.
        for i in range(2):
            r = self.prg('-m', '1', self.prog('hello'), meta='meta%d' % i)
            self.assertPoolMeta(r, exitcode=137, slots=(0,), window=False)
            self.assertEqual(r.stdout, '', r.describe())
        r = self.prg(self.prog('hello'), meta='meta-after')
        self.assertPoolMeta(r, slots=(0,))
        self.assertEqual(r.stdout, 'hello stdout\n', r.describe())


if __name__ == '__main__':
    main()
