# SPDX-License-Identifier: LGPL-2.1-or-later
"""chroot (-r/-d) and the exact DOMjudge invocations of spec §4.4."""

import os
import shutil

from rgtest import (CALLER_ENV, RGTestCase, RUN_GROUP, RUN_USER, RUNGUARD,
                    PROGRAMS, expected_meta_keys, main,
                    run_redirected)


class ChrootTest(RGTestCase):

    def test_chroot_default_cwd_is_root(self):
        res = self.rg('-r', self.chroot, '/bin/static-hello')
        self.assertRun(res)
        self.assertEqual(res.stdout, 'hello from static\ncwd: /\nuid: %d gid: %d\n'
                         % (self.uid, self.gid))

    def test_chroot_with_chdir(self):
        for d in ('/work', 'work', '/work/'):
            with self.subTest(d=d):
                res = self.rg('-r', self.chroot, '-d', d, '/bin/static-hello')
                self.assertRun(res)
                self.assertIn('cwd: /work\n', res.stdout)

    def test_chroot_relative_command_resolved_in_chroot(self):
        res = self.rg('-r', self.chroot, '-d', '/bin', './static-hello')
        self.assertRun(res)
        self.assertIn('cwd: /bin\n', res.stdout)

    def test_chroot_path_search_inside_root(self):
        env = {'PATH': '/bin'}
        res = self.rg('-r', self.chroot, 'static-hello', env=env)
        self.assertRun(res)
        self.assertIn('hello from static\n', res.stdout)

    def test_chroot_root_relative_to_cwd(self):
        parent = os.path.dirname(self.chroot)
        res = self.rg('-r', os.path.basename(self.chroot) + '/', '-d', 'work',
                      '/bin/static-hello', cwd=parent)
        self.assertRun(res)
        self.assertIn('cwd: /work\n', res.stdout)

    def test_chroot_root_with_dotdot(self):
        res = self.rg('-r', os.path.join(self.chroot, 'work', '..', ''),
                      '/bin/static-hello')
        self.assertRun(res)
        self.assertIn('cwd: /\n', res.stdout)

    def test_chdir_ignored_without_root(self):
        res = self.rg('-d', '/work', self.prog('probe'))
        self.assertRun(res)
        self.assertIn('cwd: %s\n' % self.tdir, res.stdout)

    def test_chroot_outside_prefix_is_internal_error(self):
        os.mkdir(self.path('bin'))
        shutil.copy(os.path.join(PROGRAMS, 'static-hello'),
                    self.path('bin', 'static-hello'))
        res = self.rg('-r', self.tdir, '/bin/static-hello')
        self.assertEqual(res.rc, 255, res.describe())
        self.assertMeta(res, internal_error=True, measured=False)
        self.assertEqual(res.i('exitcode'), 255)
        self.assertIn('must be within', res.m['internal-error'])
        self.assertNotIn('hello from static', res.stdout)

    def test_chroot_symlink_escape_rejected(self):
        link = os.path.join(self.chroot, 'escape')
        os.symlink(self.tdir, link)
        self.addCleanup(os.unlink, link)
        os.mkdir(self.path('bin'))
        shutil.copy(os.path.join(PROGRAMS, 'static-hello'),
                    self.path('bin', 'static-hello'))
        res = self.rg('-r', link, '/bin/static-hello')
        self.assertEqual(res.rc, 255, res.describe())
        self.assertMeta(res, internal_error=True, measured=False)
        self.assertNotIn('hello from static', res.stdout)

    def test_chroot_nonexistent_root(self):
        res = self.rg('-r', os.path.join(self.chroot, 'nonexistent'),
                      '/bin/static-hello')
        self.assertEqual(res.rc, 255, res.describe())
        self.assertMeta(res, internal_error=True, measured=False)

    def test_chroot_bad_chdir_is_internal_error(self):
        res = self.rg('-r', self.chroot, '-d', '/nonexistent',
                      '/bin/static-hello')
        self.assertEqual(res.rc, 255, res.describe())
        self.assertMeta(res, internal_error=True, measured=False)
        self.assertIn('cannot chdir', res.m['internal-error'])
        self.assertNotIn('hello from static', res.stdout)

    def test_chroot_missing_command_is_exec_failure(self):
        res = self.rg('-r', self.chroot, '-e', 'err', '/bin/nonexistent')
        self.assertRun(res, exitcode=255)
        with open(self.path('err')) as f:
            self.assertIn('cannot start', f.read())


class DomjudgeInvocationTest(RGTestCase):
    """spec §4.4 A (test case run), B (compare), C (compile), D (build)."""

    def run_shell(self, argv, cwd, stdin=None, stdout=None, stderr=None,
                  meta_path=None, timeout=60):
        """Run argv with the given redirections (paths; None = /dev/null)."""
        return run_redirected(argv, cwd, dict(CALLER_ENV), stdin, stdout,
                              stderr, meta_path, timeout)

    def make_testcase(self, input_data):
        return self.make_testcase_dir('job-A', 'static-hello', input_data)

    def run_testcase(self, passdir, output_limit_kb, extra_front=()):
        prefix = '/testcase00001/1'
        rg_args = list(extra_front) + [
            '-r', passdir + '/../../',
            '--nproc=64',
            '--no-core',
            '--streamsize=%d' % output_limit_kb,
            '--user=' + RUN_USER, '--group=' + RUN_GROUP,
            '--walltime=2:3.5',
            '--cputime=1:1.5',
            '--memsize=524288',
            '--filesize=%d' % output_limit_kb,
            '--stderr=program.err',
            '--outmeta=program.meta',
            '--',
            prefix + '/execdir/program',
        ]
        # The default run script: exec "$@" < testdata.in > program.out
        argv = ['/bin/sh', '-c', 'exec "$@" < testdata.in > program.out',
                'run', RUNGUARD] + rg_args
        return self.run_shell(argv, cwd=passdir, stdin=None, stdout=None,
                              stderr='runguard.err',
                              meta_path=os.path.join(passdir, 'program.meta'))

    def read(self, *parts):
        with open(os.path.join(*parts), 'rb') as f:
            return f.read()

    def test_a_testcase_run(self):
        data = b''.join(b'%d\n' % i for i in range(2000))
        passdir = self.make_testcase(data)
        res = self.run_testcase(passdir, 8192)
        self.assertEqual(res.keys, expected_meta_keys(truncated=True),
                         res.describe())
        self.assertRun(res, truncated=True)
        self.assertEqual(res.m['time-used'], 'cpu-time')
        self.assertEqual(res.m['output-truncated'], '')
        self.assertEqual(res.i('stdout-bytes'), len(data))
        self.assertEqual(self.read(passdir, 'program.out'), data)
        self.assertEqual(self.read(passdir, 'program.err'), b'cwd: /\n')
        self.assertLess(res.f('cpu-time'), 1)

    def test_a_testcase_run_with_optional_options(self):
        data = b'42\n'
        passdir = self.make_testcase(data)
        res = self.run_testcase(passdir, 8192, extra_front=[
            '-V', 'TMPDIR=/testcase00001/1/write_tmp', '-v', '-V', 'DEBUG=1',
            '-P', '0'])
        self.assertRun(res, truncated=True)
        self.assertEqual(res.m['time-used'], 'cpu-time')
        self.assertEqual(self.read(passdir, 'program.out'), data)

    def test_a_testcase_output_limit(self):
        data = b'x' * 99999 + b'\n'
        passdir = self.make_testcase(data)
        res = self.run_testcase(passdir, 64)
        self.assertRun(res, truncated=True)
        self.assertEqual(res.m['output-truncated'], 'stdout')
        self.assertEqual(res.i('stdout-bytes'), len(data))
        self.assertEqual(self.read(passdir, 'program.out'), data[:65536])

    def make_compare_dir(self, team, answer):
        for name, content in (('program.out', team), ('testdata.out', answer),
                              ('testdata.in', b'1 2\n')):
            with open(self.path(name), 'wb') as f:
                f.write(content)
        os.mkdir(self.path('feedback'))
        os.chmod(self.path('feedback'), 0o777)

    def run_compare(self):
        argv = [RUNGUARD, '--user=' + RUN_USER, '--group=' + RUN_GROUP,
                '-m', '2097152', '-t', '30', '-f', '2621440', '-s', '2621440',
                '--no-core', '-M', 'compare.meta', '--', self.prog('compare'),
                'testdata.in', 'testdata.out', 'feedback/']
        return self.run_shell(argv, cwd=self.tdir, stdin='program.out',
                              stdout='compare.tmp', stderr='compare.err',
                              meta_path=self.path('compare.meta'))

    def test_b_compare_correct(self):
        self.make_compare_dir(b'3\n', b'3\n')
        res = self.run_compare()
        self.assertEqual(res.rc, 42, res.describe())
        self.assertRun(res, exitcode=42, truncated=True)
        self.assertEqual(res.m['time-used'], 'wall-time')
        self.assertEqual(self.read(self.tdir, 'feedback', 'judgemessage.txt'),
                         b'correct\n')
        self.assertEqual(self.read(self.tdir, 'compare.tmp'),
                         b'compared 2 bytes of team output\n')

    def test_b_compare_wrong(self):
        self.make_compare_dir(b'4\n', b'3\n')
        res = self.run_compare()
        self.assertEqual(res.rc, 43, res.describe())
        self.assertRun(res, exitcode=43, truncated=True)
        self.assertEqual(self.read(self.tdir, 'feedback', 'judgemessage.txt'),
                         b'wrong answer\n')

    def test_c_compile(self):
        work, argv = self.make_compile_job('job-C')
        compile_dir = os.path.join(work, 'compile')
        res = self.run_shell(['/bin/sh', '-c', '"$@" > "%s/compile.tmp" 2>&1'
                              % work, 'compile'] + argv,
                             cwd=compile_dir,
                             meta_path=os.path.join(work, 'compile.meta'))
        self.assertEqual(res.rc, 0, res.describe())
        self.assertRun(res, truncated=True)
        self.assertEqual(res.m['time-used'], 'wall-time')
        self.assertEqual(res.m['output-truncated'], '')
        out = self.read(work, 'compile.tmp').decode()
        self.assertIn('compiled program\n', out)
        self.assertIn('ENTRY_POINT=main\n', out)
        self.assertIn('cwd: /compile\n', out)
        self.assertIn('compiler warning: none\n', out)
        program = os.path.join(compile_dir, 'program')
        self.assertEqual(self.read(program),
                         self.read(compile_dir, 'main.c'))
        self.assertEqual(os.stat(program).st_uid, self.uid)

    def test_d_build_executable(self):
        execdir = self.job_dir('job-D')
        os.mkdir(os.path.join(execdir, 'build'), 0o755)
        shutil.copy(os.path.join(PROGRAMS, 'static-hello'),
                    os.path.join(execdir, 'build', 'build'))
        argv = [RUNGUARD, '-u', RUN_USER, '-g', RUN_GROUP, '-r', execdir,
                '-d', '/build', '-m', '2097152', '-t', '30', '--no-core',
                '-f', '65536', '-s', '65536', '--', './build']
        res = self.run_shell(argv, cwd=execdir, stdout='build.log',
                             stderr='build.log.err')
        self.assertEqual(res.rc, 0, res.describe())
        self.assertIn(b'cwd: /build\n', self.read(execdir, 'build.log'))


if __name__ == '__main__':
    main()
