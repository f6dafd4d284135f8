# SPDX-License-Identifier: LGPL-2.1-or-later
"""DOMjudge's judging flow around runguard, as a DOMjudge 9.0 judgehost
runs it (issue 11): shared by tests/integration/test_domjudge_flow.py and
bench/domjudge-flow.

Faithful to the real caller (../shared/spec/domjudge-runguard.md §4):
- the judgedaemon is a non-root account (JUDGE_USER) that runs
  `sudo -n RUNGUARD ...`, allowed by a sudoers snippet like DOMjudge's
  (`USER ALL=(root) NOPASSWD: RUNGUARD *`) under the distribution's
  /etc/sudoers: sudo resets the environment (RUNGUARD_* included) and
  hands runguard sudo's rlimits;
- the option lists of §4.4 A (the test-case run through the default run
  script, in 9.0's testcase_run.sh form, runguard's stderr to
  runguard.err), B (compare, 9.0 form) and C (compile.sh), in a judging
  directory JUDGINGS/<submission>/<judging>/ with a new testcaseNNNNN/1
  directory for every test case and `-r "$PWD/../.."` given from there;
- the chroot as chroot-startstop.sh makes it in the judging directory:
  the pre-built chroot's etc, usr, lib, bin and lib64 bind-mounted and
  remounted read-only (symlinks recreated as symlinks), /proc
  bind-mounted, /dev/{random,urandom,null} copied;
- a pool is configured only through /etc/runguard.conf, the one way
  under sudo: written for each pooled call, absent for per-run calls.

The pre-built chroot is the host's own: its /usr (a read-only bind), its
bin, lib and lib64 (symlinks into usr on a merged-/usr host) and a few
files of /etc; the compile step runs the host's gcc inside it.
Session.cleanup() undoes everything and returns the problems it found:
mounts left (checked in /proc/self/mountinfo), pool cgroups left, a
/etc/runguard.conf that was there before (restored), the sudoers snippet,
the judge account (removed only if made here), the directories.
"""

import contextlib
import fcntl
import glob
import os
import pwd
import grp
import re
import shutil
import subprocess
import tempfile
import time

from rgtest import (CGROOT, ensure_account, make_compile_dir, make_pass_dir,
                    procs_of_uid, run_redirected, wait_until)

JUDGE_USER = 'rgflow-judge'
JUDGE_GECOS = 'runguard DOMjudge-flow harness'
SUDOERS = '/etc/sudoers.d/rgflow-judge'
SUDOERS_NEW = '/etc/sudoers.d/.rgflow-judge.new'    # sudo skips names with .
CONF = '/etc/runguard.conf'
CONF_NEW = '/etc/.runguard.conf.rgflow-new'
CONF_SAVED = '/etc/runguard.conf.rgflow-saved'
MARKER = '# written by the runguard DOMjudge-flow harness (djflow.py)'
LOCK_FILE = '/run/rgflow.lock'
MODES = ('per-run', 'pooled', 'resident')
# the pooled modes: what /etc/runguard.conf adds to the pool's settings
POOL_SETTINGS = {'pooled': 'pool-keeper = no\n',
                 'resident': 'pool-keeper = yes\n'}

# chroot-startstop.sh on x86_64, and the /etc files our chroot needs
SUBDIRMOUNTS = ('etc', 'usr', 'lib', 'bin', 'lib64')
ETC_FILES = ('passwd', 'group', 'nsswitch.conf', 'hosts', 'ld.so.cache',
             'ld.so.conf', 'ld.so.conf.d')
JUDGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

# DOMjudge's defaults (time limit 1 s, timelimit_overshoot "1s|10%",
# output_limit, process_limit, script_*), except the memory limit: 64 MiB
# instead of 2 GiB, so that the memory-limit submission reaches it well
# within the time limit (touching 256 MiB took 1 s of CPU on the
# development VM: a time limit instead of a run error).
TIME_LIMIT = 1
HARD_TIME_LIMIT = 2
MEMORY_KB = 65536
OUTPUT_KB = 8192
PROCESS_LIMIT = 64
SCRIPT_TIME = 30
SCRIPT_MEMORY_KB = 2097152
DEFAULT_MEMORY_KB = 2097152     # DOMjudge's memory_limit default
SCRIPT_FILE_KB = 2621440

# The default run script and the C compile script, as DOMjudge ships them
# in effect: input and output redirected; gcc -static.
RUN_SCRIPT = '''#!/bin/sh
# run script: TESTIN PROGOUT COMMAND...
TESTIN="$1"; shift
PROGOUT="$1"; shift
exec "$@" < "$TESTIN" > "$PROGOUT"
'''
C_COMPILE_SCRIPT = '''#!/bin/sh
# compile script for C: DEST MEMLIMIT SOURCE...
DEST="$1"; shift
MEMLIMIT="$1"; shift
gcc -x c -Wall -O2 -static -pipe -o "$DEST" "$@" -lm
'''

# Every submission solves one problem: print the sum of the integers of
# the input. BODY runs between reading and printing, TAIL after it.
SUBMISSION = r'''#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[1 << 16];
static char *volatile keep;

static long long input_sum(void)
{
	long long sum = 0, v = 0;
	int neg = 0, in = 0;
	ssize_t n;

	while ((n = read(0, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c >= '0' && c <= '9') {
				v = v * 10 + (c - '0');
				in = 1;
				continue;
			}
			if (in)
				sum += neg ? -v : v;
			v = in = 0;
			neg = c == '-';
		}
	if (in)
		sum += neg ? -v : v;
	return sum;
}

int main(int argc, char **argv)
{
	long long sum = input_sum();

	(void)argv;
%(body)s
	printf("%%lld\n", sum);
	fflush(stdout);
%(tail)s
	return 0;
}
'''

_VARIANTS = {
    'correct': ('', ''),
    'wrong-answer': ('\tsum++;', ''),
    'timelimit-busy': ('\tfor (volatile unsigned long i = 0;; i++)\n\t\t;',
                       ''),
    'timelimit-sleep': ('\tfor (;;)\n\t\tpause();', ''),
    'run-error-exit': ('', '\treturn 3;'),
    # argc - 1 is 0, unknown to the compiler: a real fault, not a trap
    'run-error-signal': ('\t*(volatile int *)(long)(argc - 1) = 1;', ''),
    'memory-limit': ('\tfor (;;) {\n\t\tkeep = malloc(1 << 20);\n'
                     '\t\tif (!keep)\n\t\t\treturn 1;\n'
                     '\t\tmemset(keep, 1, 1 << 20);\n\t}', ''),
    'output-limit': ('', '\tmemset(buf, \'7\', sizeof(buf));\n'
                     '\tfor (int i = 0; i < 256; i++)\n'
                     '\t\tfwrite(buf, 1, sizeof(buf), stdout);'),
    'fork-bomb': ('\tfor (;;)\n\t\tfork();', ''),
    'setsid-orphan': ('\tif (fork() == 0) {\n\t\tsetsid();\n'
                      '\t\tfor (;;)\n\t\t\tpause();\n\t}', ''),
    'stderr-32mib': ('\tmemset(buf, \'e\', sizeof(buf));\n'
                     '\tfor (int i = 0; i < 512; i++)\n'
                     '\t\tif (write(2, buf, sizeof(buf)) < 0)\n'
                     '\t\t\tbreak;', ''),
}
SUBMISSIONS = {name: (SUBMISSION % {'body': body, 'tail': tail}).encode()
               for name, (body, tail) in _VARIANTS.items()}


class FlowError(Exception):
    """The flow could not be set up or run (not a verdict)."""


# ---------------------------------------------------------------------------
# Test data
# ---------------------------------------------------------------------------

def make_case(rng, count):
    """(input, answer) with count integers."""
    nums = [rng.randint(-10 ** 9, 10 ** 9) for _ in range(count)]
    data = ('%d\n' % count + '\n'.join(map(str, nums)) + '\n').encode()
    return data, b'%d\n' % (count + sum(nums))


def make_large_case(mib):
    """(input, answer) of about MIB MiB: a 1 MiB block repeated."""
    block = b''.join(b'%d\n' % (i * 7919 % 100000007)
                     for i in range(95000))
    reps = (mib << 20) // len(block) + 1
    total = sum(i * 7919 % 100000007 for i in range(95000)) * reps
    return block * reps, b'%d\n' % total


# ---------------------------------------------------------------------------
# Preconditions, mounts, files
# ---------------------------------------------------------------------------

def unmet_precondition():
    """Why the flow cannot run here, or None."""
    if os.geteuid() != 0:
        return ('not running as root (the DOMjudge flow makes an account, '
                'a sudoers snippet and mounts)')
    if not shutil.which('sudo') or not shutil.which('visudo'):
        return 'sudo is not installed (scripts/install-deps installs it)'
    for tool in ('useradd', 'userdel', 'mount', 'umount', 'gcc'):
        if not shutil.which(tool):
            return '%s is not installed' % tool
    libc = subprocess.run(['gcc', '-print-file-name=libc.a'],
                          capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(libc):
        return 'no static libc for gcc -static (libc6-dev)'
    return None


def _unescape(field):
    return re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)),
                  field)


def mounts_under(*paths):
    """Mount points at or below paths (once per stacked mount), deepest
    first, from /proc/self/mountinfo."""
    found = []
    with open('/proc/self/mountinfo') as f:
        for line in f:
            mp = _unescape(line.split()[4])
            if any(mp == p or mp.startswith(p.rstrip('/') + '/')
                   for p in paths if p):
                found.append(mp)
    return sorted(found, key=lambda m: -m.count('/'))


def _cmd(argv):
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode:
        raise FlowError('%s failed: %s' % (' '.join(argv),
                                           out.stderr.strip()))


def _umount(mp):
    """umount, or detach it lazily if busy; False if neither worked. Only
    for cleaning up after a failure: chroot-startstop.sh stop uses plain
    umount (plain_umount)."""
    if subprocess.run(['umount', mp], capture_output=True).returncode == 0:
        return True
    return subprocess.run(['umount', '-l', mp],
                          capture_output=True).returncode == 0


def plain_umount(mp):
    """umount as chroot-startstop.sh stop runs it (no -l): None, or why it
    failed, with what held the mount at that moment."""
    out = subprocess.run(['umount', mp], capture_output=True, text=True)
    if out.returncode == 0:
        return None
    held = holders_below(mp)
    return 'umount %s failed (%d): %s; held by: %s' % (
        mp, out.returncode, out.stderr.strip(),
        '; '.join('%d (%s) %s' % h for h in held) or 'nothing seen')


def _below(path, top):
    return path == top or path.startswith(top.rstrip('/') + '/')


def holders_below(*tops):
    """Processes that hold something at or below tops: (pid, name, what)
    for each working directory, root, open file and mapped file there,
    read from /proc. A mount is busy while any of these is in it; a
    directory held this way is one the judgedaemon may be removing."""
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        base = '/proc/%s/' % pid
        try:
            with open(base + 'comm') as f:
                name = f.read().strip()
            links = [('cwd', base + 'cwd'), ('root', base + 'root')]
            links += [('fd ' + fd, base + 'fd/' + fd)
                      for fd in os.listdir(base + 'fd')]
            with open(base + 'maps') as f:
                maps = [line.split(None, 5)[5].strip() for line in f
                        if len(line.split(None, 5)) == 6]
        except OSError:
            continue            # gone meanwhile, or a kernel thread
        for what, link in links:
            try:
                target = os.readlink(link)
            except OSError:
                continue
            target = target[:-len(' (deleted)')] \
                if target.endswith(' (deleted)') else target
            if any(_below(target, t) for t in tops):
                found.append((int(pid), name, '%s %s' % (what, target)))
        for target in sorted(set(maps)):
            if any(_below(target, t) for t in tops):
                found.append((int(pid), name, 'mapped ' + target))
    return found


def chown_tree(path, uid, gid):
    """chown -R, refused if anything is mounted below path (a bind of a
    directory of the same file system is no os.path.ismount)."""
    if mounts_under(path):
        raise FlowError('not changing %s: mounts below it' % path)
    os.lchown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            os.lchown(os.path.join(root, name), uid, gid)


def chmod_go_w(path):
    """chmod -R go-w (path has no mounts below it: see chown_tree)."""
    for root, dirs, files in os.walk(path):
        for p in [root] + [os.path.join(root, n) for n in files]:
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode & 0o7755)


def remove_tree(path):
    """rm -rf, refused while anything is mounted below path."""
    left = mounts_under(path)
    if left:
        raise FlowError('not removing %s: still mounted below it: %s'
                        % (path, ', '.join(left)))
    shutil.rmtree(path, ignore_errors=True)


def fnv1a(text):
    """runguard's rg_pool_hash (the pool's cgroup name)."""
    h = 2166136261
    for b in text.encode():
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def meta_of(path):
    """A meta file as DOMjudge reads it: split at ':' and trimmed."""
    meta = {}
    try:
        with open(path, 'rb') as f:
            text = f.read().decode('utf-8', 'replace')
    except OSError:
        return meta
    for line in text.splitlines():
        key, sep, value = line.partition(':')
        if sep:
            meta[key] = value.strip()
    return meta


def run_verdict(meta, compare_rc, compare_meta, out_size):
    """The verdict of a test case: HEAD's judgedaemon disables the
    judgehost on internal-error (spec 4.6), then 9.0's testcase_run.sh:
    the compare's time limit and exit code, time limit, exit code, stdout
    truncated, the compare's answer (no output: NO-OUTPUT)."""
    if 'internal-error' in meta or 'internal-error' in compare_meta:
        return 'JUDGEHOST-ERROR'
    if 'timelimit' in compare_meta.get('time-result', ''):
        return 'COMPARE-ERROR'
    if compare_rc not in (42, 43):
        return 'COMPARE-ERROR'
    if 'timelimit' in meta.get('time-result', ''):
        return 'TIMELIMIT'
    if meta.get('exitcode') != '0':
        return 'RUN-ERROR'
    if 'stdout' in meta.get('output-truncated', '').split(','):
        return 'OUTPUT-LIMIT'
    if compare_rc == 42:
        return 'CORRECT'
    return 'NO-OUTPUT' if out_size == 0 else 'WRONG-ANSWER'


# ---------------------------------------------------------------------------
# The judgehost: account, sudoers, chroot, runguard.conf
# ---------------------------------------------------------------------------

class Session:
    """One judgehost for the time of a test or benchmark run."""

    def __init__(self, runguard, compare, prefix, runuser, rungroup,
                 cgroup_parent='runguard', daemon_id=1, pool_size=4,
                 root_size_mib=0, log=None):
        self.runguard = os.path.abspath(runguard)
        self.compare_program = compare
        self.prefix = prefix
        self.rungroup = rungroup
        self.cgroup_parent = cgroup_parent
        self.pool_size = pool_size
        self.root_size_mib = root_size_mib
        self.log = log or (lambda msg: None)
        # judgedaemon -n N: RUNUSER-N and -P N (none without an id)
        if daemon_id is None:
            self.run_user, self.cpuset_opt = runuser, []
        else:
            self.run_user = '%s-%d' % (runuser, daemon_id)
            self.cpuset_opt = ['-P', str(daemon_id)]
        self.run_uid = self.judge_uid = self.judge_gid = None
        self.base = self.judgings = None
        self.pools = {}  # pooled mode: (pool directory, config file)
        self._lock_fd = None
        self._made_judge = self._made_sudoers = False
        self._saved_conf = False
        self._made_prefix = []
        self._seq = 0
        self.judge_env = {'PATH': JUDGE_PATH, 'LC_ALL': 'C',
                          'HOME': '/nonexistent', 'USER': JUDGE_USER,
                          'LOGNAME': JUDGE_USER}

    # ---- set-up -----------------------------------------------------------

    def setup(self):
        self._lock()
        self._clean_stale()
        self._judge_account()
        self.run_uid = ensure_account(self.run_user, self.rungroup)[0]
        self._sudoers()
        self._save_conf()
        self._make_base()
        self._make_chroot()
        self._make_judgings()
        self._check_sudo()

    def _lock(self):
        """One flow at a time: they share the account, sudoers, the conf."""
        fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                     0o600)
        deadline = time.monotonic() + 900
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._lock_fd = fd
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise FlowError('another DOMjudge flow holds %s'
                                    % LOCK_FILE)
                time.sleep(1)

    def _clean_stale(self):
        """What a killed earlier run left (we hold the lock): its pool,
        mounts and directories, the snippet, our conf (restoring the one
        it had saved)."""
        pat = re.compile(r'/rgflow-(\d+)(-[^/]*)?$')
        stale = [p for p in glob.glob(os.path.join(tempfile.gettempdir(),
                                                   'rgflow-*-*')) +
                 glob.glob(os.path.join(os.path.realpath(self.prefix),
                                        'rgflow-*'))
                 if pat.search(p) and not os.path.exists(
                     '/proc/' + pat.search(p).group(1))]
        for path in stale:
            self.log('removing stale %s' % path)
            conf = os.path.join(path, 'runguard.conf')
            if os.path.exists(os.path.join(path, 'pool')):
                subprocess.run([self.runguard, '--pool-destroy=force'],
                               env={'RUNGUARD_CONFIG': conf},
                               capture_output=True)
            for mp in mounts_under(path):
                _umount(mp)
            remove_tree(path)
        if os.path.lexists(SUDOERS):
            os.unlink(SUDOERS)
        for p in (SUDOERS_NEW, CONF_NEW):
            if os.path.lexists(p):
                os.unlink(p)
        if os.path.exists(CONF) and self._ours(CONF):
            os.unlink(CONF)
        if os.path.exists(CONF_SAVED) and not os.path.lexists(CONF):
            os.rename(CONF_SAVED, CONF)

    @staticmethod
    def _ours(path):
        with open(path, errors='replace') as f:
            return MARKER in f.read()

    def _judge_account(self):
        try:
            pw = pwd.getpwnam(JUDGE_USER)
            self._made_judge = pw.pw_gecos == JUDGE_GECOS    # stale: ours
        except KeyError:
            _cmd(['useradd', '--system', '-M', '-d', '/nonexistent',
                  '-s', '/usr/sbin/nologin', '-U', '-c', JUDGE_GECOS,
                  JUDGE_USER])
            self._made_judge = True
            pw = pwd.getpwnam(JUDGE_USER)
        self.judge_uid, self.judge_gid = pw.pw_uid, pw.pw_gid

    def _sudoers(self):
        if not re.fullmatch(r'[A-Za-z0-9/._+-]+', self.runguard):
            raise FlowError('%s cannot go into sudoers unescaped'
                            % self.runguard)
        with open(SUDOERS_NEW, 'w') as f:
            f.write('%s\n%s ALL=(root) NOPASSWD: %s *\n'
                    % (MARKER, JUDGE_USER, self.runguard))
        os.chmod(SUDOERS_NEW, 0o440)
        _cmd(['visudo', '-c', '-q', '-f', SUDOERS_NEW])
        os.rename(SUDOERS_NEW, SUDOERS)
        self._made_sudoers = True

    def _save_conf(self):
        if os.path.lexists(CONF):
            os.rename(CONF, CONF_SAVED)
            self._saved_conf = True

    def _make_base(self):
        self.base = tempfile.mkdtemp(prefix='rgflow-%d-' % os.getpid())
        os.chmod(self.base, 0o755)
        for mode, extra in POOL_SETTINGS.items():
            pool_dir = os.path.join(self.base, 'pool-' + mode)
            conf_file = os.path.join(self.base, 'runguard-%s.conf' % mode)
            with open(conf_file, 'w') as f:
                f.write('%s\npool-size = %d\npool-dir = %s\n%s'
                        % (MARKER, self.pool_size, pool_dir, extra))
            self.pools[mode] = (pool_dir, conf_file)
        # W/executable/<type>/...: run script, compile script, validator
        exe = os.path.join(self.base, 'executable')
        self.run_script = self._executable(exe, 'run', RUN_SCRIPT.encode())
        self.compile_script = self._executable(exe, 'compile',
                                               C_COMPILE_SCRIPT.encode())
        with open(self.compare_program, 'rb') as f:
            self.compare = self._executable(exe, 'compare', f.read())

    @staticmethod
    def _executable(exe, kind, data):
        d = os.path.join(exe, kind)
        os.makedirs(d, 0o755)
        os.chmod(exe, 0o755)
        path = os.path.join(d, 'run')
        with open(path, 'wb') as f:
            f.write(data)
        os.chmod(path, 0o755)
        return path

    def _make_chroot(self):
        """The pre-built chroot (judgehost_chrootdir) from the host."""
        self.chroot = os.path.join(self.base, 'chroot')
        os.mkdir(self.chroot, 0o755)
        etc = os.path.join(self.chroot, 'etc')
        os.mkdir(etc, 0o755)
        for name in ETC_FILES:
            src = os.path.join('/etc', name)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(etc, name), symlinks=True)
            elif os.path.exists(src):
                shutil.copy2(src, os.path.join(etc, name))
        for d in SUBDIRMOUNTS[1:]:
            host, dst = '/' + d, os.path.join(self.chroot, d)
            if d == 'lib64' and self.root_size_mib:
                self._make_large_lib64(host, dst)
            elif os.path.islink(host):
                os.symlink(os.readlink(host), dst)
            elif os.path.isdir(host):
                os.mkdir(dst, 0o755)
                self._bind(host, dst)

    def _make_large_lib64(self, host, dst):
        """--root-size: lib64 a real directory (as in a chroot without
        merged /usr) holding the loader's links and root_size_mib MiB of
        filler libraries in 64 KiB files, all of it for the prewarm."""
        os.mkdir(dst, 0o755)
        for e in os.scandir(host):
            if e.is_symlink():
                os.symlink(os.readlink(e.path), os.path.join(dst, e.name))
            elif e.is_file():
                shutil.copy2(e.path, os.path.join(dst, e.name))
        block = os.urandom(64 << 10)
        files = self.root_size_mib * 16
        for i in range(files):
            sub = os.path.join(dst, 'rgflow-filler', '%03d' % (i // 1000))
            if i % 1000 == 0:
                os.makedirs(sub, 0o755)
            with open(os.path.join(sub, 'lib%05d.so' % i), 'wb') as f:
                f.write(block)
        self.log('chroot lib64: %d filler files, %d MiB'
                 % (files, self.root_size_mib))

    def _make_judgings(self):
        path = '/'
        for part in os.path.normpath(self.prefix).strip('/').split('/'):
            path = os.path.join(path, part)
            if not os.path.isdir(path):
                os.mkdir(path, 0o755)
                self._made_prefix.append(path)
        self.judgings = os.path.join(os.path.realpath(self.prefix),
                                     'rgflow-%d' % os.getpid())
        os.mkdir(self.judgings, 0o755)
        os.chown(self.judgings, self.judge_uid, self.judge_gid)

    def _check_sudo(self):
        """The judge can run runguard through sudo -n: the snippet works."""
        out = subprocess.run(['sudo', '-n', self.runguard, '--version'],
                             capture_output=True, text=True,
                             env=dict(self.judge_env), **self.judge_popen())
        if out.returncode:
            raise FlowError('sudo -n %s --version as %s failed (%d): %s'
                            % (self.runguard, JUDGE_USER, out.returncode,
                               out.stderr.strip()))

    def judge_popen(self):
        """subprocess arguments: run as the judgedaemon's account (its
        environment: judge_env)."""
        return dict(user=self.judge_uid, group=self.judge_gid,
                    extra_groups=[], umask=0o022)

    # ---- mounts (chroot-startstop.sh) -----------------------------------

    @staticmethod
    def _bind(src, dst):
        _cmd(['mount', '-n', '--bind', src, dst])
        _cmd(['mount', '-o', 'remount,ro,bind', dst])

    def chroot_start(self, job):
        proc = self._judge_dir(job, 'proc', 0o755)
        _cmd(['mount', '-n', '--bind', '/proc', proc])
        for d in SUBDIRMOUNTS:
            src, dst = os.path.join(self.chroot, d), os.path.join(job, d)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
                os.lchown(dst, self.judge_uid, self.judge_gid)
            elif os.path.isdir(src):
                self._bind(src, self._judge_dir(job, d, 0o755))
        dev = self._judge_dir(job, 'dev', 0o711)
        _cmd(['cp', '-pR', '/dev/random', '/dev/urandom', '/dev/null', dev])
        for name in ('random', 'urandom'):
            p = os.path.join(dev, name)
            os.chmod(p, os.stat(p).st_mode & ~0o002)

    def _judge_dir(self, job, name, mode):
        """mkdir as the judgedaemon (it runs chroot-startstop.sh)."""
        path = os.path.join(job, name)
        os.mkdir(path, mode)
        os.chmod(path, mode)
        os.chown(path, self.judge_uid, self.judge_gid)
        return path

    def chroot_stop(self, job):
        """chroot-startstop.sh stop: plain umount of what chroot_start
        mounted, at once; the problems (a busy mount is one: the real
        script exits 1 and the judgedaemon disables the judgehost)."""
        problems = [plain_umount(os.path.join(job, 'proc'))]
        for name in ('urandom', 'random', 'null'):
            p = os.path.join(job, 'dev', name)
            if os.path.lexists(p):
                os.unlink(p)
        for d in SUBDIRMOUNTS:
            src, dst = os.path.join(self.chroot, d), os.path.join(job, d)
            if os.path.islink(src) and os.path.islink(dst):
                os.unlink(dst)
            elif os.path.isdir(src) and dst in mounts_under(dst):
                problems.append(plain_umount(dst))
        problems = [p for p in problems if p]
        left = mounts_under(job)
        if left and not problems:
            problems.append('mounts left below %s: %s'
                            % (job, ', '.join(left)))
        return problems

    # ---- the pool's configuration ---------------------------------------

    @contextlib.contextmanager
    def configured(self, mode):
        """/etc/runguard.conf for one call: the mode's pool (pooled,
        resident), none (per-run: no file means no pool)."""
        if mode in self.pools:
            shutil.copy(self.pools[mode][1], CONF_NEW)
            os.chmod(CONF_NEW, 0o644)
            os.rename(CONF_NEW, CONF)
        elif mode != 'per-run':
            raise ValueError(mode)
        try:
            yield
        finally:
            if os.path.lexists(CONF) and self._ours(CONF):
                os.unlink(CONF)

    def pool_cgroups(self, mode='pooled'):
        """The mode's pool's cgroup directories that exist, in every
        hierarchy."""
        name = 'pool-%08x' % fnv1a(os.path.realpath(self.pools[mode][0]))
        pats = [os.path.join(CGROOT, self.cgroup_parent, name),
                os.path.join(CGROOT, '*', self.cgroup_parent, name)]
        return sorted(p for pat in pats for p in glob.glob(pat))

    def _pool_names(self, mode):
        try:
            return os.listdir(self.pools[mode][0])
        except FileNotFoundError:
            return []

    def pool_files(self, mode='pooled'):
        """(entries but keeper sockets, prewarm stamps) in the mode's pool
        directory."""
        names = [n for n in self._pool_names(mode) if not n.endswith('.sock')]
        return len(names), sum(n.startswith('prewarm-') for n in names)

    def pool_sockets(self, mode):
        """Keeper sockets (one per slot that had a keeper)."""
        return sum(n.endswith('.sock') for n in self._pool_names(mode))

    def destroy_pool(self, mode=None):
        """runguard --pool-destroy=force with the pool's config (mode's, or
        every one's); the problems: its failure, cgroups or mounts of the
        pool left."""
        problems = []
        for m in [mode] if mode else list(self.pools):
            problems += self._destroy_one_pool(m)
        return problems

    def _destroy_one_pool(self, mode):
        pool_dir, conf_file = self.pools[mode]
        if not os.path.exists(pool_dir):
            return []
        env = dict(self.judge_env, RUNGUARD_CONFIG=conf_file)
        out = subprocess.run([self.runguard, '--pool-destroy=force'],
                             env=env, capture_output=True, text=True)
        problems = []
        if out.returncode:
            problems.append('runguard --pool-destroy=force exited %d: %s'
                            % (out.returncode, out.stderr.strip()))
        left = wait_until(lambda: self.pool_cgroups(mode), 3)
        if left:
            problems.append('pool cgroups left after --pool-destroy: %s'
                            % ', '.join(left))
        left = mounts_under(pool_dir)
        if left:
            problems.append('pool mounts left after --pool-destroy: %s'
                            % ', '.join(left))
        return problems

    def run_user_procs(self):
        """Live processes of the run user (zombies aside)."""
        return [p for p in procs_of_uid(self.run_uid)
                if not p[1].startswith('Z')]

    def next_id(self):
        self._seq += 1
        return self._seq

    # ---- clean-up ---------------------------------------------------------

    def cleanup(self):
        """Undo setup(), also after a partial one; returns the problems."""
        if self._lock_fd is None:
            return []           # nothing done: another flow had the lock
        problems = []
        for step in (self._kill_leftovers, self.destroy_pool,
                     self._unmount_all, self._remove_trees,
                     self._restore_conf, self._remove_sudoers,
                     self._remove_judge_account, self._unlock):
            try:
                problems += step() or []
            except Exception as e:          # go on: undo the rest
                problems.append('%s: %s' % (step.__name__, e))
        return problems

    def _kill_leftovers(self):
        if self.run_uid is None:
            return []
        left = self.run_user_procs()
        for pid, _, _, _ in left:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        return ['processes of %s left: %s' % (self.run_user, left)] \
            if left else []

    def _unmount_all(self):
        mine = mounts_under(self.judgings, self.base)
        for mp in mine:
            _umount(mp)
        left = mounts_under(self.judgings, self.base)
        if left:
            return ['mounts left in /proc/self/mountinfo: %s'
                    % ', '.join(left)]
        return []

    def _remove_trees(self):
        for path in (self.judgings, self.base):
            if path and os.path.exists(path):
                remove_tree(path)
        for d in reversed(self._made_prefix):
            try:
                os.rmdir(d)
            except OSError:
                pass
        return []

    def _restore_conf(self):
        if os.path.lexists(CONF) and self._ours(CONF):
            os.unlink(CONF)
        if self._saved_conf:
            os.rename(CONF_SAVED, CONF)
            self._saved_conf = False
        return []

    def _remove_sudoers(self):
        if self._made_sudoers and os.path.lexists(SUDOERS):
            os.unlink(SUDOERS)
        return []

    def _remove_judge_account(self):
        if not self._made_judge:
            return []
        wait_until(lambda: procs_of_uid(self.judge_uid), 3)
        _cmd(['userdel', JUDGE_USER])
        try:
            grp.getgrnam(JUDGE_USER)
            _cmd(['groupdel', JUDGE_USER])
        except KeyError:
            pass
        self._made_judge = False
        return []

    def _unlock(self):
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        return []


# ---------------------------------------------------------------------------
# A judging: compile, then test cases in new directories
# ---------------------------------------------------------------------------

class Compile:
    def __init__(self, res, meta, output, verdict):
        self.res, self.meta, self.output, self.verdict = \
            res, meta, output, verdict


class TestcaseRun:
    """One test case: the run step (the run script and its sudo runguard
    call) and the compare step, each timed by the caller."""

    def __init__(self, number, passdir, run, compare, leftover):
        self.number, self.passdir = number, passdir
        self.run, self.compare, self.leftover = run, compare, leftover
        self.meta = meta_of(os.path.join(passdir, 'program.meta'))
        self.compare_meta = meta_of(os.path.join(passdir, 'compare.meta'))
        # kept: the judging's directory goes with chroot-startstop.sh stop
        self._sizes = {e.name: e.stat().st_size for e in os.scandir(passdir)
                       if e.is_file()}
        self._files = {}
        for name in self.KEPT:
            with open(os.path.join(passdir, name), 'rb') as f:
                self._files[name] = f.read()
        self.out_size = self.size('program.out')
        self.verdict = run_verdict(self.meta, compare.rc, self.compare_meta,
                                   self.out_size)

    # what tests and benchmarks read after the stop (at most OUTPUT_KB each)
    KEPT = ('program.out', 'program.err', 'runguard.err', 'compare.tmp')

    def size(self, name):
        return self._sizes[name]

    def read(self, name):
        return self._files[name]

    @property
    def run_seconds(self):
        return self.run.elapsed

    @property
    def step_seconds(self):
        return self.run.elapsed + self.compare.elapsed

    def describe(self):
        return ('test case %d: %s\n--- run ---\n%s\n--- runguard.err ---\n'
                '%s\n--- compare (exit %s) ---\n%s\ncompare.meta: %s'
                % (self.number, self.verdict, self.run.describe(),
                   self.read('runguard.err')[-2000:].decode('utf-8',
                                                            'replace'),
                   self.compare.rc,
                   self.read('compare.tmp')[-1000:].decode('utf-8',
                                                           'replace'),
                   self.compare_meta))


class Judging:
    """JUDGINGS/<submission>/<judging>/: the chroot, compile/ and a new
    testcaseNNNNN/1 per test case, in one mode (per-run or pooled)."""

    def __init__(self, session, mode, name):
        self.s, self.mode, self.name = session, mode, name
        jid = session.next_id()
        self.submission_dir = os.path.join(session.judgings, '%s-%s-%d'
                                           % (name, mode, jid))
        self.job = os.path.join(self.submission_dir, str(jid))
        self.started = False

    def start(self):
        os.makedirs(self.job, 0o755)
        chown_tree(self.submission_dir, self.s.judge_uid, self.s.judge_gid)
        self.started = True
        self.s.chroot_start(self.job)

    def stop(self):
        """chroot-startstop.sh stop, then the directory is removed; the
        problems of the stop (mounts that stayed: the directory is then
        kept, and Session.cleanup detaches them)."""
        if not self.started:
            return []
        self.started = False
        problems = self.s.chroot_stop(self.job)
        if not problems:
            remove_tree(self.submission_dir)
        return problems

    def _judge_file(self, path):
        """A file the judgedaemon's shell creates (touch, > FILE)."""
        open(path, 'ab').close()
        os.chown(path, self.s.judge_uid, self.s.judge_gid)

    def _call(self, argv, cwd, meta, timeout=120, **redirect):
        """One runguard call through sudo; res.holders: what held anything
        below the judging directory the moment it returned (holders_below):
        nothing of runguard may, the judgedaemon goes on at once."""
        with self.s.configured(self.mode):
            try:
                res = run_redirected(argv, cwd, dict(self.s.judge_env),
                                     meta_path=meta, timeout=timeout,
                                     **redirect, **self.s.judge_popen())
            except subprocess.TimeoutExpired:
                raise FlowError('no answer within %d s: %s'
                                % (timeout, ' '.join(argv)))
        res.holders = holders_below(self.job)
        return res

    def compile(self, source):
        """compile.sh: spec 4.4 C in JOB/compile, output to compile.tmp."""
        s = self.s
        front = ['sudo', '-n', s.runguard] + s.cpuset_opt + [
            '-u', s.run_user, '-g', s.rungroup]
        argv = make_compile_dir(self.job, s.compile_script,
                                {'main.c': source}, front,
                                memlimit_kb=MEMORY_KB,
                                script_file_kb=SCRIPT_FILE_KB)
        compile_dir = os.path.join(self.job, 'compile')
        for name in ('compile.out', 'compile.meta', 'compile.tmp'):
            self._judge_file(os.path.join(self.job, name))
        for d in ('compile', 'compile-script'):
            chown_tree(os.path.join(self.job, d), s.judge_uid, s.judge_gid)
        res = self._call(argv, compile_dir,
                         os.path.join(self.job, 'compile.meta'),
                         stdout='../compile.tmp', stderr=subprocess.STDOUT)
        chown_tree(compile_dir, s.judge_uid, s.judge_gid)
        chmod_go_w(compile_dir)
        meta = meta_of(os.path.join(self.job, 'compile.meta'))
        with open(os.path.join(self.job, 'compile.tmp'), 'rb') as f:
            output = f.read().decode('utf-8', 'replace')
        program = os.path.join(compile_dir, 'program')
        if (res.rc and not meta) or 'internal-error' in meta:
            verdict = 'JUDGEHOST-ERROR'
        elif 'timelimit' in meta.get('time-result', '') or res.rc or \
                not os.access(program, os.X_OK):
            verdict = 'COMPILER-ERROR'
        else:
            verdict = None
        return Compile(res, meta, output, verdict)

    def run_testcase(self, number, input_data, answer, memory_kb=None):
        """testcase_run.sh (9.0) in a new JOB/testcaseNNNNN/1: the run
        (spec 4.4 A) through the run script, then the compare (4.4 B).
        memory_kb: the problem's memory limit (MEMORY_KB if None)."""
        s = self.s
        passdir = make_pass_dir(self.job,
                                os.path.join(self.job, 'compile', 'program'),
                                input_data, testcase=number, link=True)
        with open(os.path.join(passdir, 'testdata.out'), 'wb') as f:
            f.write(answer)
        for name in ('system.out', 'compare.meta', 'compare.err',
                     'compare.tmp'):
            open(os.path.join(passdir, name), 'wb').close()
        chown_tree(os.path.dirname(passdir), s.judge_uid, s.judge_gid)
        prefix = '/%s/%s' % (os.path.basename(os.path.dirname(passdir)),
                             os.path.basename(passdir))
        limits = '%g:%g' % (TIME_LIMIT, HARD_TIME_LIMIT)
        argv = [s.run_script, 'testdata.in', 'program.out',
                'sudo', '-n', s.runguard] + s.cpuset_opt + [
            '-r', passdir + '/../..',
            '--nproc=%d' % PROCESS_LIMIT,
            '--no-core', '--streamsize=%d' % OUTPUT_KB,
            '--user=' + s.run_user, '--group=' + s.rungroup,
            '--walltime=' + limits, '--cputime=' + limits,
            '--memsize=%d' % (memory_kb or MEMORY_KB),
            '--filesize=%d' % OUTPUT_KB,
            '--stderr=program.err', '--outmeta=program.meta', '--',
            prefix + '/execdir/program']
        run = self._call(argv, passdir,
                         os.path.join(passdir, 'program.meta'),
                         stderr='runguard.err')
        leftover = s.run_user_procs()
        feedback = os.path.join(passdir, 'feedback')
        os.mkdir(feedback, 0o777)
        os.chmod(feedback, 0o777)
        os.chown(feedback, s.judge_uid, s.judge_gid)
        cargv = ['sudo', '-n', s.runguard] + s.cpuset_opt + [
            '-u', s.run_user, '-g', s.rungroup,
            '-m', str(SCRIPT_MEMORY_KB), '-t', str(SCRIPT_TIME),
            '--no-core', '-f', str(SCRIPT_FILE_KB), '-s', str(SCRIPT_FILE_KB),
            '-M', 'compare.meta', '--', s.compare,
            'testdata.in', 'testdata.out', 'feedback/']
        compare = self._call(cargv, passdir,
                             os.path.join(passdir, 'compare.meta'),
                             stdin='program.out', stdout='compare.tmp',
                             stderr=subprocess.STDOUT)
        chown_tree(feedback, s.judge_uid, s.judge_gid)
        chmod_go_w(feedback)
        return TestcaseRun(number, passdir, run, compare, leftover)
