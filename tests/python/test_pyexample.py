# SPDX-License-Identifier: LGPL-2.1-or-later
"""examples/pyjudge.py end to end: C submissions compiled and judged on
many test cases through one Pool from a thread pool, every verdict, and
Ctrl-C in the middle of a judging."""

import os
import re
import signal
import subprocess
import sys
import time

import pyrgtest

SUBMISSIONS = {
    'correct': 'long long a, b; scanf("%lld %lld", &a, &b); '
               'printf("%lld\\n", a + b);',
    'wrong': 'long long a, b; scanf("%lld %lld", &a, &b); '
             'printf("%lld\\n", a - b);',
    'timelimit': 'volatile unsigned long n = 0; for (;;) n++;',
    'runerror': 'abort();',
    'memory': 'size_t n = 512u << 20; char *p = malloc(n); '
              'for (size_t i = 0; p && i < n; i += 4096) p[i] = 1; '
              'printf("%d\\n", p[n / 2]);',
    'sleeper': 'sleep(60);',
}


class ExampleTest(pyrgtest.PrivilegedCase):

    def setUp(self):
        super().setUp()
        if not pyrgtest.PYJUDGE:
            pyrgtest.rgtest.skip_or_fail('RG_PYJUDGE is not set')

    def submission(self, name):
        path = self.path(name + '.c')
        with open(path, 'w') as f:
            f.write('#include <stdio.h>\n#include <stdlib.h>\n'
                    '#include <unistd.h>\nint main(void) { %s return 0; }\n'
                    % SUBMISSIONS[name])
        return path

    def pyjudge(self, name, *args, **kw):
        argv = [sys.executable, pyrgtest.PYJUDGE, '--user',
                pyrgtest.rgtest.RUN_USER, '--cgroup-parent',
                pyrgtest.CGROUP_PARENT] + list(args) + [self.submission(name)]
        return subprocess.Popen(argv, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def judge(self, name, *args):
        proc = self.pyjudge(name, *args)
        out, err = proc.communicate(timeout=300)
        verdicts = re.findall(r'^case +(\d+) (\S+)', out, re.M)
        summary = re.search(r'^summary: (\S+) cases=(\d+)', out, re.M)
        self.assertIsNotNone(summary, out + err)
        return proc.returncode, verdicts, summary.group(1), out + err

    def test_correct_on_many_cases(self):
        rc, verdicts, final, out = self.judge('correct', '--cases', '60',
                                              '--threads', '6',
                                              '--slots', '3')
        self.assertEqual(rc, 0, out)
        self.assertEqual(final, 'CORRECT')
        self.assertEqual(sorted(int(n) for n, _ in verdicts),
                         list(range(1, 61)))
        self.assertEqual({v for _, v in verdicts}, {'CORRECT'})
        slots = set(re.findall(r'slot=(\d+)', out))
        self.assertTrue(slots <= {'0', '1', '2'} and len(slots) > 1, slots)

    def test_every_verdict(self):
        for name, expected in (('wrong', 'WRONG-ANSWER'),
                               ('timelimit', 'TIMELIMIT'),
                               ('runerror', 'RUN-ERROR'),
                               ('memory', 'MEMORY-LIMIT')):
            with self.subTest(name):
                rc, verdicts, final, out = self.judge(
                    name, '--cases', '4', '--time-limit', '0.5')
                self.assertEqual(rc, 1, out)
                self.assertEqual(final, expected, out)
                self.assertEqual({v for _, v in verdicts}, {expected}, out)

    def test_ctrl_c_cancels_the_runs(self):
        proc = self.pyjudge('sleeper', '--cases', '8', '--time-limit', '10')
        time.sleep(1.5)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, out + err)
        self.assertIn('interrupted', err)
        # the runs were killed, not waited for (each would take 21 s)
        self.assertLess(time.monotonic() - start, 8)


if __name__ == '__main__':
    pyrgtest.rgtest.main()
