# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the contenders run in: run users, a chroot below the build's
CHROOT_PREFIX, work directories, the benchmark's two pools (plain and
resident: a keeper per slot), and the command lines (DOMjudge's test-case
run).  Everything made here is removed by cleanup(), except the run users
(left for later runs, as the tests do)."""

import collections
import fcntl
import os
import re
import shutil
import subprocess
import time

from rgtest import ensure_account  # tests/integration, on sys.path

from . import BenchError

POOL_DIR = '/run/runguard-bench'
RESIDENT_POOL_DIR = '/run/runguard-bench-resident'
# The benchmark's pools: directory and the options that choose keepers.
# "pooled" is plain (--pool-keeper=no); "resident" has a keeper per slot,
# the default.
POOLS = {'pooled': (POOL_DIR, ('--pool-keeper=no',)),
         'resident': (RESIDENT_POOL_DIR, ('--pool-keeper=yes',))}
# the pool of each pooled contender
POOL_OF = {'pooled': 'pooled', 'library': 'pooled',
           'resident': 'resident', 'library-resident': 'resident'}
KEEPER_COMM = 'runguard-keeper'
RUNNER_COMM = 'runguard-runner'
LOCK_FILE = '/run/runguard-bench.lock'
PROGRAMS = ('trivial', 'cpu100', 'sleep100')
CALLER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

# A command for the driver: fds 0-2 from/to files, the meta file (None:
# none), whether the program prints a self line, and the argv.
Command = collections.namedtuple(
    'Command', 'contender stdin stdout stderr meta self_line argv')


def build_config(build):
    """The #define RG_* "..." constants of the build."""
    path = os.path.join(build, 'rg-build-config.h')
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise BenchError('cannot read %s (%s): is %s a configured build? '
                         'Run scripts/build' % (path, e.strerror, build))
    return dict(re.findall(r'^#define (RG_\w+) "(.*)"$', text, re.M))


def ensure_user(user, group):
    """DOMjudge's accounts, made as scripts/sample-judging makes them."""
    return ensure_account(user, group)[0]


def comm_of(pid):
    with open('/proc/%d/comm' % pid) as f:
        return f.read().strip()


def parent_of(pid):
    with open('/proc/%d/stat' % pid) as f:
        return int(f.read().rsplit(')', 1)[1].split()[1])


def is_keeper(pid, cgroup, runner=False):
    """Whether pid is a keeper (or with runner, a slot's runner) of the
    pool whose cgroup name is cgroup. A runner is a fork of its keeper:
    until it names itself, it has the keeper's name, not its parent."""
    try:
        if comm_of(pid) != (RUNNER_COMM if runner else KEEPER_COMM):
            return False
        if not runner and comm_of(parent_of(pid)) == KEEPER_COMM:
            return False
        with open('/proc/%d/cgroup' % pid) as f:
            return '/%s/' % cgroup in f.read()
    except OSError:
        return False


class Sandbox:
    def __init__(self, source, build, pool_size, workers):
        self.source = source
        self.build = build
        self.pool_size = pool_size
        self.workers = workers
        self.runguard = os.path.join(build, 'runguard', 'runguard')
        self.driver = os.path.join(build, 'bench', 'driver')
        self.programs = os.path.join(build, 'bench', 'programs')
        self.check_binaries()
        cfg = build_config(build)
        self.prefix = cfg['RG_CHROOT_PREFIX']
        self.runuser = cfg['RG_RUNUSER']
        self.rungroup = cfg['RG_RUNGROUP']
        self.base = os.path.join(self.prefix, 'runguard-bench',
                                 str(os.getpid()))
        self.root = os.path.join(self.base, 'root')
        self.work = os.path.join(self.base, 'work')
        self.config = os.path.join(self.base, 'runguard.conf')
        self.users = ['%s-%d' % (self.runuser, w) for w in range(workers)]
        self.uids = []
        self.lock_fd = None
        self.pools_made = set()
        self.cleanup_notes = []     # what clean-up found but not a failure
        self.pool_cgroups = {}      # pool: its cgroup name (--pool-show)

    def check_binaries(self):
        for path in [self.runguard, self.driver] + [
                os.path.join(self.programs, p) for p in PROGRAMS]:
            if not os.access(path, os.X_OK):
                raise BenchError('%s is missing: build first (bench/run '
                                 'builds unless --no-build; or scripts/build)'
                                 % path)

    # ---- set-up and clean-up -------------------------------------------

    def setup(self):
        self.lock()
        self.uids = [ensure_user(u, self.rungroup) for u in self.users]
        self.make_tree()
        for pool in POOLS:
            self.create_pool(pool)
        for pool in POOLS:
            self.warm_up(pool)

    def create_pool(self, pool):
        self.destroy_stale_pool(pool)
        out = self.pool(pool, '--pool-size', str(self.pool_size),
                        '--pool-create')
        self.pools_made.add(pool)
        if out.returncode:
            raise BenchError('cannot create the pool %s: %s'
                             % (POOLS[pool][0], out.stderr))
        show = self.pool(pool, '--pool-show')
        m = re.search(r'cgroups ([^\s,]+)', show.stdout)
        self.pool_cgroups[pool] = m.group(1) if m else None

    def warm_up(self, pool, timeout=10.0):
        """Every slot of pool used once before anything is timed: its
        limits written and, with keepers, its keeper started (--pool-create
        starts none; a slot's first run does).  As many runs of `trivial
        block` as there are slots, all at once, so each holds its own slot
        until all are running."""
        runs, pipes = [], []
        try:
            for k in range(self.pool_size):
                w = k % self.workers
                name = 'warmup-%s-%d' % (pool, k)
                wd = self.workdir(w)
                argv = self.runguard_argv(pool, w, 'trivial', ['block'],
                                          name=name)
                r_fd, w_fd = os.pipe()
                pipes.append(w_fd)
                with open(os.path.join(wd, name + '.out'), 'wb') as out, \
                        open(os.path.join(wd, name + '.err'), 'wb') as err:
                    runs.append((os.path.join(wd, name), subprocess.Popen(
                        argv, stdin=r_fd, stdout=out, stderr=err,
                        env=self.env(), cwd=wd)))
                os.close(r_fd)
            end = time.monotonic() + timeout
            while self.programs_running() < self.pool_size and \
                    time.monotonic() < end and \
                    all(p.poll() is None for _, p in runs):
                time.sleep(0.01)
        finally:
            for fd in pipes:
                os.close(fd)
            for _, p in runs:
                p.wait(timeout=30)
        problems = []
        for base, p in runs:
            with open(base + '.meta', errors='replace') as f:
                meta = f.read()
            with open(base + '.err', errors='replace') as f:
                err = f.read().strip()
            if p.returncode or 'internal-error' in meta:
                problems.append('exit %d, meta %r, stderr %r'
                                % (p.returncode, meta.strip(), err[:300]))
        if problems:
            raise BenchError('warm-up of the pool %s failed: %s'
                             % (POOLS[pool][0], '; '.join(problems)))
        if pool == 'resident' and len(self.keepers(pool)) < self.pool_size:
            raise BenchError('after the warm-up the pool %s has %d keepers,'
                             ' not %d' % (POOLS[pool][0],
                                          len(self.keepers(pool)),
                                          self.pool_size))

    def programs_running(self):
        """How many `trivial` processes of the run users there are."""
        n = 0
        for name in os.listdir('/proc'):
            if not name.isdigit():
                continue
            try:
                with open('/proc/%s/comm' % name) as f:
                    if f.read().strip() != 'trivial':
                        continue
                if os.stat('/proc/' + name).st_uid in self.uids:
                    n += 1
            except OSError:
                pass
        return n

    def keepers(self, pool):
        """pids of the keepers of pool (by their cgroup)."""
        cgroup = self.pool_cgroups.get(pool)
        found = []
        for name in os.listdir('/proc') if cgroup else ():
            if name.isdigit() and is_keeper(int(name), cgroup):
                found.append(int(name))
        return found

    def lock(self):
        """One bench/run at a time: they would share the pool directory."""
        self.lock_fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BenchError('another bench/run holds %s' % LOCK_FILE)

    def make_tree(self):
        os.makedirs(os.path.dirname(self.base), mode=0o755, exist_ok=True)
        os.makedirs(os.path.join(self.root, 'bin'), mode=0o755)
        for d in (self.base, self.root, os.path.join(self.root, 'bin')):
            os.chmod(d, 0o755)
        for p in PROGRAMS:
            dst = os.path.join(self.root, 'bin', p)
            shutil.copy(os.path.join(self.programs, p), dst)
            os.chmod(dst, 0o755)
        for w in range(self.workers):
            os.makedirs(self.workdir(w), mode=0o755)
            # DOMjudge's testdata.in: a regular file on stdin
            with open(os.path.join(self.workdir(w), 'testdata.in'), 'w') as f:
                f.write('1 2\n')
        # isolate from /etc/runguard.conf: the options say everything
        open(self.config, 'w').close()

    def destroy_stale_pool(self, pool):
        """A pool left by a killed bench/run (we hold the lock)."""
        if os.path.exists(POOLS[pool][0]):
            self.pool(pool, '--pool-destroy=force')

    def cleanup(self):
        """Undo setup(); safe after a partial setup and after Ctrl-C."""
        problems = []
        self.wait_runs_gone()
        for pool in POOLS:
            if pool in self.pools_made:
                problems += self.destroy_pool(pool)
        shutil.rmtree(self.base, ignore_errors=True)
        try:
            os.rmdir(os.path.dirname(self.base))
        except OSError:
            pass        # another bench's tree, or not empty
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None
        return problems

    def our_runguards(self):
        """pids of runguard processes with our chroot."""
        found = []
        for name in os.listdir('/proc'):
            try:
                with open('/proc/%s/cmdline' % name, 'rb') as f:
                    argv = f.read().split(b'\0')
            except (OSError, ValueError):
                continue
            if argv[0] == self.runguard.encode() and \
                    self.root.encode() in argv:
                found.append(int(name))
        return found

    def wait_runs_gone(self, timeout=10):
        """Runs of a killed driver finish on their own (hard limit 3 s)."""
        end = time.monotonic() + timeout
        while self.our_runguards() and time.monotonic() < end:
            time.sleep(0.1)

    def destroy_pool(self, pool):
        """Destroy pool; return problems (also keepers that outlive it)."""
        problems = self.destroy_pool_dir(pool)
        if pool not in self.pools_made:
            end = time.monotonic() + 5
            while self.keepers(pool) and time.monotonic() < end:
                time.sleep(0.1)
            left = self.keepers(pool)
            if left:
                problems.append('keepers of the pool %s left after its '
                                'destruction: pids %s' % (POOLS[pool][0],
                                                          left))
            self.remove_keeper_sockets(pool)
        return problems

    def remove_keeper_sockets(self, pool):
        """--pool-destroy leaves the keepers' sockets (slot-K.sock), and so
        the directory: noted in the results, then removed here."""
        directory = POOLS[pool][0]
        try:
            left = sorted(os.listdir(directory))
        except FileNotFoundError:
            return
        socks = [n for n in left if re.match(r'slot-[0-9]+\.sock$', n)]
        self.cleanup_notes.append(
            '%s still holds %s after --pool-destroy%s'
            % (directory, ', '.join(left) or 'nothing',
               '; bench/run removed the sockets' if socks else ''))
        for n in socks:
            os.unlink(os.path.join(directory, n))
        if socks == left:
            os.rmdir(directory)

    def destroy_pool_dir(self, pool):
        end = time.monotonic() + 5
        while True:
            out = self.pool(pool, '--pool-destroy')
            if out.returncode == 0:
                self.pools_made.discard(pool)
                return []
            if time.monotonic() > end:
                break
            time.sleep(0.2)
        force = self.pool(pool, '--pool-destroy=force')
        if force.returncode == 0:
            self.pools_made.discard(pool)
        msg = 'pool %s: destroy refused (%s); destroyed with force' % (
            POOLS[pool][0], out.stderr.strip())
        if force.returncode:
            msg = 'cannot destroy the pool %s: %s' % (POOLS[pool][0],
                                                      force.stderr)
        return [msg]

    def pool(self, pool, *args):
        directory, options = POOLS[pool]
        return subprocess.run([self.runguard, '--pool-dir', directory]
                              + list(options) + list(args), env=self.env(),
                              capture_output=True, text=True)

    # ---- commands --------------------------------------------------------

    def env(self):
        """The environment of the driver and of every runguard."""
        env = {'PATH': CALLER_PATH, 'LC_ALL': 'C', 'HOME': '/root',
               'RUNGUARD_CONFIG': self.config}
        # a sanitizer build of runguard takes its settings from the caller
        env.update({k: v for k, v in os.environ.items()
                    if k in ('ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS')})
        return env

    def workdir(self, worker):
        return os.path.join(self.work, str(worker))

    def pool_args(self, contender):
        if contender == 'per-run':
            return ['--pool-size', '0']
        directory, options = POOLS[POOL_OF[contender]]
        return ['--pool-size', str(self.pool_size), '--pool-dir',
                directory] + list(options)

    def pool_dir(self, contender):
        return POOLS[POOL_OF[contender]][0]

    def pool_cgroup(self, contender):
        return self.pool_cgroups.get(POOL_OF[contender])

    def runguard_argv(self, contender, worker, program, args, name=None):
        """The judgedaemon's test-case run, verbatim but for the pool
        options, the program and the file names (NAME.program.err and
        NAME.meta in the worker's directory; NAME: the contender)."""
        wd = self.workdir(worker)
        name = name or contender
        return ([self.runguard] + self.pool_args(contender) + [
            '-r', self.root, '--nproc=64', '--no-core', '--streamsize=8192',
            '--user=' + self.users[worker], '--group=' + self.rungroup,
            '--walltime=2:3', '--cputime=1:1.5', '--memsize=262144',
            '--filesize=8192',
            '--stderr=' + os.path.join(wd, name + '.program.err'),
            '--outmeta=' + os.path.join(wd, name + '.meta'),
            '--', '/bin/' + program] + list(args))

    def command(self, contender, worker, program, args=(), self_line=False):
        wd = self.workdir(worker)
        files = [os.path.join(wd, 'testdata.in'),
                 os.path.join(wd, contender + '.out'),
                 os.path.join(wd, contender + '.err')]
        if contender == 'floor':
            argv = [os.path.join(self.root, 'bin', program)] + list(args)
            meta = None
        else:
            argv = self.runguard_argv(contender, worker, program, args)
            meta = os.path.join(wd, contender + '.meta')
        return Command(contender, *files, meta, self_line, tuple(argv))
