# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the contenders run in: run users, a chroot below the build's
CHROOT_PREFIX, work directories, the benchmark's pool, and the command
lines (DOMjudge's test-case run).  Everything made here is removed by
cleanup(), except the run users (left for later runs, as the tests do)."""

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
        self.pool_made = False
        self.pool_cgroup = None

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
        self.destroy_stale_pool()
        out = self.pool('--pool-size', str(self.pool_size), '--pool-create')
        self.pool_made = True
        if out.returncode:
            raise BenchError('cannot create the pool: %s' % out.stderr)
        show = self.pool('--pool-show')
        m = re.search(r'cgroups (\S+)', show.stdout)
        self.pool_cgroup = m.group(1) if m else None

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

    def destroy_stale_pool(self):
        """A pool left by a killed bench/run (we hold the lock)."""
        if os.path.exists(POOL_DIR):
            self.pool('--pool-destroy=force')

    def cleanup(self):
        """Undo setup(); safe after a partial setup and after Ctrl-C."""
        problems = []
        self.wait_runs_gone()
        if self.pool_made:
            problems += self.destroy_pool()
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

    def destroy_pool(self):
        end = time.monotonic() + 5
        while True:
            out = self.pool('--pool-destroy')
            if out.returncode == 0:
                self.pool_made = False
                return []
            if time.monotonic() > end:
                break
            time.sleep(0.2)
        force = self.pool('--pool-destroy=force')
        self.pool_made = force.returncode != 0
        msg = 'pool destroy refused (%s); destroyed with force' % \
            out.stderr.strip()
        if force.returncode:
            msg = 'cannot destroy the pool %s: %s' % (POOL_DIR, force.stderr)
        return [msg]

    def pool(self, *args):
        return subprocess.run([self.runguard, '--pool-dir', POOL_DIR]
                              + list(args), env=self.env(),
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
        return ['--pool-size', str(self.pool_size), '--pool-dir', POOL_DIR]

    def runguard_argv(self, contender, worker, program, args):
        """The judgedaemon's test-case run, verbatim but for the pool
        options, the program and the file names."""
        wd = self.workdir(worker)
        return ([self.runguard] + self.pool_args(contender) + [
            '-r', self.root, '--nproc=64', '--no-core', '--streamsize=8192',
            '--user=' + self.users[worker], '--group=' + self.rungroup,
            '--walltime=2:3', '--cputime=1:1.5', '--memsize=262144',
            '--filesize=8192',
            '--stderr=' + os.path.join(wd, contender + '.program.err'),
            '--outmeta=' + os.path.join(wd, contender + '.meta'),
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
