# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared fixtures and helpers for the runguard integration tests.

Environment (set by tests/integration/meson.build):
  RUNGUARD                     full path of the runguard binary
  RG_PROGRAMS                  directory with the test programs (tests/programs)
  RG_CHROOT_PREFIX             build option chroot_prefix
  RG_CGROUP_PARENT             build option cgroup_parent
  RG_VALID_USERS               VALID_USERS of the build (comma-separated globs)
  RG_RUNUSER                   build option runuser
  RUNGUARD_REQUIRE_PRIVILEGED  "1": missing root/cgroups is a failure, not a skip

The tests need root and real cgroups.  They create a dedicated run user and
group (RUNUSER-rgtest, DOMjudge style) if missing, a chroot directory below
the chroot prefix and a temporary working directory; they remove what they
created (except the user and group, which are left for later runs).
"""

import functools
import grp
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

RUNGUARD = os.environ.get('RUNGUARD', '')
PROGRAMS = os.environ.get('RG_PROGRAMS', '')
CHROOT_PREFIX = os.environ.get('RG_CHROOT_PREFIX',
                               '/opt/domjudge/judgehost/judgings')
CGROUP_PARENT = os.environ.get('RG_CGROUP_PARENT', 'runguard')
RUNUSER = os.environ.get('RG_RUNUSER', 'domjudge-run')
VALID_USERS = os.environ.get('RG_VALID_USERS') or '%s,%s-*' % (RUNUSER, RUNUSER)
REQUIRE_PRIVILEGED = os.environ.get('RUNGUARD_REQUIRE_PRIVILEGED') == '1'

CGROOT = '/sys/fs/cgroup'
V1_CONTROLLERS = ('memory', 'cpuacct', 'freezer', 'cpu', 'cpuset')

# The environment runguard itself is started with (much like sudo's reset
# environment), plus a marker to check that the environment is reset.
CALLER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
CALLER_ENV = {
    'PATH': CALLER_PATH,
    'RG_MARKER': 'outer-environment',
    'HOME': '/root',
    'LC_ALL': 'C',
}
# A sanitizer build of runguard takes its settings from the caller; runguard
# resets the command's environment, so the tests see no difference.
CALLER_ENV.update({k: v for k, v in os.environ.items()
                   if k in ('ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS')})

PROGRAM_NAMES = (
    'hello', 'exitcode', 'signal', 'spin', 'sleep', 'memhog', 'output',
    'envdump', 'forker', 'forkbomb', 'probe', 'stopself', 'ignore-term',
    'fake-tle', 'readstdin', 'writefile', 'compare', 'printargs',
    'static-hello',
)

MIB = 1 << 20

# Every value of memory-method (how memory-bytes was measured).
MEMORY_METHODS = ('memsw.max_usage_in_bytes', 'max_usage_in_bytes',
                  'memory.peak', 'memory.peak(fd-reset)',
                  'memory.current(sampled)', 'rusage.maxrss')

# Expected value format of every meta key.
META_VALUE_RE = {
    'internal-error': r'.+',
    'memory-bytes': r'[0-9]+',
    'exitcode': r'[0-9]+',
    'signal': r'[0-9]+',
    'wall-time': r'[0-9]+\.[0-9]{3}',
    'user-time': r'[0-9]+\.[0-9]{3}',
    'sys-time': r'[0-9]+\.[0-9]{3}',
    'cpu-time': r'[0-9]+\.[0-9]{3}',
    'time-used': r'(wall-time|cpu-time)',
    'time-result': r'(|soft-timelimit|hard-timelimit)',
    'output-truncated': r'(|stdout|stderr|stdout,stderr)',
    'stdin-bytes': r'0',
    'stdout-bytes': r'[0-9]+',
    'stderr-bytes': r'[0-9]+',
    # runguard's own keys, after DOMjudge's (docs/meta-file.md)
    'memory-method': '(%s)' % '|'.join(re.escape(m) for m in MEMORY_METHODS),
    'major-faults': r'[0-9]+',
    'wait-cpu-time': r'[0-9]+\.[0-9]{3}',
    'wait-io-time': r'[0-9]+\.[0-9]{3}',
    'wait-memory-time': r'[0-9]+\.[0-9]{3}',
    'host-pressure': (r'cpu=[0-9]+\.[0-9]% io=[0-9]+\.[0-9]% '
                      r'memory=[0-9]+\.[0-9]%'),
    'wall-time-cause': r'(none|program|host-cpu|host-io|host-memory|'
                       r'own-memory-limit)',
    'wait-method': r'(cgroup-psi|unified-psi|schedstat)',
}

# The cgroup namespace of the host: runguard joins a hybrid host's unified
# hierarchy only from there (lib/cgroup/cgroup_v1.c).
INIT_CGROUP_NS = 'cgroup:[4026531835]'


def _readable(path):
    try:
        with open(path) as f:
            f.read()
        return True
    except OSError:
        return False


def unified_mount():
    """A hybrid host's cgroup2 mount (not /sys/fs/cgroup), or None."""
    try:
        if os.readlink('/proc/self/ns/cgroup') != INIT_CGROUP_NS:
            return None
        with open('/proc/self/mountinfo') as f:
            for line in f:
                fields, _, rest = line.partition(' - ')
                fields = fields.split()
                if (rest.startswith('cgroup2 ') and fields[3] == '/'
                        and fields[4] != CGROOT):
                    return fields[4]
    except OSError:
        pass
    return None


@functools.lru_cache(maxsize=None)
def wait_keys():
    """The keys of where the wall time went that a run's meta file has on
    this host (docs/meta-file.md): the run's waits from its cgroup's
    pressure files (cgroup v2, or a hybrid host's unified hierarchy), or
    its CPU wait alone from /proc/PID/schedstat; the host's pressure."""
    keys = []
    mode = cgroup_mode()
    psi = _readable('/proc/pressure/cpu')
    if psi and (mode == 'v2' or (mode == 'v1' and unified_mount())):
        keys += ['wait-cpu-time', 'wait-io-time', 'wait-memory-time']
    elif _readable('/proc/self/schedstat'):
        keys += ['wait-cpu-time']
    if psi:
        keys.append('host-pressure')
    if keys and keys[0] == 'wait-cpu-time':
        keys += ['wall-time-cause', 'wait-method']
    return keys



def exit_status(result):
    """meson's exit status for a unittest result: 0 passed, 1 failures, 77
    when every test was skipped (not root, no cgroups, ...), which is a
    failure (1) with RUNGUARD_REQUIRE_PRIVILEGED=1."""
    if not result.wasSuccessful():
        return 1
    # a class that cannot run is one skip and no test run
    if result.skipped and len(result.skipped) >= result.testsRun:
        if REQUIRE_PRIVILEGED:
            print('every test was skipped; RUNGUARD_REQUIRE_PRIVILEGED=1',
                  file=sys.stderr)
            return 1
        return 77
    return 0

def expected_meta_keys(signal=False, truncated=False, internal_error=False,
                       memory_method=True, window=True):
    """The key sequence of a meta file with the keys of a run.

    internal_error: the file starts with internal-error (the child's set-up
    failed, or the cleanup of a completed run did); the keys of the run
    follow, runguard's own keys included.  A file that holds only internal-error
    (runguard failed before the command could run) is not described here.
    window=False: the timed window never opened (a child the OOM killer
    took in its set-up), so there are no waits to report.
    """
    keys = ['internal-error'] if internal_error else []
    keys += ['memory-bytes', 'exitcode']
    if signal:
        keys.append('signal')
    keys += ['wall-time', 'user-time', 'sys-time', 'cpu-time', 'time-used',
             'time-result']
    if truncated:
        keys.append('output-truncated')
    keys += ['stdin-bytes', 'stdout-bytes', 'stderr-bytes']
    if memory_method:
        keys += ['memory-method', 'major-faults']
        # measured in the timed window, which a failed set-up never opened
        if window and not internal_error:
            keys += wait_keys()
    return keys


# ---------------------------------------------------------------------------
# Preconditions
# ---------------------------------------------------------------------------

def cgroup_mode():
    """'v1' (hybrid/legacy), 'v2' (unified) or None."""
    if os.path.exists(os.path.join(CGROOT, 'memory', 'memory.limit_in_bytes')):
        return 'v1'
    if os.path.exists(os.path.join(CGROOT, 'cgroup.controllers')):
        return 'v2'
    return None


def unmet_precondition():
    """Return a reason string if the suite cannot run here, else None."""
    if not RUNGUARD:
        return 'RUNGUARD is not set (run through meson test)'
    if not os.access(RUNGUARD, os.X_OK):
        return 'runguard binary %s is missing' % RUNGUARD
    if not PROGRAMS or not os.path.isdir(PROGRAMS):
        return 'RG_PROGRAMS (%s) is not a directory' % PROGRAMS
    for name in PROGRAM_NAMES:
        if not os.access(os.path.join(PROGRAMS, name), os.X_OK):
            return 'test program %s is missing in %s' % (name, PROGRAMS)
    if os.geteuid() != 0:
        return 'not running as root (runguard tests need root)'
    mode = cgroup_mode()
    if mode is None:
        return 'no cgroup hierarchy found under %s' % CGROOT
    if mode == 'v1':
        for ctrl in V1_CONTROLLERS:
            if not os.path.isdir(os.path.join(CGROOT, ctrl)):
                return 'cgroup v1 controller %s is not mounted' % ctrl
    if not shutil.which('useradd') or not shutil.which('groupadd'):
        if not _test_user_exists():
            return 'useradd/groupadd not available to create the run user'
    return None


def skip_or_fail(reason):
    """Skip with a printed reason, or fail if privileged runs are required."""
    print('runguard integration: %s' % reason, file=sys.stderr)
    if REQUIRE_PRIVILEGED:
        raise AssertionError('RUNGUARD_REQUIRE_PRIVILEGED=1 but cannot run: '
                             + reason)
    raise unittest.SkipTest(reason)


# ---------------------------------------------------------------------------
# Run user / group
# ---------------------------------------------------------------------------

def test_user_name():
    """A dedicated user name that matches VALID_USERS (a glob pattern)."""
    for pat in VALID_USERS.split(','):
        pat = pat.strip()
        if '*' in pat:
            return pat.replace('*', 'rgtest', 1).replace('*', '')
    return VALID_USERS.split(',')[0].strip()


RUN_USER = test_user_name()
RUN_GROUP = RUN_USER


def _test_user_exists():
    try:
        pwd.getpwnam(RUN_USER)
        grp.getgrnam(RUN_GROUP)
        return True
    except KeyError:
        return False


def ensure_account(user, group):
    """Create group and user (DOMjudge style, as scripts/sample-judging
    does) if they are missing; return (uid, gid). Also used by bench/."""
    try:
        grp.getgrnam(group)
    except KeyError:
        subprocess.run(['groupadd', group], check=True)
    try:
        pwd.getpwnam(user)
    except KeyError:
        subprocess.run(['useradd', '-d', '/nonexistent', '-g', group,
                        '-M', '-s', '/bin/false', user], check=True)
    return pwd.getpwnam(user).pw_uid, grp.getgrnam(group).gr_gid


def ensure_run_user():
    """Create RUN_GROUP and RUN_USER if they are missing."""
    return ensure_account(RUN_USER, RUN_GROUP)


# ---------------------------------------------------------------------------
# Leftover detection: cgroups and processes
# ---------------------------------------------------------------------------

def cgroup_parent_dirs():
    if cgroup_mode() == 'v2':
        return [os.path.join(CGROOT, CGROUP_PARENT)]
    dirs = [os.path.join(CGROOT, c, CGROUP_PARENT) for c in V1_CONTROLLERS]
    # a hybrid host's unified hierarchy: a run's pressure totals
    unified = unified_mount()
    if unified:
        dirs.append(os.path.join(unified, CGROUP_PARENT))
    return dirs


def cgroup_children():
    """Set of child directories below our parent cgroup(s)."""
    found = set()
    for parent in cgroup_parent_dirs():
        try:
            with os.scandir(parent) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        found.add(e.path)
        except FileNotFoundError:
            pass
    return found


def procs_of_uid(uid):
    """[(pid, state, ppid, name)] of processes with uid as real/eff/saved uid."""
    result = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/status' % d) as f:
                status = f.read()
        except OSError:
            continue
        fields = {}
        for line in status.splitlines():
            k, _, v = line.partition(':')
            fields[k] = v.strip()
        uids = fields.get('Uid', '').split()
        if str(uid) in uids[:3]:
            result.append((int(d), fields.get('State', '?'),
                           fields.get('PPid', '?'), fields.get('Name', '?')))
    return result


def _proc_text(pid, name):
    try:
        with open('/proc/%d/%s' % (pid, name), 'rb') as f:
            return f.read().decode(errors='replace')
    except OSError:
        return ''


def stuck_report(pid):
    """What a call that did not finish was doing: pid, its descendants and
    every runguard process (keepers, runners and their children), each
    with its state, wait channel and kernel stack. A hang in a kernel
    boot of the lab is otherwise gone with the boot."""
    procs = {}
    for e in os.listdir('/proc'):
        if e.isdigit():
            stat = _proc_text(int(e), 'stat')
            if stat:
                # pid (comm) state ppid ...: comm may hold spaces
                comm = stat[stat.index('(') + 1:stat.rindex(')')]
                rest = stat[stat.rindex(')') + 2:].split()
                procs[int(e)] = (comm, rest[0], int(rest[1]))
    keep = {p for p, (comm, _, _) in procs.items()
            if p == pid or comm.startswith('runguard')}
    grew = True
    while grew:
        grew = False
        for p, (_, _, ppid) in procs.items():
            if ppid in keep and p not in keep:
                keep.add(p)
                grew = True
    lines = []
    for p in sorted(keep):
        comm, state, ppid = procs[p]
        lines.append('%d ppid %d %s %s wchan %s: %s' % (
            p, ppid, state, comm, _proc_text(p, 'wchan') or '-',
            _proc_text(p, 'cmdline').replace('\0', ' ')[:200]))
        lines += ['    ' + x for x in _proc_text(p, 'stack').splitlines()]
    return '\n'.join(lines)


def sanitizer_build():
    """The -fsanitize= of the build under test (RG_SANITIZE), or None."""
    value = os.environ.get('RG_SANITIZE', 'none')
    return None if value == 'none' else value


def wait_until(pred, timeout, interval=0.05):
    """Poll pred() until it returns a falsy value or timeout; return last."""
    deadline = time.monotonic() + timeout
    while True:
        val = pred()
        if not val or time.monotonic() >= deadline:
            return val
        time.sleep(interval)


def kill_uid_procs(uid):
    """SIGKILL (by pid) every process of the test user; wait a little."""
    for pid, _, _, _ in procs_of_uid(uid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_until(lambda: procs_of_uid(uid), 5)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------

class Result:
    def __init__(self, argv, proc, meta_path, elapsed):
        self.argv = argv
        self.rc = proc.returncode
        self.out = proc.stdout if proc.stdout is not None else b''
        self.err = proc.stderr if proc.stderr is not None else b''
        self.elapsed = elapsed
        self.meta_path = meta_path
        self.meta_text = None
        self.meta = None          # list of (key, value), in file order
        if meta_path and os.path.exists(meta_path):
            with open(meta_path, 'rb') as f:
                self.meta_text = f.read().decode('utf-8', 'replace')
            self.meta = []
            for line in self.meta_text.split('\n')[:-1]:
                k, sep, v = line.partition(': ')
                if not sep and line.endswith(':'):
                    k, v = line[:-1], None   # malformed: no space
                self.meta.append((k, v))

    @property
    def m(self):
        return dict(self.meta or [])

    @property
    def keys(self):
        return [k for k, _ in (self.meta or [])]

    def f(self, key):
        return float(self.m[key])

    def i(self, key):
        return int(self.m[key])

    @property
    def stdout(self):
        return self.out.decode('utf-8', 'replace')

    @property
    def stderr(self):
        return self.err.decode('utf-8', 'replace')

    def describe(self):
        return ('argv: %s\nrunguard exit: %s (%.2f s)\n--- stdout ---\n%s\n'
                '--- stderr ---\n%s\n--- meta ---\n%s' % (
                    ' '.join(self.argv), self.rc, self.elapsed,
                    self.stdout[-3000:], self.stderr[-3000:], self.meta_text))


# ---------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------


def run_redirected(argv, cwd, env, stdin=None, stdout=None, stderr=None,
                   meta_path=None, timeout=60, **popen):
    """Run argv as a judge's shell line would: stdin/stdout/stderr are paths
    relative to cwd (None: /dev/null; stderr subprocess.STDOUT: 2>&1).
    res.err holds the stderr file. popen: more subprocess.run arguments
    (user=, group=: the judgedaemon's account)."""
    files = []

    def opened(path, mode):
        if path == subprocess.STDOUT:
            return path
        f = open(os.devnull if path is None else os.path.join(cwd, path),
                 mode)
        files.append(f)
        return f
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env,
                              stdin=opened(stdin, 'rb'),
                              stdout=opened(stdout, 'wb'),
                              stderr=opened(stderr, 'wb'),
                              timeout=timeout, **popen)
    finally:
        for f in files:
            f.close()
    proc.stdout = proc.stderr = b''
    res = Result(argv, proc, meta_path, time.monotonic() - start)
    if isinstance(stderr, str):
        with open(os.path.join(cwd, stderr), 'rb') as f:
            res.err = f.read()
    return res


def make_pass_dir(job, program, input_data, testcase=1, pass_no=1,
                  link=False):
    """The directory of a test-case run as DOMjudge's judgedaemon lays it
    out (spec 4.4 A): JOB/testcaseNNNNN/PASS with execdir/program (a copy
    of the file `program`, or a hard link to it as the judgedaemon makes),
    write_tmp, testdata.in and the output files it pre-creates. Returns
    that directory."""
    passdir = os.path.join(job, 'testcase%05d' % testcase, str(pass_no))
    os.makedirs(os.path.join(passdir, 'execdir'), 0o755)
    os.chmod(os.path.dirname(passdir), 0o755)
    prog = os.path.join(passdir, 'execdir', 'program')
    (os.link if link else shutil.copy)(program, prog)
    os.chmod(prog, 0o755)
    os.mkdir(os.path.join(passdir, 'write_tmp'), 0o777)
    os.chmod(os.path.join(passdir, 'write_tmp'), 0o777)
    with open(os.path.join(passdir, 'testdata.in'), 'wb') as f:
        f.write(input_data)
    for name in ('program.out', 'program.err', 'program.meta',
                 'runguard.err'):
        open(os.path.join(passdir, name), 'wb').close()
    return passdir


def make_compile_dir(work, script, sources, front, entry_point=None,
                     memlimit_kb=524288, script_file_kb=65536):
    """A compile as the judgedaemon runs it (spec 4.4 C): WORK/compile
    (a+rwx, holding sources: {name: bytes}) and WORK/compile-script/run (a
    copy of the file `script`). front: the argv before -r ([sudo -n]
    runguard [-P N] -u U -g G). Returns the argv, without the shell's
    output redirection."""
    compile_dir = os.path.join(work, 'compile')
    script_dir = os.path.join(work, 'compile-script')
    os.mkdir(compile_dir)
    os.chmod(compile_dir, 0o777)          # a+rwx during the compile
    os.mkdir(script_dir, 0o755)
    shutil.copy(script, os.path.join(script_dir, 'run'))
    os.chmod(os.path.join(script_dir, 'run'), 0o755)
    for name, data in sources.items():
        with open(os.path.join(compile_dir, name), 'wb') as f:
            f.write(data)
    env = ['-V', 'ENTRY_POINT=' + entry_point] if entry_point else []
    return list(front) + [
        '-r', compile_dir + '/..', '-d', '/compile',
        '-m', '2097152', '-t', '30', '--no-core',
        '-f', str(script_file_kb), '-s', str(script_file_kb),
        '-M', work + '/compile.meta'] + env + [
        '--', '/compile-script/run', 'program', str(memlimit_kb)] + \
        list(sources)


class RGTestCase(unittest.TestCase):
    """Base class: fixtures per class, leftover checks after every test."""

    maxDiff = None
    uid = gid = None
    workdir = None        # temp dir (0755) with bin/ holding the programs
    chroot = None         # <chroot_prefix>/rgtest-<pid>
    _created_prefix_dirs = ()

    @classmethod
    def setUpClass(cls):
        reason = unmet_precondition()
        if reason:
            skip_or_fail(reason)
        cls.uid, cls.gid = ensure_run_user()

        cls.workdir = tempfile.mkdtemp(prefix='rgtest-')
        os.chmod(cls.workdir, 0o755)
        cls.bindir = os.path.join(cls.workdir, 'bin')
        os.mkdir(cls.bindir, 0o755)
        for name in PROGRAM_NAMES:
            dst = os.path.join(cls.bindir, name)
            shutil.copy(os.path.join(PROGRAMS, name), dst)
            os.chmod(dst, 0o755)

        # The chroot: below the prefix, created here, removed in teardown.
        created = []
        path = '/'
        for part in os.path.normpath(CHROOT_PREFIX).strip('/').split('/'):
            path = os.path.join(path, part)
            if not os.path.isdir(path):
                os.mkdir(path, 0o755)
                created.append(path)
        cls._created_prefix_dirs = created
        cls.chroot = os.path.join(os.path.realpath(CHROOT_PREFIX),
                                  'rgtest-%d' % os.getpid())
        if os.path.exists(cls.chroot):
            shutil.rmtree(cls.chroot)
        os.mkdir(cls.chroot, 0o755)
        for d in ('bin', 'work', 'tmp'):
            os.mkdir(os.path.join(cls.chroot, d), 0o755)
        os.chmod(os.path.join(cls.chroot, 'tmp'), 0o1777)
        shutil.copy(os.path.join(PROGRAMS, 'static-hello'),
                    os.path.join(cls.chroot, 'bin', 'static-hello'))
        os.chmod(os.path.join(cls.chroot, 'bin', 'static-hello'), 0o755)

    @classmethod
    def tearDownClass(cls):
        if cls.chroot and os.path.isdir(cls.chroot):
            shutil.rmtree(cls.chroot, ignore_errors=True)
        for d in reversed(cls._created_prefix_dirs):
            try:
                os.rmdir(d)
            except OSError:
                pass
        if cls.workdir and os.path.isdir(cls.workdir):
            shutil.rmtree(cls.workdir, ignore_errors=True)

    # -- per test ----------------------------------------------------------

    def setUp(self):
        # Start clean: nothing of the test user may run (earlier failures).
        left = wait_until(lambda: procs_of_uid(self.uid), 3)
        if left:
            kill_uid_procs(self.uid)
        self._cgroups_before = cgroup_children()
        self.tdir = os.path.join(self.workdir, self._testMethodName)
        os.mkdir(self.tdir, 0o755)

    def tearDown(self):
        problems = []
        new_cg = wait_until(lambda: cgroup_children() - self._cgroups_before,
                            1.0)
        if new_cg:
            problems.append('cgroup directories left behind: %s'
                            % ', '.join(sorted(new_cg)))
        left = wait_until(lambda: procs_of_uid(self.uid), 3.0)
        if left:
            problems.append(
                'processes of %s left after 3 s (pid, state, ppid, name): %s'
                % (RUN_USER, left))
            kill_uid_procs(self.uid)
        # Leftover cgroup directories are only reported, not removed: another
        # runguard using the same parent may be running concurrently, and an
        # empty directory cannot be told apart from its fresh run cgroup.
        if problems:
            self.fail('; '.join(problems))

    # -- helpers -----------------------------------------------------------

    def prog(self, name):
        return os.path.join(self.bindir, name)

    def path(self, *parts):
        return os.path.join(self.tdir, *parts)

    def job_dir(self, name):
        """A judging directory in the chroot, removed after the test."""
        job = os.path.join(self.chroot, name)
        os.mkdir(job, 0o755)
        self.addCleanup(shutil.rmtree, job, True)
        return job

    def make_testcase_dir(self, job_name, program, input_data):
        """make_pass_dir in a new job for the test program `program`."""
        return make_pass_dir(self.job_dir(job_name),
                             os.path.join(PROGRAMS, program), input_data)

    def make_compile_job(self, job_name):
        """make_compile_dir in a new job: main.c, compiled by static-hello
        (which reports what it sees). Returns (JOB, the runguard argv)."""
        work = self.job_dir(job_name)
        argv = make_compile_dir(
            work, os.path.join(PROGRAMS, 'static-hello'),
            {'main.c': b'int main(void) { return 0; }\n'},
            [RUNGUARD, '-u', RUN_USER, '-g', RUN_GROUP], entry_point='main')
        return work, argv

    def user_opts(self):
        return ['-u', RUN_USER, '-g', RUN_GROUP]

    def run_raw(self, argv, cwd=None, stdin=subprocess.DEVNULL, timeout=60,
                env=None, meta_path=None, pass_fds=(), preexec_fn=None,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE):
        """Run runguard with exactly argv (without the binary)."""
        full = [RUNGUARD] + list(argv)
        start = time.monotonic()
        with subprocess.Popen(
                full, cwd=cwd or self.tdir, stdin=stdin,
                stdout=stdout, stderr=stderr,
                env=env if env is not None else dict(CALLER_ENV),
                pass_fds=pass_fds, preexec_fn=preexec_fn) as p:
            try:
                out, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                # the processes as they hang, before the kill changes them
                report = stuck_report(p.pid)
                p.kill()
                out, err = p.communicate()
                self.fail('runguard did not finish within %s s: %s\n'
                          'stdout: %r\nstderr: %r\nprocesses:\n%s'
                          % (timeout, ' '.join(full), (out or b'')[-2000:],
                             (err or b'')[-2000:], report))
        proc = subprocess.CompletedProcess(full, p.returncode, out, err)
        return Result(full, proc, meta_path, time.monotonic() - start)

    def rg(self, *args, user=True, meta='meta', **kw):
        """runguard [-u U -g G] [-M meta] ARGS...; ARGS ends with the command."""
        argv = []
        if user:
            argv += self.user_opts()
        meta_path = None
        if meta:
            meta_path = self.path(meta)
            argv += ['-M', meta_path]
        argv += list(args)
        return self.run_raw(argv, meta_path=meta_path, **kw)

    # -- assertions --------------------------------------------------------

    def assertMeta(self, res, signal=False, truncated=False,
                   internal_error=False, measured=True, window=True):
        """Exact key sequence and per-line format of the meta file;
        measured=False: refused before anything ran, so runguard's own
        measurements (memory-method, major-faults) are absent; window=False:
        the timed window never opened (expected_meta_keys)."""
        self.assertIsNotNone(res.meta_text, 'no meta file written\n'
                             + res.describe())
        self.assertTrue(res.meta_text.endswith('\n'),
                        'meta file does not end in a newline\n'
                        + res.describe())
        for line in res.meta_text.split('\n')[:-1]:
            m = re.fullmatch(r'([a-z-]+): (.*)', line)
            self.assertIsNotNone(m, 'malformed meta line %r\n%s'
                                 % (line, res.describe()))
            key, val = m.groups()
            pat = META_VALUE_RE.get(key)
            self.assertIsNotNone(pat, 'unknown meta key %r\n%s'
                                 % (key, res.describe()))
            self.assertRegex(val, r'\A' + pat + r'\Z',
                             'bad value for %s\n%s' % (key, res.describe()))
        self.assertEqual(res.keys, expected_meta_keys(signal, truncated,
                                                      internal_error,
                                                      measured, window),
                         'meta key sequence\n' + res.describe())
        if internal_error:
            # "<argv0>: <message>[: <errno text>]"
            self.assertRegex(res.m['internal-error'], r'\A\S+: \S.*',
                             res.describe())
        else:
            self.assertNotIn('internal-error', res.keys)
        # runguard's exit status is the exitcode value.
        self.assertEqual(res.rc, res.i('exitcode'), res.describe())

    def assertNoMeta(self, res):
        self.assertFalse(os.path.exists(res.meta_path),
                         'meta file written although it should not be\n'
                         + res.describe())

    def assertRun(self, res, exitcode=0, time_result='', **kw):
        """A normal completed run: format, exit code and time result."""
        self.assertMeta(res, **kw)
        self.assertEqual(res.i('exitcode'), exitcode, res.describe())
        self.assertEqual(res.m['time-result'], time_result, res.describe())

    def wait_for_user_process(self, name=None, timeout=10):
        """Wait until a process of the run user (optionally named) exists."""
        def missing():
            return not [p for p in procs_of_uid(self.uid)
                        if name is None or p[3] == name[:15]]
        still_missing = wait_until(missing, timeout)
        self.assertFalse(still_missing, 'no process %s of %s appeared'
                         % (name, RUN_USER))


def main():
    """Entry point: python3 -m / run.py, exit 77 when nothing could run."""
    unittest.main(module='__main__', verbosity=2)
