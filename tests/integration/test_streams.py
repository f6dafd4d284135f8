# SPDX-License-Identifier: LGPL-2.1-or-later
"""stdout/stderr forwarding, -o/-e files, -s truncation, stdin, environment."""

import os
import signal
import stat
import subprocess
import threading

from rgtest import CALLER_PATH, RGTestCase, main


def pattern(n):
    """The bytes the 'output' program writes (see tests/programs/output.c)."""
    return bytes(10 if i % 64 == 63 else 97 + i % 26 for i in range(n))


# a command's view of its fd 0: closed, or open (and writable?)
STDIN_PROBE = "(echo 'exitcode: 0' >&0) 2>/dev/null && echo fd0-writable; [ -e /proc/self/fd/0 ] && echo fd0-open || echo fd0-closed"


class StreamTest(RGTestCase):

    def read(self, name):
        with open(self.path(name), 'rb') as f:
            return f.read()

    def test_closed_stdin_stays_closed(self):
        """runguard started with fd 0 closed: the command starts with fd 0
        closed too. Before, the meta file took number 0 and the command
        got it as its stdin: it could write lines into the meta file."""
        res = self.rg('/bin/sh', '-c', STDIN_PROBE,
                      preexec_fn=lambda: os.close(0))
        self.assertRun(res)
        self.assertEqual(res.stdout, 'fd0-closed\n', res.describe())
        self.assertEqual(res.meta_text.count('exitcode:'), 1, res.describe())

    def test_forward_to_runguard_streams(self):
        res = self.rg(self.prog('hello'))
        self.assertRun(res)
        self.assertEqual(res.stdout, 'hello stdout\n')
        self.assertIn('hello stderr\n', res.stderr)
        self.assertNotIn('hello stderr', res.stdout)

    def test_output_files_created_0600_relative_to_cwd(self):
        res = self.rg('-o', 'out.txt', '-e', 'err.txt', self.prog('hello'))
        self.assertRun(res)
        self.assertEqual(self.read('out.txt'), b'hello stdout\n')
        self.assertEqual(self.read('err.txt'), b'hello stderr\n')
        for name in ('out.txt', 'err.txt'):
            st = os.stat(self.path(name))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o600, name)
        self.assertEqual(res.out, b'')
        self.assertNotIn('hello', res.stderr)

    def test_long_output_options(self):
        res = self.rg('--stdout=o', '--stderr', 'e', self.prog('hello'))
        self.assertRun(res)
        self.assertEqual(self.read('o'), b'hello stdout\n')
        self.assertEqual(self.read('e'), b'hello stderr\n')

    def test_existing_output_file_truncated(self):
        for name in ('out.txt', 'err.txt'):
            with open(self.path(name), 'wb') as f:
                f.write(b'x' * 100000)
            os.chmod(self.path(name), 0o644)
            os.chown(self.path(name), 65534, 65534)
        res = self.rg('-o', 'out.txt', '-e', 'err.txt', self.prog('hello'))
        self.assertRun(res)
        self.assertEqual(self.read('out.txt'), b'hello stdout\n')
        self.assertEqual(self.read('err.txt'), b'hello stderr\n')
        # creat() on an existing file keeps its owner (judge scripts rely on
        # pre-created files keeping the judgedaemon's ownership).
        self.assertEqual(os.stat(self.path('out.txt')).st_uid, 65534)

    def test_streamsize_stdout(self):
        res = self.rg('-s', '10', '-o', 'out', self.prog('output'), '100000')
        self.assertRun(res, exitcode=0, truncated=True)
        self.assertEqual(self.read('out'), pattern(10240))
        self.assertEqual(res.i('stdout-bytes'), 100000)
        self.assertEqual(res.i('stderr-bytes'), 0)
        self.assertEqual(res.m['output-truncated'], 'stdout')

    def test_streamsize_stderr(self):
        res = self.rg('-s', '10', '-e', 'err', self.prog('output'), '100000',
                      'stderr')
        self.assertRun(res, exitcode=0, truncated=True)
        self.assertEqual(self.read('err'), pattern(10240))
        self.assertEqual(res.i('stderr-bytes'), 100000)
        self.assertEqual(res.i('stdout-bytes'), 0)
        self.assertEqual(res.m['output-truncated'], 'stderr')

    def test_streamsize_counted_per_stream(self):
        res = self.rg('-s', '10', '-o', 'out', '-e', 'err',
                      self.prog('output'), '100000', 'both')
        self.assertRun(res, exitcode=0, truncated=True)
        self.assertEqual(self.read('out'), pattern(10240))
        self.assertEqual(self.read('err'), pattern(10240))
        self.assertEqual(res.i('stdout-bytes'), 100000)
        self.assertEqual(res.i('stderr-bytes'), 100000)
        self.assertEqual(res.m['output-truncated'], 'stdout,stderr')

    def test_streamsize_only_one_stream_over(self):
        res = self.rg('-s', '10', '-o', 'out', '-e', 'err', '/bin/sh', '-c',
                      '%s 100000 stdout; %s 500 stderr' % (
                          self.prog('output'), self.prog('output')))
        self.assertRun(res, exitcode=0, truncated=True)
        self.assertEqual(res.m['output-truncated'], 'stdout')
        self.assertEqual(self.read('err'), pattern(500))

    def test_streamsize_zero(self):
        res = self.rg('-s', '0', '-o', 'out', '-e', 'err', self.prog('hello'))
        self.assertRun(res, exitcode=0, truncated=True)
        self.assertEqual(self.read('out'), b'')
        self.assertEqual(self.read('err'), b'')
        self.assertEqual(res.i('stdout-bytes'), 13)
        self.assertEqual(res.m['output-truncated'], 'stdout,stderr')

    def test_streamsize_exact_fit_is_not_truncated(self):
        res = self.rg('-s', '10', '-o', 'out', self.prog('output'), '10240')
        self.assertRun(res, exitcode=0, truncated=True)
        self.assertEqual(res.m['output-truncated'], '')
        self.assertEqual(self.read('out'), pattern(10240))

    def test_no_streamsize_no_truncation(self):
        res = self.rg('-o', 'out', '-e', 'err', self.prog('output'),
                      '3000000', 'both')
        self.assertRun(res, exitcode=0)
        self.assertEqual(self.read('out'), pattern(3000000))
        self.assertEqual(self.read('err'), pattern(3000000))
        self.assertEqual(res.i('stdout-bytes'), 3000000)
        self.assertEqual(res.i('stderr-bytes'), 3000000)

    def test_large_output_to_runguard_stdout(self):
        res = self.rg(self.prog('output'), '1000000')
        self.assertRun(res)
        self.assertEqual(res.out, pattern(1000000))

    def test_runguard_stdout_in_append_mode(self):
        # splice() refuses O_APPEND destinations; forwarding must still work.
        with open(self.path('appended'), 'wb') as f:
            f.write(b'before\n')
        with open(self.path('appended'), 'ab') as out:
            res = self.run_raw(self.user_opts() + ['-M', self.path('meta'),
                                                   self.prog('output'),
                                                   '200000'],
                               meta_path=self.path('meta'),
                               stdout=out)
        self.assertRun(res)
        self.assertEqual(self.read('appended'), b'before\n' + pattern(200000))

    def test_runguard_stdout_devnull(self):
        res = self.run_raw(self.user_opts() + ['-M', self.path('meta'),
                                               self.prog('output'), '1000000',
                                               'both'],
                           meta_path=self.path('meta'),
                           stdout=subprocess.DEVNULL)
        self.assertRun(res)
        self.assertEqual(res.i('stdout-bytes'), 1000000)
        self.assertEqual(res.i('stderr-bytes'), 1000000)

    def test_runguard_stdout_is_a_tty(self):
        master, slave = os.openpty()
        chunks = []

        def reader():
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    return
                if not data:
                    return
                chunks.append(data)
        t = threading.Thread(target=reader, daemon=True)
        t.start()
        try:
            res = self.run_raw(self.user_opts() + ['-M', self.path('meta'),
                                                   self.prog('output'),
                                                   '20000'],
                               meta_path=self.path('meta'), stdout=slave)
        finally:
            os.close(slave)
        t.join(5)
        os.close(master)
        self.assertRun(res)
        self.assertEqual(res.i('stdout-bytes'), 20000)
        got = b''.join(chunks).replace(b'\r\n', b'\n')
        self.assertEqual(got, pattern(20000))

    def test_runguard_stdout_reader_gone(self):
        # Like runpipe: SIGPIPE ignored and the reader of runguard's stdout
        # has gone away.  runguard must still finish and write the meta file.
        r, w = os.pipe()
        os.close(r)

        def ignore_sigpipe():
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        try:
            res = self.run_raw(self.user_opts() + ['-M', self.path('meta'),
                                                   '-t', '10:12',
                                                   self.prog('output'),
                                                   '200000'],
                               meta_path=self.path('meta'), stdout=w,
                               preexec_fn=ignore_sigpipe, timeout=30)
        finally:
            os.close(w)
        self.assertMeta(res)
        self.assertEqual(res.m['time-result'], '', res.describe())

    def test_program_closing_its_streams_keeps_running(self):
        res = self.rg('/bin/sh', '-c',
                      'echo early; exec >&- 2>&-; %s 0.5; exit 7'
                      % self.prog('sleep'))
        self.assertRun(res, exitcode=7)
        self.assertEqual(res.stdout, 'early\n')
        self.assertGreaterEqual(res.f('wall-time'), 0.45, res.describe())

    def test_escapee_flooding_output_does_not_block(self):
        # A setsid()ed grandchild keeps writing after the main child exited:
        # runguard must not wait for it (bounded by timeout(1) anyway).
        # 2 s for yes to fill the 1 MiB limit: in the kernel lab under a
        # loaded host 0.3 s was not always enough (6.12: nothing truncated).
        res = self.rg('-s', '1024', '-o', 'out', '/bin/sh', '-c',
                      'setsid timeout 20 yes & sleep 2; exit 0',
                      timeout=40)
        self.assertRun(res, exitcode=0, truncated=True)
        self.assertLess(res.elapsed, 10, res.describe())
        self.assertEqual(res.m['output-truncated'], 'stdout')
        self.assertEqual(os.path.getsize(self.path('out')), 1024 * 1024)

    def test_unwritable_output_file(self):
        res = self.rg('-o', '/nonexistent-rgtest/out', self.prog('hello'))
        self.assertEqual(res.rc, 255, res.describe())
        self.assertNotIn('hello stdout', res.stdout)
        if res.meta is not None:
            self.assertIn('internal-error', res.keys, res.describe())

    def test_stdin_passed_through(self):
        data = os.urandom(12345)
        with open(self.path('in'), 'wb') as f:
            f.write(data)
        with open(self.path('in'), 'rb') as stdin:
            res = self.rg(self.prog('readstdin'), stdin=stdin)
        self.assertRun(res)
        self.assertEqual(res.stdout, 'read 12345 bytes\n')
        self.assertEqual(res.m['stdin-bytes'], '0')


class EnvironmentTest(RGTestCase):

    def env_of(self, res):
        self.assertRun(res)
        return res.stdout.splitlines()

    def test_environment_reset_keeps_only_path(self):
        env = self.env_of(self.rg(self.prog('envdump')))
        self.assertEqual(env, ['PATH=' + CALLER_PATH])

    def test_no_path_when_caller_has_none(self):
        res = self.rg(self.prog('envdump'), env={'RG_MARKER': 'x'})
        self.assertEqual(self.env_of(res), [])

    def test_variables_accumulate(self):
        env = self.env_of(self.rg('-V', 'A=1;B=2', '-V', 'C=3',
                                  '--variable=D=x=y', self.prog('envdump')))
        self.assertEqual(sorted(env), sorted(['PATH=' + CALLER_PATH, 'A=1',
                                              'B=2', 'C=3', 'D=x=y']))

    def test_variable_overrides_path(self):
        env = self.env_of(self.rg('-V', 'PATH=/rgtest', self.prog('envdump')))
        self.assertEqual(env, ['PATH=/rgtest'])

    def test_keep_environment(self):
        env = self.env_of(self.rg('-E', '-V', 'A=1', self.prog('envdump')))
        self.assertIn('RG_MARKER=outer-environment', env)
        self.assertIn('HOME=/root', env)
        self.assertIn('PATH=' + CALLER_PATH, env)
        self.assertIn('A=1', env)

    def test_variable_without_equals_unsets(self):
        env = self.env_of(self.rg('-E', '-V', 'RG_MARKER',
                                  self.prog('envdump')))
        self.assertFalse([e for e in env if e.startswith('RG_MARKER')], env)


if __name__ == '__main__':
    main()
