# SPDX-License-Identifier: LGPL-2.1-or-later
"""DOMjudge's real judging flow (issue 11), in every mode (per-run, pooled,
resident: a keeper per slot): a non-root judgedaemon account calls `sudo -n runguard` with the option lists of
spec 4.4 A, B and C, from a new test-case directory for every call, in a
chroot made as chroot-startstop.sh makes it; the pool is configured only
through /etc/runguard.conf (djflow.py does all of that). Real C programs
are compiled by gcc inside the chroot and judged; each test asserts the
verdict DOMjudge would give, the same in every mode, and the meta keys it
reads. Needs root and sudo: skips otherwise (fails with
RUNGUARD_REQUIRE_PRIVILEGED=1)."""

import atexit
import os
import random
import signal
import unittest

import djflow
from rgtest import (CGROUP_PARENT, CHROOT_PREFIX, META_VALUE_RE, PROGRAMS,
                    RUNGUARD, RUNUSER, cgroup_children, main,
                    skip_or_fail, unmet_precondition, wait_until)

RUNGROUP = os.environ.get('RG_RUNGROUP') or RUNUSER
SESSION = None
_rng = random.Random(11)
CASES = [djflow.make_case(_rng, 1000) for _ in range(6)]
LARGE_MIB = 20
MIB = 1 << 20


def setUpModule():
    global SESSION
    reason = unmet_precondition() or djflow.unmet_precondition()
    if reason:
        skip_or_fail(reason)
    # judgedaemon -n 1 (user RUNUSER-1, -P 1) where CPU 1 exists
    daemon_id = 1 if len(os.sched_getaffinity(0)) > 1 else 0
    SESSION = djflow.Session(RUNGUARD, os.path.join(PROGRAMS, 'compare'),
                             CHROOT_PREFIX, RUNUSER, RUNGROUP,
                             cgroup_parent=CGROUP_PARENT,
                             daemon_id=daemon_id)
    # meson's timeout sends SIGTERM: undo the system changes even then
    signal.signal(signal.SIGTERM, _interrupted)
    atexit.register(SESSION.cleanup)
    try:
        SESSION.setup()
    except BaseException:
        problems = SESSION.cleanup()
        if problems:
            print('djflow clean-up: %s' % '; '.join(problems))
        raise


def _interrupted(signum, frame):
    raise KeyboardInterrupt('signal %d' % signum)


def tearDownModule():
    if SESSION is None:
        return
    problems = SESSION.cleanup()
    if problems:
        raise AssertionError('DOMjudge flow clean-up: '
                             + '; '.join(problems))


class FlowTests:
    """The submissions, judged in self.mode."""

    mode = None

    def setUp(self):
        left = SESSION.run_user_procs()
        if left:
            SESSION._kill_leftovers()
        self.cgroups_before = cgroup_children()
        self.judgings = []

    def tearDown(self):
        problems = []
        for j in self.judgings:      # judgings a failed test left started
            problems += j.stop()
        new = wait_until(self.new_cgroups, 10.0)
        if new:
            problems.append('cgroups left: %s' % ', '.join(sorted(new)))
        left = wait_until(SESSION.run_user_procs, 3.0)
        if left:
            problems.append('processes of %s left: %s'
                            % (SESSION.run_user, left))
        if problems:
            self.fail('; '.join(problems))

    # -- helpers -------------------------------------------------------------

    def new_cgroups(self):
        """Cgroups made since setUp that could be ours: a run's (another
        runguard's run on this shared machine ends within the wait), not
        another pool's nor our pool's (made once, destroyed at the end)."""
        return {p for p in cgroup_children() - self.cgroups_before
                if not os.path.basename(p).startswith('pool-')}

    def judge(self, submission, cases, lazy=True, memory_kb=None):
        """The whole judging cycle: chroot-startstop.sh start, compile, the
        cases (stopping at the first one that is not CORRECT, as
        DOMjudge's lazy evaluation does), each with its compare step, and
        at once chroot-startstop.sh stop with plain umount: a busy mount
        fails the test, as it disables a real judgehost."""
        j = djflow.Judging(SESSION, self.mode, submission)
        self.judgings.append(j)
        j.start()
        comp = j.compile(djflow.SUBMISSIONS[submission])
        self.assertIsNone(comp.verdict, 'compile: %s\n%s\nmeta: %s\n%s' % (
            comp.verdict, comp.res.describe(), comp.meta, comp.output))
        self.assertNotIn('internal-error', comp.meta)
        self.assertEqual(comp.meta.get('exitcode'), '0', comp.meta)
        self.assertNotHeld(comp.res, 'the compile')
        runs = []
        for number, (data, answer) in enumerate(cases, 1):
            tc = j.run_testcase(number, data, answer, memory_kb=memory_kb)
            runs.append(tc)
            self.assertMetaRead(tc)
            if lazy and tc.verdict != 'CORRECT':
                break
        problems = j.stop()
        self.assertEqual(problems, [], 'chroot-startstop.sh stop right '
                         'after the last test case of %s' % j.job)
        return runs

    def assertNotHeld(self, res, step):
        """Nothing held a file, directory or mount of the judging when
        the call returned (djflow.holders_below)."""
        self.maxDiff = None
        self.assertEqual(res.holders, [], 'held below the judging directory '
                         'right after %s returned: %s' % (step, res.argv))

    def assertMetaRead(self, tc):
        """The keys DOMjudge reads are there, well-formed; no
        internal-error in either meta file; runguard's exit status is the
        exitcode; nothing of the run user is left."""
        info = tc.describe()
        for meta in (tc.meta, tc.compare_meta):
            self.assertNotIn('internal-error', meta, info)
            for key in ('memory-bytes', 'exitcode', 'time-used',
                        'time-result', 'output-truncated', 'cpu-time',
                        'wall-time'):
                self.assertIn(key, meta, info)
                self.assertRegex(meta[key], r'\A(%s)\Z' % META_VALUE_RE[key],
                                 'key %s\n%s' % (key, info))
        self.assertEqual(tc.meta['time-used'], 'cpu-time', info)
        # runguard's status, passed on by sudo and the run script
        self.assertEqual(tc.run.rc, int(tc.meta['exitcode']), info)
        self.assertEqual(tc.compare.rc, int(tc.compare_meta['exitcode']),
                         info)
        self.assertEqual(tc.leftover, [], 'processes of the run user left '
                         'after the run\n' + info)
        self.assertNotHeld(tc.run, 'test case %d' % tc.number)
        self.assertNotHeld(tc.compare, 'the compare of test case %d'
                           % tc.number)

    def assertVerdict(self, runs, verdict):
        self.assertEqual(runs[-1].verdict, verdict, runs[-1].describe())
        for tc in runs[:-1]:
            self.assertEqual(tc.verdict, 'CORRECT', tc.describe())

    # -- the submissions -----------------------------------------------------

    def test_correct(self):
        runs = self.judge('correct', CASES[:3])
        self.assertEqual(len(runs), 3)
        self.assertVerdict(runs, 'CORRECT')
        for tc in runs:
            self.assertEqual(tc.meta['exitcode'], '0')
            self.assertEqual(tc.meta['time-result'], '')
            self.assertEqual(tc.meta['output-truncated'], '')
            self.assertGreater(int(tc.meta['memory-bytes']), 0)
            self.assertLess(int(tc.meta['memory-bytes']), MEMORY_BYTES)
            self.assertEqual(tc.read('program.out'), CASES[tc.number - 1][1])

    def test_wrong_answer(self):
        runs = self.judge('wrong-answer', CASES[:2])
        self.assertVerdict(runs, 'WRONG-ANSWER')
        self.assertEqual(runs[-1].compare.rc, 43)
        self.assertEqual(runs[-1].meta['exitcode'], '0')

    def test_timelimit_busy(self):
        runs = self.judge('timelimit-busy', CASES[:2])
        self.assertVerdict(runs, 'TIMELIMIT')
        tc = runs[-1]
        self.assertEqual(tc.meta['time-result'], 'hard-timelimit',
                         tc.describe())
        self.assertGreater(float(tc.meta['cpu-time']), djflow.TIME_LIMIT)
        self.assertNotEqual(tc.meta['exitcode'], '0')

    def test_timelimit_sleeping(self):
        runs = self.judge('timelimit-sleep', CASES[:2])
        self.assertVerdict(runs, 'TIMELIMIT')
        tc = runs[-1]
        self.assertEqual(tc.meta['time-result'], 'hard-timelimit',
                         tc.describe())
        self.assertEqual(tc.meta.get('signal'), '14', tc.describe())
        self.assertLess(float(tc.meta['cpu-time']), djflow.TIME_LIMIT)
        self.assertGreaterEqual(float(tc.meta['wall-time']),
                                djflow.HARD_TIME_LIMIT)

    def test_run_error_exit(self):
        runs = self.judge('run-error-exit', CASES[:2])
        self.assertVerdict(runs, 'RUN-ERROR')
        tc = runs[-1]
        self.assertEqual(tc.meta['exitcode'], '3')
        self.assertEqual(tc.read('program.out'), CASES[0][1])

    def test_run_error_signal(self):
        runs = self.judge('run-error-signal', CASES[:2])
        self.assertVerdict(runs, 'RUN-ERROR')
        self.assertEqual(runs[-1].meta['exitcode'], '139')   # SIGSEGV
        self.assertEqual(runs[-1].meta['time-result'], '')

    def test_memory_limit(self):
        runs = self.judge('memory-limit', CASES[:2])
        self.assertVerdict(runs, 'RUN-ERROR')
        tc = runs[-1]
        self.assertEqual(tc.meta['exitcode'], '137', tc.describe())
        used = int(tc.meta['memory-bytes'])
        self.assertGreaterEqual(used, MEMORY_BYTES * 9 // 10, tc.describe())
        self.assertLessEqual(used, MEMORY_BYTES + MIB, tc.describe())

    def test_output_limit(self):
        runs = self.judge('output-limit', CASES[:2])
        self.assertVerdict(runs, 'OUTPUT-LIMIT')
        tc = runs[-1]
        limit = djflow.OUTPUT_KB * 1024
        self.assertEqual(tc.meta['output-truncated'], 'stdout')
        self.assertEqual(tc.meta['exitcode'], '0')
        self.assertEqual(tc.out_size, limit)
        self.assertGreater(int(tc.meta['stdout-bytes']), limit)

    def test_fork_bomb(self):
        # DOMjudge's default memory limit (2 GiB), far above what the
        # process limit allows 64 processes to use: the bomb is judged by
        # its time, never by which process the OOM killer would pick (at
        # 64 MiB it was chance: stock 9.0 reports 43-60 MiB for it)
        runs = self.judge('fork-bomb', CASES[:2],
                          memory_kb=djflow.DEFAULT_MEMORY_KB)
        self.assertVerdict(runs, 'TIMELIMIT')
        # the bomb's last processes may die of the process limit between
        # the soft and the hard wall limit: TIMELIMIT for DOMjudge either way
        self.assertIn(runs[-1].meta['time-result'],
                      ('soft-timelimit', 'hard-timelimit'))
        self.assertLess(int(runs[-1].meta['memory-bytes']),
                        djflow.DEFAULT_MEMORY_KB * 1024 // 4)

    def test_first_and_later_judgings(self):
        """The first judging of a new pool and root (the pool is made,
        keepers started, the root's libraries prewarmed by this call),
        then later ones: each ends with a plain-umount stop right after
        its last call, and nothing of runguard holds a path below it."""
        if self.mode in djflow.POOL_SETTINGS:
            self.assertEqual(SESSION.destroy_pool(self.mode), [])
        for _ in range(3):
            runs = self.judge('correct', CASES[:2])
            self.assertVerdict(runs, 'CORRECT')
            self.assertEqual(len(runs), 2)

    def test_setsid_orphan(self):
        runs = self.judge('setsid-orphan', CASES[:2])
        self.assertVerdict(runs, 'CORRECT')
        self.assertEqual(len(runs), 2)

    def test_large_input(self):
        runs = self.judge('correct', [CASES[0],
                                      djflow.make_large_case(LARGE_MIB)])
        self.assertVerdict(runs, 'CORRECT')
        self.assertEqual(len(runs), 2)
        self.assertGreaterEqual(runs[-1].size('testdata.in'),
                                LARGE_MIB * MIB)
        self.assertEqual(runs[-1].meta['time-result'], '')

    def test_stderr_32mib(self):
        runs = self.judge('stderr-32mib', CASES[:2])
        self.assertVerdict(runs, 'CORRECT')
        tc = runs[-1]
        self.assertEqual(tc.meta['output-truncated'], 'stderr')
        self.assertEqual(int(tc.meta['stderr-bytes']), 32 * MIB)
        self.assertEqual(tc.size('program.err'), djflow.OUTPUT_KB * 1024)


MEMORY_BYTES = djflow.MEMORY_KB * 1024


class PerRunFlowTest(FlowTests, unittest.TestCase):
    """No /etc/runguard.conf: no pool, a cgroup and namespaces per run."""

    mode = 'per-run'

    def test_no_pool_made(self):
        self.judge('correct', CASES[:1])
        for mode in djflow.POOL_SETTINGS:
            self.assertEqual(SESSION.pool_files(mode), (0, 0), mode)


class PooledFlowTest(FlowTests, unittest.TestCase):
    """/etc/runguard.conf: pool-size = 4 and a private pool-dir."""

    mode = 'pooled'

    @classmethod
    def tearDownClass(cls):
        if SESSION is None:
            return
        problems = SESSION.destroy_pool(cls.mode)
        if problems:
            raise AssertionError('; '.join(problems))

    def test_pool_dir_stays_bounded(self):
        """Every test case has a new -r string; the pool directory must
        not grow with the number of calls (issue 11: a prewarm stamp per
        string)."""
        j = djflow.Judging(SESSION, self.mode, 'correct')
        self.judgings.append(j)
        j.start()
        self.assertIsNone(j.compile(djflow.SUBMISSIONS['correct']).verdict)
        counts = []
        for number, (data, answer) in enumerate(CASES, 1):
            tc = j.run_testcase(number, data, answer)
            self.assertEqual(tc.verdict, 'CORRECT', tc.describe())
            counts.append(SESSION.pool_files(self.mode))
        self.assertTrue(SESSION.pool_cgroups(self.mode), 'no pool was made')
        self.assertEqual(counts[-1], counts[1],
                         'pool directory entries (all but keeper sockets, '
                         'prewarm stamps) after each of %d test cases: %s'
                         % (len(counts), counts))
        self.assertLessEqual(SESSION.pool_sockets(self.mode),
                             SESSION.pool_size)


class ResidentFlowTest(PooledFlowTest):
    """/etc/runguard.conf: the same pool settings with pool-keeper = yes
    (a keeper per slot forks the runs), on a pool of its own."""

    mode = 'resident'


if __name__ == '__main__':
    main()
