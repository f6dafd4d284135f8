# SPDX-License-Identifier: LGPL-2.1-or-later
"""The problem: its test data, the submissions and how they are compiled."""

import bisect
import os
import random
import subprocess

from . import BENCH_DIR, SetupError

SUBMISSIONS = os.path.join(BENCH_DIR, 'scale-submissions')
MOD = 1000000007


def reference_answer(nums):
    """LIS length, distinct values, median, sum sorted[i]*(i+1) mod p."""
    tails = []
    for x in nums:
        i = bisect.bisect_left(tails, x)
        if i == len(tails):
            tails.append(x)
        else:
            tails[i] = x
    s = sorted(nums)
    total = 0
    for i, x in enumerate(s):
        total = (total + x % MOD * (i + 1)) % MOD
    return '%d\n%d\n%d\n%d\n' % (len(tails), len(set(nums)), s[len(s) // 2],
                                 total)


def test_sizes(tests, size):
    """A tiny sample first (as in a real problem set), then sizes spread
    between half and all of size."""
    sizes = [5]
    for i in range(1, tests):
        frac = i / (tests - 1) if tests > 2 else 1
        sizes.append(max(5, int(size * (0.5 + 0.5 * frac))))
    return sizes[:tests]


def _write_readable(path, text):
    """Write text to path, readable by all whatever the umask."""
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, 0o644)


def make_testdata(directory, tests, size, seed):
    """testNN.in/.ans in directory; returns [(in, ans, n)]."""
    os.makedirs(directory, exist_ok=True)
    rnd = random.Random(seed)
    cases = []
    for i, n in enumerate(test_sizes(tests, size)):
        # Every third case has many equal values.
        hi = max(2, n // 4) if i % 3 == 2 else 1 << 30
        nums = [rnd.randrange(0, hi) for _ in range(n)]
        inp = os.path.join(directory, 'test%02d.in' % i)
        ans = os.path.join(directory, 'test%02d.ans' % i)
        _write_readable(inp, '%d\n%s\n' % (n, ' '.join(map(str, nums))))
        _write_readable(ans, reference_answer(nums))
        cases.append((inp, ans, n))
    return cases


def load_variants():
    """[(name, source)] of bench/scale-submissions/*.cpp."""
    names = sorted(n for n in os.listdir(SUBMISSIONS) if n.endswith('.cpp'))
    if not names:
        raise SetupError('no submissions in %s' % SUBMISSIONS)
    variants = []
    for name in names:
        with open(os.path.join(SUBMISSIONS, name)) as f:
            text = f.read()
        if '#define SALT 0' not in text:
            raise SetupError('%s has no "#define SALT 0" line' % name)
        variants.append((name[:-4], text))
    return variants


def submission_source(text, salt):
    """A new constant per submission: a different binary, a real compile."""
    return text.replace('#define SALT 0', '#define SALT %d' % salt, 1)


def compiler_command(compiler, std):
    """DOMjudge's C++ compile step (-O2 matters: it includes more headers)."""
    cmd = [compiler, '-x', 'c++', '-Wall', '-O2', '-static', '-pipe']
    if std:
        cmd.append('-std=' + std)
    return cmd + ['-o', 'program', 'source.cpp']


def supports_std(compiler, std):
    proc = subprocess.run([compiler, '-x', 'c++', '-std=' + std, '-E', '-'],
                          stdin=subprocess.DEVNULL, capture_output=True)
    return proc.returncode == 0
