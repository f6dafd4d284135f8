# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard.Pool from many Python threads at once: every run holds its
slot alone, results are right, cancel and close work, pool admin, and
nothing is left (processes, cgroups, the pool itself)."""

import concurrent.futures
import errno
import os
import resource
import threading
import time

import pyrgtest
import rgtest
import runguard

SLOTS = 3
MIB = 1 << 20
CGROUP_PARENT = pyrgtest.CGROUP_PARENT


class PoolTest(pyrgtest.PoolDirCase):

    def open_pool(self, **kw):
        return runguard.Pool(SLOTS, self.pool_dir,
                             cgroup_parent=pyrgtest.CGROUP_PARENT, **kw)

    def test_many_threads_one_pool(self):
        cases = 24

        def case(pool, n):
            return n, pool.run(self.config('exitcode', n))

        with self.open_pool() as pool, \
                concurrent.futures.ThreadPoolExecutor(8) as ex:
            results = list(ex.map(lambda n: case(pool, n), range(cases)))
            info = runguard.pool_show(self.pool_dir)
        for n, res in results:
            self.assertEqual(res.exit_code, n)
            self.assertTrue(res.pooled)
            self.assertIn(res.pool_slot, range(SLOTS))
        self.assertEqual(info.size, SLOTS)
        self.assertEqual(sum(s.runs for s in info.slots), cases)
        self.assertEqual([s.number for s in info.slots], list(range(SLOTS)))
        for s in info.slots:
            self.assertEqual(s.state, runguard.SlotState.FREE)
            self.assertEqual(s.holder, 0)
        self.assertTrue(pool.closed)
        with self.assertRaisesRegex(ValueError, 'closed'):
            pool.run(self.config('exitcode', 0))

    def test_threads_overlap(self):
        """Runs of sleep 1 in 3 threads take about 1 s, not 3 s: the GIL
        is released and the pool runs them side by side, each in a slot
        of its own."""
        with self.open_pool() as pool, \
                concurrent.futures.ThreadPoolExecutor(SLOTS) as ex:
            start = time.monotonic()
            res = list(ex.map(lambda _: pool.run(self.config('sleep', 1)),
                              range(SLOTS)))
            elapsed = time.monotonic() - start
        self.assertEqual(sorted(r.pool_slot for r in res),
                         list(range(SLOTS)))
        self.assertLess(elapsed, 2.5)

    def cancelled_sleeper(self, errors):
        """A thread body: a 30 s run in pool, whose Cancelled goes to
        errors."""
        def worker(pool):
            try:
                pool.run(self.config('sleep', 30, wall_limit=60))
            except runguard.Cancelled as e:
                errors.append(e)
        return worker

    def test_cancel_and_exception_in_with(self):
        errors = []
        worker = self.cancelled_sleeper(errors)
        pool = self.open_pool()
        threads = [threading.Thread(target=worker, args=(pool,))
                   for _ in range(SLOTS)]
        start = time.monotonic()
        with self.assertRaises(RuntimeError):
            with pool:
                for t in threads:
                    t.start()
                time.sleep(0.5)
                # leaving with an exception cancels, then waits
                raise RuntimeError('judging failed')
        for t in threads:
            t.join(10)
        self.assertLess(time.monotonic() - start, 6)
        self.assertEqual(len(errors), SLOTS)
        self.assertTrue(all(e.result.pooled for e in errors))
        info = runguard.pool_show(self.pool_dir)
        self.assertTrue(all(s.state == runguard.SlotState.FREE
                            for s in info.slots), info)

    def test_cancel_reaches_a_run_waiting_for_a_slot(self):
        """More runs than slots: the ones still waiting for a slot end at
        once on a cancel too (the library polls the cancel fd while it
        waits), not only when a slot becomes free."""
        errors = []
        worker = self.cancelled_sleeper(errors)
        with self.open_pool() as pool:
            threads = [threading.Thread(target=worker, args=(pool,))
                       for _ in range(SLOTS + 2)]
            for t in threads:
                t.start()
            time.sleep(1)
            start = time.monotonic()
            pool.cancel()
            for t in threads:
                t.join(10)
            elapsed = time.monotonic() - start
        self.assertEqual(len(errors), SLOTS + 2, errors)
        self.assertLess(elapsed, 5)
        # the waiting ones never had a slot: no result
        waited = [e for e in errors if e.result is None]
        self.assertEqual(len(waited), 2, errors)

    def test_admin_functions(self):
        runguard.pool_create(SLOTS, self.pool_dir,
                             cgroup_parent=pyrgtest.CGROUP_PARENT)
        info = runguard.pool_show(self.pool_dir)
        self.assertIn(info.cgroup_version, (1, 2))
        self.assertIn(pyrgtest.CGROUP_PARENT, info.cgroup_path)
        self.assertGreater(info.created, 0)
        stats = runguard.pool_prewarm([self.prog('hello')])
        self.assertEqual(stats.files, 1)
        self.assertEqual(stats.bytes, os.path.getsize(self.prog('hello')))
        self.assertIsNone(runguard.pool_slot_keeper(0, self.pool_dir))
        with self.open_pool() as pool:
            res = pool.run(self.config('hello'))
            self.assertEqual(res.exit_code, 0)
            self.assertIn('pool', repr(pool).lower())
        runguard.pool_destroy(self.pool_dir)
        with self.assertRaises(runguard.Error) as cm:
            runguard.pool_show(self.pool_dir)
        self.assertEqual(cm.exception.errno, errno.ENOENT)

    def test_keepers(self):
        with self.open_pool(keepers=True) as pool:
            res = pool.run(self.config('exitcode', 5, pool_keeper=True))
            self.assertEqual(res.exit_code, 5)
            keeper = runguard.pool_slot_keeper(res.pool_slot, self.pool_dir)
            self.assertTrue(keeper and keeper > 0, keeper)

    def test_a_large_judge_costs_its_runs_nothing(self):
        """A judge holding 200 MiB gets resident slots by default, and a
        trivial static program reports what it reports per-run: the
        keeper is exec'd, not a copy of the judge (the forked keeper of
        before made it 1.9 MiB against 0.37 MiB). The margin is two of
        the kernel's 64-page charge batches (docs/pool.md)."""
        ballast = bytearray(200 * MIB)
        for i in range(0, len(ballast), 4096):
            ballast[i] = 1
        cfg = self.config('static-hello', memory_limit=64 * MIB)
        per_run = sorted(runguard.run(cfg).memory_bytes for _ in range(5))
        with self.open_pool() as pool:
            results = [pool.run(cfg) for _ in range(5)]
            keeper = runguard.pool_slot_keeper(results[-1].pool_slot,
                                               self.pool_dir)
        del ballast
        self.assertTrue(keeper and keeper > 0, 'no keeper by default')
        pooled = sorted(r.memory_bytes for r in results)
        self.assertTrue(all(r.exit_code == 0 for r in results), results)
        self.assertLessEqual(pooled[2], per_run[2] + 512 * 1024,
                             'pooled %s, per-run %s' % (pooled, per_run))


class KeptCgroupTest(pyrgtest.PoolDirCase):
    """Without keepers a pool handle keeps each slot's cgroup open between
    its runs (no cgroup file is opened per run), and notices when another
    process replaced that cgroup meanwhile. With keepers (the default) it
    holds none: the slot's keeper does, and the handle opens none while
    the slot's settings stay."""

    def slot_dirs(self, slots=(0,)):
        """The slots' cgroup directories, as the library opens them."""
        path = runguard.pool_show(self.pool_dir).cgroup_path
        if rgtest.cgroup_mode() == 'v2':
            roots = [rgtest.CGROOT]
        else:
            roots = [os.path.realpath(os.path.join(rgtest.CGROOT, c))
                     for c in rgtest.V1_CONTROLLERS]
        return {os.path.join(r, path, 'slot-%d' % i)
                for r in roots for i in slots}

    def fds_into(self, dirs):
        """This process's fds on those directories or their files."""
        found = {}
        for name in os.listdir('/proc/self/fd'):
            try:
                target = os.readlink('/proc/self/fd/' + name)
            except OSError:
                continue
            if target in dirs or os.path.dirname(target) in dirs:
                found[int(name)] = target
        return found

    def assert_fds_on_live_dirs(self, fds, dirs):
        """Every kept directory fd is the directory there now."""
        checked = 0
        for fd, target in fds.items():
            if target in dirs:
                self.assertEqual(os.fstat(fd).st_ino, os.stat(target).st_ino,
                                 target)
                checked += 1
        self.assertGreater(checked, 0, fds)

    def test_kept_between_runs_and_closed_with_the_pool(self):
        for keepers in (False, True):
            with self.subTest(keepers=keepers):
                cfg = self.config('exitcode', 3, pool_keeper=keepers)
                with runguard.Pool(1, self.pool_dir, keepers=keepers,
                                   cgroup_parent=CGROUP_PARENT) as pool:
                    self.assertEqual(pool.run(cfg).exit_code, 3)
                    dirs = self.slot_dirs()
                    first = self.fds_into(dirs)
                    if keepers:
                        self.assertEqual(first, {}, 'the keeper holds them')
                    else:
                        self.assertTrue(first, 'no fd kept on %s' % dirs)
                    self.assertEqual(pool.run(cfg).exit_code, 3)
                    self.assertEqual(self.fds_into(dirs), first)
                self.assertEqual(self.fds_into(dirs), {})
                runguard.pool_destroy(self.pool_dir, force=True)

    def test_a_hostile_run_leaves_nothing_in_the_kept_cgroup(self):
        """The slot's cgroup outlives a run in this process now: a run
        whose grandchildren escape into sessions of their own leaves
        neither them nor their memory to the next run there."""
        for keepers in (False, True):
            with self.subTest(keepers=keepers):
                out = self.path('forker-%s' % keepers)
                with runguard.Pool(1, self.pool_dir, keepers=keepers,
                                   cgroup_parent=CGROUP_PARENT) as pool:
                    res = pool.run(self.config('forker', 3, 60, stdout=out,
                                               pool_keeper=keepers))
                    with open(out) as fh:
                        escaped = [ln for ln in fh
                                   if ln.startswith('grandchild')]
                    self.assertEqual((res.exit_code, len(escaped)), (0, 3))
                    # killed before the run returned; init reaps them
                    alive = [p for p in rgtest.procs_of_uid(self.uid)
                             if not p[1].startswith('Z')]
                    self.assertEqual(alive, [])
                    kept = self.fds_into(self.slot_dirs())
                    res = pool.run(self.config('memhog', 1, pool_keeper=keepers,
                                               memory_limit=64 * MIB))
                    self.assertEqual(res.exit_code, 0, res)
                    self.assertLess(res.memory_bytes, 8 * MIB, res)
                    self.assertEqual(self.fds_into(self.slot_dirs()), kept)
                runguard.pool_destroy(self.pool_dir, force=True)

    def test_kept_within_a_quarter_of_the_fd_limit(self):
        """A judge at a low RLIMIT_NOFILE does not run out of fds: kept
        cgroups use at most a quarter of it, other slots reopen theirs."""
        limit = 256
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
        try:
            with runguard.Pool(4, self.pool_dir, keepers=False,
                               cgroup_parent=CGROUP_PARENT) as pool, \
                    concurrent.futures.ThreadPoolExecutor(4) as ex:
                res = list(ex.map(
                    lambda _: pool.run(self.config('sleep', 0.2,
                                                   pool_keeper=False)),
                    range(12)))
                kept = self.fds_into(self.slot_dirs(range(4)))
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        self.assertEqual([r.exit_code for r in res], [0] * 12)
        self.assertEqual(len({r.pool_slot for r in res}), 4, res)
        self.assertTrue(kept)
        self.assertLessEqual(len(kept), limit // 4)

    def test_pool_made_again_under_the_handle(self):
        """An admin destroys and makes the pool again while a judge has it
        open: the judge's next run takes the new cgroup, whose limit
        holds, instead of failing on the removed one's files."""
        for keepers in (False, True):
            with self.subTest(keepers=keepers):
                self.check_made_again(keepers)
                runguard.pool_destroy(self.pool_dir, force=True)

    def check_made_again(self, keepers):
        limited = dict(memory_limit=64 * MIB, pool_keeper=keepers)
        with runguard.Pool(1, self.pool_dir, keepers=keepers,
                           cgroup_parent=CGROUP_PARENT) as pool:
            res = pool.run(self.config('exitcode', 0, pool_keeper=keepers))
            self.assertEqual(res.exit_code, 0)
            dirs = self.slot_dirs()
            runguard.pool_destroy(self.pool_dir, force=True)
            runguard.pool_create(1, self.pool_dir,
                                 cgroup_parent=CGROUP_PARENT)
            self.assertEqual(self.slot_dirs(), dirs)
            res = pool.run(self.config('memhog', 16, **limited))
            self.assertEqual(res.exit_code, 0, res)
            if not keepers:
                self.assert_fds_on_live_dirs(self.fds_into(dirs), dirs)
            res = pool.run(self.config('memhog', 200, **limited))
            self.assertTrue(res.oom_killed or res.term_signal, res)


if __name__ == '__main__':
    pyrgtest.rgtest.main()
