#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small judge in Python: the problem is a+b, the test cases are made up
here, every one runs through one runguard.Pool from a thread pool.

usage (as root): pyjudge.py [options] SUBMISSION.c|PROGRAM

A .c submission is compiled first (cc -O2, outside the sandbox).  Each test
case's input goes to the program's stdin from a file, its stdout to a file
that is compared with the answer.  Verdicts: CORRECT, WRONG-ANSWER,
TIMELIMIT, MEMORY-LIMIT, RUN-ERROR; one line per case, then a summary.
Exit status 0 if every case is CORRECT, 1 if not, 2 on a judging error.
Ctrl-C cancels the runs under way (killed and cleaned up) and exits 130.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import runguard


def make_cases(count: int, seed: int) -> list[tuple[str, str]]:
    """(input, answer) of every test case."""
    rnd = random.Random(seed)
    cases = []
    for _ in range(count):
        a, b = rnd.randint(-10**9, 10**9), rnd.randint(-10**9, 10**9)
        cases.append(('%d %d\n' % (a, b), '%d\n' % (a + b)))
    return cases


def prepare(submission: str, work: str) -> str:
    """The program to run: the submission compiled, or copied."""
    program = os.path.join(work, 'program')
    if submission.endswith('.c'):
        proc = subprocess.run(['cc', '-O2', '-o', program, submission],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit('COMPILER-ERROR\n' + proc.stderr)
    else:
        shutil.copy(submission, program)
    os.chmod(program, 0o755)
    return program


def verdict(res: runguard.Result, output: str, answer: str,
            memory_limit: int) -> str:
    """DOMjudge's order: time first, then memory, then the exit status."""
    if res.time_result('cpu'):
        return 'TIMELIMIT'
    if res.oom_killed or (res.exit_code != 0 and
                          res.memory_bytes >= memory_limit):
        return 'MEMORY-LIMIT'
    if res.outcome == runguard.Outcome.EXEC_FAILED or res.exit_code != 0:
        return 'RUN-ERROR'
    with open(output) as f:
        return 'CORRECT' if f.read().split() == answer.split() \
            else 'WRONG-ANSWER'


class Judge:
    def __init__(self, args: argparse.Namespace, program: str,
                 work: str) -> None:
        self.work = work
        self.memory_limit = args.memory_mib << 20
        # one Config for the whole problem: each case replaces its files
        self.base = runguard.Config(
            [program], user=args.user, group=args.group or args.user,
            cpu_limit=(args.time_limit, args.time_limit + 0.5),
            wall_limit=(2 * args.time_limit + 1, 2 * args.time_limit + 1),
            memory_limit=self.memory_limit, stream_limit=1 << 20,
            stderr=os.devnull, cgroup_parent=args.cgroup_parent)

    def case(self, pool: runguard.Pool, number: int, data: str,
             answer: str) -> tuple[int, str, runguard.Result]:
        inp = os.path.join(self.work, '%d.in' % number)
        out = os.path.join(self.work, '%d.out' % number)
        with open(inp, 'w') as f:
            f.write(data)
        res = pool.run(self.base.replace(stdin=inp, stdout=out))
        return number, verdict(res, out, answer, self.memory_limit), res


def judge(args: argparse.Namespace, work: str) -> int:
    program = prepare(args.submission, work)
    judge = Judge(args, program, work)
    cases = make_cases(args.cases, args.seed)
    verdicts: dict[str, int] = {}
    start = time.monotonic()
    with runguard.Pool(args.slots, args.pool_dir,
                       cgroup_parent=args.cgroup_parent) as pool, \
            concurrent.futures.ThreadPoolExecutor(args.threads) as ex:
        futures = [ex.submit(judge.case, pool, i + 1, data, answer)
                   for i, (data, answer) in enumerate(cases)]
        try:
            for fut in concurrent.futures.as_completed(futures):
                number, v, res = fut.result()
                verdicts[v] = verdicts.get(v, 0) + 1
                print('case %3d %-12s cpu=%.3fs wall=%.3fs mem=%.1fMiB '
                      'slot=%s' % (number, v, res.cpu_time or 0.0,
                                   res.wall_time, res.memory_bytes / 2**20,
                                   res.pool_slot), flush=True)
        except BaseException:
            # Ctrl-C or a judging error: end the runs under way now
            for fut in futures:
                fut.cancel()
            pool.cancel()
            raise
    summary = ' '.join('%s=%d' % kv for kv in sorted(verdicts.items()))
    final = 'CORRECT' if verdicts.get('CORRECT') == len(cases) else \
        next(v for v in ('RUN-ERROR', 'TIMELIMIT', 'MEMORY-LIMIT',
                         'WRONG-ANSWER') if v in verdicts)
    print('summary: %s cases=%d %s time=%.2fs' % (
        final, len(cases), summary, time.monotonic() - start))
    return 0 if final == 'CORRECT' else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('submission', help='a C source file or a program')
    p.add_argument('--cases', type=int, default=50)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--threads', type=int, default=4)
    p.add_argument('--slots', type=int, default=4)
    p.add_argument('--time-limit', type=float, default=1.0,
                   help='CPU seconds per case')
    p.add_argument('--memory-mib', type=int, default=64)
    p.add_argument('--user', default='domjudge-run')
    p.add_argument('--group', help='default: the user name')
    p.add_argument('--pool-dir', help='default: a new directory, '
                   'destroyed at the end')
    p.add_argument('--cgroup-parent')
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix='pyjudge-')
    os.chmod(work, 0o755)
    own_pool = args.pool_dir is None
    if own_pool:
        args.pool_dir = os.path.join(work, 'pool')
    try:
        return judge(args, work)
    except KeyboardInterrupt:
        print('interrupted', file=sys.stderr)
        return 130
    except runguard.Error as e:
        print('judging error: %s' % e, file=sys.stderr)
        return 2
    finally:
        if own_pool and os.path.exists(args.pool_dir):
            runguard.pool_destroy(args.pool_dir, force=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
