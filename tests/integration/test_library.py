# SPDX-License-Identifier: LGPL-2.1-or-later
"""librunguard used by another judge: examples/minijudge links the shared
library and judges real programs with it."""

import os
import subprocess

from rgtest import CALLER_ENV, RUN_USER, RGTestCase, main

MINIJUDGE = os.environ.get('RG_MINIJUDGE', '')


class LibraryTest(RGTestCase):

    def minijudge(self, program, input_file, answer, memory_mib=None):
        with open(self.path('expected'), 'w') as f:
            f.write(answer)
        extra = [str(memory_mib)] if memory_mib else []
        # minijudge's own stdin holds other numbers: the program must read
        # the input file given through rg_config_set_input_file()
        return subprocess.run(
            [MINIJUDGE, RUN_USER, program, input_file, 'expected'] + extra,
            cwd=self.tdir, env=dict(CALLER_ENV), input='1 1\n',
            capture_output=True, text=True, timeout=60)

    def judge(self, program, answer, memory_mib=None):
        with open(self.path('in'), 'w') as f:
            f.write('20 22\n')
        proc = self.minijudge(program, 'in', answer, memory_mib)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout.split()[0], proc.stdout

    def script(self, name, body):
        path = self.path(name)
        with open(path, 'w') as f:
            f.write('#!/bin/sh\n' + body)
        os.chmod(path, 0o755)
        return path

    def test_links_only_the_public_library(self):
        libs = subprocess.run(['ldd', MINIJUDGE], capture_output=True,
                              text=True, check=True).stdout
        self.assertIn('librunguard.so.0', libs)

    def test_correct_and_wrong_answer(self):
        solve = self.script('solve', 'read a b; echo $((a + b))\n')
        self.assertEqual(self.judge(solve, '42\n')[0], 'CORRECT')
        self.assertEqual(self.judge(solve, '43\n')[0], 'WRONG-ANSWER')

    def test_missing_input_file(self):
        solve = self.script('solve', 'read a b; echo $((a + b))\n')
        proc = self.minijudge(solve, 'no-such-input', '42\n')
        self.assertEqual(proc.returncode, 2, proc.stdout)
        self.assertIn("cannot open `no-such-input'", proc.stderr)
        self.assertFalse(os.path.exists(self.path('minijudge.out')),
                         'the run started without its input')

    def test_time_limit_and_run_error(self):
        spin = self.script('spin', 'while :; do :; done\n')
        verdict, line = self.judge(spin, '42\n')
        self.assertEqual(verdict, 'TIMELIMIT', line)
        crash = self.script('crash', 'kill -SEGV $$\n')
        verdict, line = self.judge(crash, '42\n')
        self.assertEqual(verdict, 'RUN-ERROR', line)
        self.assertIn('exit=139', line)

    def test_memory_limit(self):
        # memhog touches 400 MiB against a limit of 64 MiB. A compiled hog
        # and a small limit: under the kernel lab's emulation python's
        # start-up alone can use minijudge's 1.5 s of CPU time, and filling
        # its default 256 MiB took longer than that once (TIMELIMIT).
        hog = self.script('hog', 'exec %s 400\n' % self.prog('memhog'))
        verdict, line = self.judge(hog, '42\n', memory_mib=64)
        self.assertEqual(verdict, 'MEMORY-LIMIT', line)

    def test_bad_memory_limit_is_refused(self):
        proc = self.minijudge(self.prog('hello'), 'in', '', memory_mib='x')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('bad memory limit', proc.stderr)


if __name__ == '__main__':
    main()
