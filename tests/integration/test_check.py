# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard --check: the real binary on this host, and with each broken
condition made on purpose where that can be done safely and undone.

Conditions that would disturb others on a shared host (a missing chroot
prefix, run users missing from /etc/passwd, an unmounted v1 controller)
are made in a private mount namespace of the checked runguard alone.
"""

import ctypes
import json
import os
import pwd
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import unittest

import rgtest
from rgtest import (CALLER_ENV, CGROOT, CGROUP_PARENT, CHROOT_PREFIX,
                    RUN_GROUP, RUN_USER, RUNGUARD, RUNUSER, VALID_USERS,
                    RGTestCase, cgroup_mode)
from test_pool import PoolTestCase

LINE_RE = re.compile(r'^(ok|warning|error) {2,}(\S+) {2,}(.*)$')
FIX_RE = re.compile(r'^ {9,}fix: (.*)$')
SUMMARY_RE = re.compile(r'^(\d+) ok, (\d+) warnings?, (\d+) errors?$')
# the build's RUNGROUP (meson option rungroup, default: the run user)
BUILD_RUNGROUP = os.environ.get('RG_RUNGROUP') or RUNUSER
STATUS = {'ok': 0, 'warning': 1, 'error': 2}

CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_BIND = 0x1000
MNT_DETACH = 2


class Report:
    """--check's text output: items by name, fixes, summary."""

    def __init__(self, rc, out, err):
        self.rc, self.text, self.err = rc, out, err
        self.items = {}
        self.order = []
        self.summary = None
        last = None
        for line in out.splitlines():
            m = LINE_RE.match(line)
            f = FIX_RE.match(line)
            s = SUMMARY_RE.match(line)
            if m:
                last = m.group(2)
                self.items[last] = {'status': m.group(1),
                                    'message': m.group(3), 'fix': None}
                self.order.append(last)
            elif f and last:
                self.items[last]['fix'] = f.group(1)
            elif s:
                self.summary = tuple(int(x) for x in s.groups())
            else:
                raise AssertionError('unexpected --check line %r in\n%s'
                                     % (line, out))

    def status(self, name):
        return self.items[name]['status']

    def describe(self):
        return 'exit %d\n%s%s' % (self.rc, self.text, self.err)


def libc_call(name, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        e = ctypes.get_errno()
        raise OSError(e, '%s: %s' % (name, os.strerror(e)))


def private_mounts(*steps):
    """A preexec_fn: a mount namespace of the child's own, then steps
    (('tmpfs', dir), ('bind', src, dst), ('umount', dir))."""
    def run():
        libc_call('unshare', CLONE_NEWNS)
        libc_call('mount', None, b'/', None,
                  ctypes.c_ulong(MS_REC | MS_PRIVATE), None)
        for step in steps:
            if step[0] == 'tmpfs':
                libc_call('mount', b'tmpfs', step[1].encode(), b'tmpfs',
                          ctypes.c_ulong(0), None)
            elif step[0] == 'bind':
                libc_call('mount', step[1].encode(), step[2].encode(), None,
                          ctypes.c_ulong(MS_BIND), None)
            else:
                libc_call('umount2', step[1].encode(), MNT_DETACH)
    return run


def own_v2_cgroup():
    """This process's cgroup directory on v2, None at the root."""
    with open('/proc/self/cgroup') as f:
        for line in f:
            if line.startswith('0::'):
                rel = line[3:].strip().strip('/')
                return os.path.join(CGROOT, rel) if rel else None
    return None


def kernel_version():
    return tuple(int(x) for x in
                 re.match(r'(\d+)\.(\d+)', os.uname().release).groups())


def expected_kernel_items():
    """What kernel.memory-peak and kernel.cgroup-kill must say without a
    pool, from this process's own cgroup (v2), or the version."""
    if cgroup_mode() == 'v1':
        return {'kernel.memory-peak': 'ok', 'kernel.cgroup-kill': 'ok'}
    d = own_v2_cgroup()
    if d and os.path.exists(os.path.join(d, 'memory.current')):
        peak = os.path.exists(os.path.join(d, 'memory.peak'))
        kill = os.path.exists(os.path.join(d, 'cgroup.kill'))
    else:
        peak = kernel_version() >= (5, 19)
        kill = kernel_version() >= (5, 14)
    return {'kernel.memory-peak': 'ok' if peak else 'warning',
            'kernel.cgroup-kill': 'ok' if kill else 'warning'}


class CheckTestCase(RGTestCase):
    """runguard --check ARGS, text and JSON, checked against each other."""

    def env(self, **extra):
        e = dict(CALLER_ENV)
        e['RUNGUARD_CONFIG'] = '/dev/null'
        e.update(extra)
        return e

    def raw(self, args, env=None, preexec_fn=None):
        p = subprocess.run([RUNGUARD, '--check'] + list(args),
                           env=env or self.env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, preexec_fn=preexec_fn,
                           universal_newlines=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def check(self, *args, env=None, preexec_fn=None):
        r = Report(*self.raw(args, env, preexec_fn))
        self.assertConsistent(r)
        rc, out, err = self.raw(list(args) + ['--json'], env, preexec_fn)
        self.assertJsonMatches(r, rc, out)
        return r

    def assertConsistent(self, r):
        d = r.describe()
        self.assertIn(r.rc, (0, 1, 2), d)
        self.assertEqual(r.err, '', d)
        self.assertTrue(r.items, d)
        worst = max(STATUS[i['status']] for i in r.items.values())
        self.assertEqual(r.rc, worst, d)
        counts = [0, 0, 0]
        for name, i in r.items.items():
            counts[STATUS[i['status']]] += 1
            # every failing item says what fixes it, ok ones say nothing
            if i['status'] == 'ok':
                self.assertIsNone(i['fix'], d)
            else:
                self.assertTrue(i['fix'], '%s has no fix\n%s' % (name, d))
        self.assertEqual(r.summary, tuple(counts), d)

    def assertJsonMatches(self, r, rc, out):
        d = r.describe() + '\n--json:\n' + out
        self.assertEqual(rc, r.rc, d)
        j = json.loads(out)
        self.assertEqual(j['exit_status'], r.rc, d)
        self.assertEqual(STATUS[j['status']], r.rc, d)
        self.assertEqual([i['name'] for i in j['items']], r.order, d)
        for i in j['items']:
            t = r.items[i['name']]
            self.assertEqual(i['status'], t['status'], d)
            self.assertEqual(i['fix'], t['fix'], d)
            # messages can change between the two runs (slot states,
            # pids): compare where they are fixed
            if not i['name'].startswith('pool'):
                self.assertEqual(i['message'], t['message'], d)
        self.assertEqual(sum(j['counts'].values()), len(r.items), d)


class CheckHostTest(CheckTestCase):
    """This host as it is, then one broken condition at a time."""

    def test_this_host(self):
        # the report itself, for the lab's console (docs/check.md)
        print('\n--- runguard --check (exit %d)\n%s---'
              % self.raw([])[:2], flush=True)
        r = self.check('-u', RUN_USER)
        print('--- runguard --check -u %s (exit %d)\n%s---'
              % (RUN_USER, r.rc, r.text), flush=True)
        d = r.describe()
        self.assertEqual(r.status('cgroup.mode'), 'ok', d)
        self.assertTrue(r.items['cgroup.mode']['message']
                        .startswith(cgroup_mode()), d)
        self.assertTrue(r.items['kernel.release']['message']
                        .startswith(os.uname().release + ' '), d)
        for name in ('cgroup.memory', 'cgroup.parent',
                     'kernel.clone-into-cgroup', 'user.' + RUN_USER,
                     'valid-users', 'chroot-prefix'):
            self.assertEqual(r.status(name), 'ok', name + '\n' + d)
        # the features, as this process's own cgroup shows them
        for name, want in expected_kernel_items().items():
            self.assertEqual(r.status(name), want, name + '\n' + d)
        # the waits a run's meta file has here (docs/meta-file.md)
        full = 'wait-io-time' in rgtest.wait_keys()
        self.assertEqual(r.status('kernel.waits'),
                         'ok' if full else 'warning', d)
        if full:
            self.assertIn('(%s)' % ('cgroup-psi' if cgroup_mode() == 'v2'
                                    else 'unified-psi'),
                          r.items['kernel.waits']['message'], d)
        # per-run IPC namespaces pile up before 6.3 (no pool here)
        self.assertEqual(r.status('kernel.ipc-namespace'),
                         'ok' if kernel_version() >= (6, 3) else 'warning',
                         d)
        if cgroup_mode() == 'v1':
            for name in ('cgroup.cpuacct', 'cgroup.freezer'):
                self.assertEqual(r.status(name), 'ok', d)
        self.assertIn('none (pool-size from default, pool-dir from default)',
                      r.items['pool']['message'], d)
        # CAP_SYS_RESOURCE (bit 24) missing is a warning, not an error
        with open('/proc/self/status') as f:
            eff = int(re.search(r'^CapEff:\s*([0-9a-f]+)$', f.read(),
                                re.M).group(1), 16)
        want = 'ok' if eff & (1 << 24) else 'warning'
        self.assertEqual(r.status('privileges.capabilities'), want, d)
        if want == 'warning':
            self.assertIn('CAP_SYS_RESOURCE',
                          r.items['privileges.capabilities']['message'], d)
        # the rlimits this process hands over, as the item lists them
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.assertIn('nofile %d/%d' % (soft, hard),
                      r.items['privileges.rlimits']['message'], d)

    def test_run_user_missing(self):
        r = self.check('-u', 'rgcheck-nosuchuser')
        d = r.describe()
        self.assertEqual(r.rc, 2, d)
        i = r.items['user.rgcheck-nosuchuser']
        self.assertEqual(i['status'], 'error', d)
        self.assertEqual(i['fix'], 'useradd -d /nonexistent -U -M -s '
                         '/bin/false rgcheck-nosuchuser', d)
        self.assertNotIn('valid-users', r.items, d)
        # -g of a group that does not exist
        r = self.check('-u', RUN_USER, '-g', 'rgcheck-nosuchgroup')
        d = r.describe()
        self.assertEqual(r.status('group.rgcheck-nosuchgroup'), 'error', d)
        self.assertEqual(r.status('user.' + RUN_USER), 'ok', d)
        self.assertEqual(r.rc, 2, d)
        r = self.check('-u', RUN_USER, '-g', RUN_GROUP)
        self.assertEqual(r.status('group.' + RUN_GROUP), 'ok', r.describe())

    def test_run_user_not_admitted(self):
        # root exists, has a group of its name, and VALID_USERS never
        # admits it (uid 0)
        r = self.check('-u', 'root')
        d = r.describe()
        self.assertEqual(r.status('user.root'), 'error', d)
        self.assertEqual(r.status('valid-users'), 'error', d)
        self.assertIn('illegal user', r.items['valid-users']['message'], d)

    def test_run_users_missing_from_passwd(self):
        # /etc/passwd and /etc/group without the run users, for the
        # checked runguard alone
        tmp = tempfile.mkdtemp(prefix='rgcheck-')
        self.addCleanup(shutil.rmtree, tmp, True)
        steps = []
        for name in ('passwd', 'group'):
            with open('/etc/' + name) as f:
                kept = [l for l in f if not l.startswith(RUNUSER)]
            with open(os.path.join(tmp, name), 'w') as f:
                f.writelines(kept)
            steps.append(('bind', os.path.join(tmp, name), '/etc/' + name))
        r = self.check(preexec_fn=private_mounts(*steps))
        d = r.describe()
        self.assertEqual(r.rc, 2, d)
        for pat in VALID_USERS.split(','):
            i = r.items['user.' + pat]
            if '*' in pat:
                self.assertEqual(i['status'], 'ok', d)
                self.assertIn('matches 0 accounts', i['message'], d)
            else:
                # no run user at all: every run fails
                self.assertEqual(i['status'], 'error', d)
                self.assertIn('nor does any other run user', i['message'],
                              d)
                self.assertIn('useradd', i['fix'], d)
        # the build's RUNGROUP, which DOMjudge passes to every run as -g,
        # is gone too
        i = r.items['group.' + BUILD_RUNGROUP]
        self.assertEqual((i['status'], i['fix']),
                         ('error', 'groupadd ' + BUILD_RUNGROUP), d)
        # only the plain RUNUSER gone (judgedaemons started with -n N run
        # as RUNUSER-N): a warning, as long as a RUNUSER-* account exists
        with open('/etc/passwd') as f:
            kept = [l for l in f if not l.startswith(RUNUSER + ':')]
        with open(os.path.join(tmp, 'passwd'), 'w') as f:
            f.writelines(kept)
        with open(os.path.join(tmp, 'passwd')) as f:
            others = [l for l in f if l.startswith(RUNUSER + '-')]
        r = self.check(preexec_fn=private_mounts(
            ('bind', os.path.join(tmp, 'passwd'), '/etc/passwd')))
        d = r.describe()
        i = r.items['user.' + RUNUSER]
        if others:
            self.assertEqual(i['status'], 'warning', d)
            self.assertIn('runs as the other run users work', i['message'], d)
        else:
            self.assertEqual(i['status'], 'error', d)
        # and as the host has them
        r = self.check()
        for pat in VALID_USERS.split(','):
            if '*' in pat:
                self.assertNotIn('matches 0 accounts',
                                 r.items['user.' + pat]['message'],
                                 r.describe())

    def test_chroot_prefix_missing(self):
        # a tmpfs over the prefix's parent hides it
        parent = os.path.dirname(os.path.normpath(CHROOT_PREFIX))
        r = self.check('-u', RUN_USER,
                       preexec_fn=private_mounts(('tmpfs', parent)))
        d = r.describe()
        i = r.items['chroot-prefix']
        self.assertEqual(i['status'], 'error', d)
        self.assertEqual(i['fix'], 'mkdir -p ' + CHROOT_PREFIX, d)
        self.assertEqual(r.rc, 2, d)
        r = self.check('-u', RUN_USER)
        self.assertEqual(r.status('chroot-prefix'), 'ok', r.describe())

    def test_configuration_errors(self):
        tmp = tempfile.mkdtemp(prefix='rgcheck-')
        self.addCleanup(shutil.rmtree, tmp, True)
        conf = os.path.join(tmp, 'runguard.conf')
        with open(conf, 'w') as f:
            f.write('# pool\npool-size = lots\n')
        r = self.check('-u', RUN_USER, env=self.env(RUNGUARD_CONFIG=conf))
        d = r.describe()
        self.assertEqual(r.rc, 2, d)
        self.assertEqual(r.status('settings'), 'error', d)
        self.assertIn(conf + ':2', r.items['settings']['message'], d)
        # the rest is still checked, with the defaults
        self.assertIn('pool', r.items, d)
        self.assertIn('cgroup.mode', r.items, d)

        r = self.check('-u', RUN_USER, env=self.env(
            RUNGUARD_CONFIG=os.path.join(tmp, 'missing.conf')))
        self.assertEqual(r.status('settings'), 'error', r.describe())
        self.assertIn('cannot read configuration',
                      r.items['settings']['message'], r.describe())

        # a file another user may write is not trusted, a run refuses it
        os.chmod(conf, 0o666)
        r = self.check('-u', RUN_USER, env=self.env(RUNGUARD_CONFIG=conf))
        d = r.describe()
        self.assertEqual(r.status('settings'), 'error', d)
        self.assertIn("refusing configuration `%s' (uid 0, mode 0666)"
                      % conf, r.items['settings']['message'], d)
        self.assertTrue(r.items['settings']['fix'].startswith(
            'chown root FILE; chmod go-w FILE'), d)
        p = subprocess.run([RUNGUARD, '-u', RUN_USER, '/bin/true'],
                           env=self.env(RUNGUARD_CONFIG=conf),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 255, p.stderr)
        self.assertIn('refusing configuration', p.stderr)
        os.chmod(conf, 0o644)
        # nor does a FIFO there hold root up
        fifo = os.path.join(tmp, 'fifo.conf')
        os.mkfifo(fifo, 0o644)
        r = self.check('-u', RUN_USER, env=self.env(RUNGUARD_CONFIG=fifo))
        self.assertIn("refusing configuration `%s'" % fifo,
                      r.items['settings']['message'], r.describe())

        # which source won
        pool = os.path.join(tmp, 'pool')
        with open(conf, 'w') as f:
            f.write('pool-size = 3\npool-dir = %s\n' % pool)
        r = self.check('-u', RUN_USER, env=self.env(RUNGUARD_CONFIG=conf))
        d = r.describe()
        self.assertNotIn('settings', r.items, d)
        self.assertEqual(r.status('pool'), 'ok', d)
        self.assertIn('3 slots in %s (pool-size from %s:1, pool-dir from '
                      '%s:2): not made yet' % (pool, conf, conf),
                      r.items['pool']['message'], d)
        # resident slots by default: the keeper this build would start
        self.assertEqual(r.status('pool.keeper'), 'ok', d)
        self.assertTrue(r.items['pool.keeper']['message'].endswith(
            '/keeper/runguard-keeper'), d)
        r = self.check('-u', RUN_USER, env=self.env(
            RUNGUARD_CONFIG=conf, RUNGUARD_POOL_SIZE='2'))
        self.assertIn('2 slots in %s (pool-size from RUNGUARD_POOL_SIZE'
                      % pool, r.items['pool']['message'], r.describe())
        r = self.check('-u', RUN_USER, '--pool-size=1', env=self.env(
            RUNGUARD_CONFIG=conf, RUNGUARD_POOL_SIZE='2'))
        self.assertIn('1 slots in %s (pool-size from --pool-size' % pool,
                      r.items['pool']['message'], r.describe())
        self.assertFalse(os.path.exists(pool), 'the check made the pool')

    def test_keeper_only_from_a_directory_of_roots(self):
        """runguard installed beside its keeper in a directory another
        user may write, or with the keeper a symbolic link: root would
        exec what that user put there, so the keeper is not taken."""
        keeper = os.path.join(os.path.dirname(os.path.dirname(RUNGUARD)),
                              'keeper', 'runguard-keeper')
        tmp = tempfile.mkdtemp(prefix='rgkeeperdir-')
        self.addCleanup(shutil.rmtree, tmp, True)
        exe = os.path.join(tmp, 'runguard')
        shutil.copy2(RUNGUARD, exe)
        placed = os.path.join(tmp, 'runguard-keeper')

        def keeper_item():
            p = subprocess.run([exe, '--check', '--pool-size=1', '-u',
                                RUN_USER], env=self.env(), text=True,
                               capture_output=True, timeout=60)
            r = Report(p.returncode, p.stdout, p.stderr)
            return r.items['pool.keeper'], r.describe()

        shutil.copy2(keeper, placed)
        item, d = keeper_item()
        self.assertEqual((item['status'], item['message']), ('ok', placed), d)
        os.chmod(tmp, 0o777)
        item, d = keeper_item()
        self.assertEqual(item['status'], 'warning', d)
        self.assertNotEqual(item['message'], placed, d)
        os.chmod(tmp, 0o755)
        os.unlink(placed)
        os.symlink(keeper, placed)
        item, d = keeper_item()
        self.assertEqual(item['status'], 'warning', d)

    def test_bad_command_lines(self):
        for args in (['true'], ['--pool-show']):
            rc, out, err = self.raw(args)
            self.assertEqual(rc, 255, err)
            self.assertEqual(out, '')

    @unittest.skipUnless(cgroup_mode() == 'v1', 'cgroup v1 only')
    def test_v1_controller_missing(self):
        # freezer and cpuset unmounted for the checked runguard alone
        steps = private_mounts(('umount', os.path.join(CGROOT, 'freezer')),
                               ('umount', os.path.join(CGROOT, 'cpuset')))
        r = self.check('-u', RUN_USER, preexec_fn=steps)
        d = r.describe()
        self.assertEqual(r.rc, 2, d)
        i = r.items['cgroup.freezer']
        self.assertEqual(i['status'], 'error', d)
        self.assertIn('mount -t cgroup -o freezer', i['fix'], d)
        # cpuset: needed only to pin (-P)
        self.assertEqual(r.status('cgroup.cpuset'), 'warning', d)
        r = self.check('-u', RUN_USER, '-P', '0', preexec_fn=steps)
        self.assertEqual(r.status('cgroup.cpuset'), 'error', r.describe())

    # -- cgroup v2: the parent ------------------------------------------

    def v2_parent(self):
        """The configured parent, made (with +memory +cpuset for its
        children) if missing; removed again after the test."""
        path = os.path.join(CGROOT, CGROUP_PARENT)
        if not os.path.isdir(path):
            os.makedirs(path)
            self.addCleanup(os.rmdir, path)
        with open(os.path.join(CGROOT, 'cgroup.subtree_control')) as f:
            root = f.read().split()
        for c in ('memory', 'cpuset'):
            if c in root:
                with open(os.path.join(path, 'cgroup.subtree_control'),
                          'w') as f:
                    f.write('+' + c)
        return path, root

    @unittest.skipUnless(cgroup_mode() == 'v2', 'cgroup v2 only')
    def test_v2_parent_lacks_cpuset(self):
        path, root = self.v2_parent()
        if 'cpuset' not in root:
            self.skipTest('the root passes no cpuset on')
        control = os.path.join(path, 'cgroup.subtree_control')
        with open(control, 'w') as f:
            f.write('-cpuset')
        self.addCleanup(self.write_quietly, control, '+cpuset')
        r = self.check('-u', RUN_USER)
        d = r.describe()
        i = r.items['cgroup.parent']
        self.assertEqual(i['status'], 'warning', d)
        self.assertEqual(i['fix'], 'echo +cpuset > %s/cgroup.subtree_control'
                         % path, d)
        subprocess.run(['sh', '-c', i['fix']], check=True)
        r = self.check('-u', RUN_USER)
        self.assertEqual(r.status('cgroup.parent'), 'ok', r.describe())

    @staticmethod
    def write_quietly(path, text):
        try:
            with open(path, 'w') as f:
                f.write(text)
        except OSError:
            pass


class CheckOptions(ctypes.Structure):
    """struct rg_check_options (include/runguard/check.h)."""
    _fields_ = [('struct_size', ctypes.c_size_t),
                ('cgroup_parent', ctypes.c_char_p),
                ('want_cpuset', ctypes.c_bool),
                ('chroot_prefix', ctypes.c_char_p),
                ('run_users', ctypes.c_char_p),
                ('pool_dir', ctypes.c_char_p),
                ('pool_size', ctypes.c_uint),
                ('pool_keepers', ctypes.c_bool),
                ('pool_source', ctypes.c_char_p)]


class CheckLibraryTest(RGTestCase):
    """rg_check() through the shared library, as a judge links it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if rgtest.sanitizer_build():
            raise unittest.SkipTest(
                'librunguard is built with -fsanitize=%s: python cannot '
                'load it (the ASan runtime must come first); the plain '
                'build runs this' % rgtest.sanitizer_build())
        lib = os.path.join(os.path.dirname(os.path.dirname(RUNGUARD)),
                           'lib', 'librunguard.so.0')
        cls.lib = ctypes.CDLL(lib)
        for name, res in (('rg_check_item_name', ctypes.c_char_p),
                          ('rg_check_item_message', ctypes.c_char_p),
                          ('rg_check_item_fix', ctypes.c_char_p),
                          ('rg_check_report_count', ctypes.c_size_t),
                          ('rg_check_item_status', ctypes.c_int),
                          ('rg_check_report_status', ctypes.c_int)):
            getattr(cls.lib, name).restype = res
            getattr(cls.lib, name).argtypes = (
                [ctypes.c_void_p] if name.endswith(('count', 'report_status'))
                else [ctypes.c_void_p, ctypes.c_size_t])

    def rg_check(self, opts):
        report = ctypes.c_void_p()
        err = ctypes.create_string_buffer(2048)
        rc = self.lib.rg_check(ctypes.byref(opts), ctypes.byref(report), err)
        self.assertEqual(rc, 0, err.raw[4:200])
        items = {}
        for i in range(self.lib.rg_check_report_count(report)):
            fix = self.lib.rg_check_item_fix(report, i)
            items[self.lib.rg_check_item_name(report, i).decode()] = (
                self.lib.rg_check_item_status(report, i),
                self.lib.rg_check_item_message(report, i).decode(),
                fix.decode() if fix else None)
        worst = self.lib.rg_check_report_status(report)
        self.lib.rg_check_report_free(report)
        return items, worst

    def test_options_as_given(self):
        # a parent that cannot be made (v1 and v2 alike), a missing prefix
        opts = CheckOptions(ctypes.sizeof(CheckOptions), b'rg/../check',
                            False, b'/nonexistent-rgcheck', RUN_USER.encode(),
                            None, 0, False, b'the test')
        items, worst = self.rg_check(opts)
        d = repr(items)
        self.assertEqual(worst, 2, d)
        self.assertEqual(items['cgroup.parent'][0], 2, d)
        self.assertIn('invalid cgroup parent', items['cgroup.parent'][1], d)
        self.assertEqual(items['chroot-prefix'][0], 2, d)
        self.assertEqual(items['chroot-prefix'][2],
                         'mkdir -p /nonexistent-rgcheck', d)
        self.assertEqual(items['user.' + RUN_USER][0], 0, d)
        self.assertEqual(items['pool'][1],
                         'none (the test): each run makes its cgroups and '
                         'namespaces', d)
        # no probe cgroup for an invalid parent, no items it would feed;
        # their fix is the parent's, not the memory controller's
        self.assertEqual(items['kernel.memory-peak'][0],
                         0 if cgroup_mode() == 'v1' else 1, d)
        if cgroup_mode() == 'v2':
            for name in ('kernel.memory-peak', 'kernel.cgroup-kill',
                         'kernel.swap-accounting'):
                self.assertIn('cgroup parent', items[name][1], d)
                self.assertIsNone(items[name][2], d)

    def test_struct_size(self):
        # a caller built against a header with only the first two fields:
        # the rest counts as zero (no chroot prefix, no users, no pool)
        opts = CheckOptions(CheckOptions.cgroup_parent.offset
                            + ctypes.sizeof(ctypes.c_char_p),
                            CGROUP_PARENT.encode(), False,
                            b'/nonexistent-rgcheck', b'rgcheck-nosuchuser',
                            b'/nonexistent-pool', 4, False, b'x')
        items, worst = self.rg_check(opts)
        d = repr(items)
        self.assertNotIn('chroot-prefix', items, d)
        self.assertFalse([n for n in items if n.startswith('user.')], d)
        self.assertTrue(items['pool'][1].startswith('none (set by the '
                                                    'caller)'), d)
        self.assertEqual(items['cgroup.parent'][0], 0, d)

    @unittest.skipUnless(cgroup_mode() == 'v2', 'cgroup v2 only')
    def test_v2_parent_holds_processes(self):
        # a parent of this test's own, below ours: the configured one
        # exists as soon as an earlier test of the run made a slot in it.
        # Removed in the test, not in a cleanup: tearDown looks for
        # cgroups left behind before cleanups run.
        top = os.path.join(CGROOT, CGROUP_PARENT)
        made_top = not os.path.isdir(top)
        if made_top:
            os.makedirs(top)
        name = '%s/check-holds-%d' % (CGROUP_PARENT, os.getpid())
        path = os.path.join(CGROOT, name)
        os.mkdir(path)
        p = None
        try:
            p = subprocess.Popen(['sleep', '60'])
            with open(os.path.join(path, 'cgroup.procs'), 'w') as f:
                f.write(str(p.pid))
            opts = CheckOptions(ctypes.sizeof(CheckOptions), name.encode(),
                                False, None, None, None, 0, False,
                                b'the test')
            items, worst = self.rg_check(opts)
        finally:
            if p:
                p.kill()
                p.wait()
            os.rmdir(path)
            if made_top:
                os.rmdir(top)
        d = repr(items)
        self.assertEqual(worst, 2, d)
        self.assertEqual(items['cgroup.parent'][0], 2, d)
        self.assertIn('holds processes', items['cgroup.parent'][1], d)
        self.assertIn('/%s/cgroup.procs' % name, items['cgroup.parent'][2], d)

class CheckPoolTest(PoolTestCase, CheckTestCase):
    """The pool item against a pool in each state."""

    def pool_check(self):
        return self.check('-u', RUN_USER, *self.pool_opts())

    def test_pool_states(self):
        r = self.pool_check()
        d = r.describe()
        self.assertIn('not made yet', r.items['pool']['message'], d)
        self.assertNotIn('pool.slots', r.items, d)

        r = self.admin('--pool-size=1', '--pool-create')
        self.assertEqual(r.rc, 0, r.describe())
        self.show()
        r = self.pool_check()
        d = r.describe()
        self.assertEqual(r.status('pool'), 'ok', d)
        self.assertIn('1 slots in %s (pool-size from --pool-size, pool-dir '
                      'from --pool-dir)' % self.pool,
                      r.items['pool']['message'], d)
        self.assertTrue(r.items['pool.slots']['message']
                        .startswith('1 free, 0 held, 0 dirty'), d)
        # with a pool the IPC namespaces are kept, whatever the kernel
        self.assertEqual(r.status('kernel.ipc-namespace'), 'ok', d)

        # held
        h = self.start(['-t', '60', self.probe, 'hold', '30'], 'meta-held',
                       size=1)
        self.wait_for_user_process('poolprobe')
        r = self.pool_check()
        d = r.describe()
        self.assertIn('0 free, 1 held (slot:pid 0:%d), 0 dirty'
                      % h[0].pid, r.items['pool.slots']['message'], d)
        h[0].send_signal(signal.SIGTERM)
        self.finish(h, timeout=30)

        # dirty: its runguard killed mid-run
        h = self.start(['-t', '120', self.probe, 'daemon', '60'],
                       'meta-crash', stdout=subprocess.DEVNULL)
        victims = self.kill_runguard_mid_run(h)
        self.assertEqual(self.wait_gone(victims, 10), [])
        s = self.show_when_not_held()
        self.assertEqual(s.slots[0]['state'], 'dirty', s.text)
        r = self.pool_check()
        d = r.describe()
        i = r.items['pool.slot-0']
        self.assertEqual(i['status'], 'warning', d)
        self.assertIn('dirty', i['message'], d)
        self.assertEqual(i['fix'], 'runguard --pool-dir=%s '
                         '--pool-destroy=force' % self.pool, d)
        self.assertGreaterEqual(r.rc, 1, d)
        # the next run cleans it
        res = self.prg('-t', '20', self.probe, 'look', meta='meta-look')
        self.assertPoolMeta(res, slots=(0,))
        r = self.pool_check()
        self.assertNotIn('pool.slot-0', r.items, r.describe())

    def test_pool_files_not_roots(self):
        """A pool file another user owns or may write is an error with
        its fix, as runs refuse it."""
        r = self.admin('--pool-size=1', '--pool-create')
        self.assertEqual(r.rc, 0, r.describe())
        r = self.pool_check()
        self.assertEqual(r.status('pool.files'), 'ok', r.describe())
        lock = os.path.join(self.pool, 'slot-0.lock')
        uid = pwd.getpwnam(RUN_USER).pw_uid
        fix = 'runguard --pool-dir=%s --pool-destroy=force' % self.pool
        for change, shown in ((lambda: os.chmod(lock, 0o666),
                               'uid 0, mode 0666'),
                              (lambda: os.chown(lock, uid, -1),
                               'uid %d, mode 0600' % uid)):
            change()
            r = self.pool_check()
            d = r.describe()
            i = r.items['pool.files']
            self.assertEqual(i['status'], 'error', d)
            self.assertIn("`%s' (%s" % (lock, shown), i['message'], d)
            self.assertEqual(i['fix'], fix, d)
            self.assertGreaterEqual(r.rc, 1, d)
            # a run refuses it too, rather than share the slot
            res = self.prg('-t', '20', self.probe, 'look', meta='meta-f',
                           size=1)
            self.assertEqual(res.rc, 255, res.describe())
            self.assertIn('slot-0.lock', res.m.get('internal-error', ''),
                          res.describe())
            os.chown(lock, 0, -1)
            os.chmod(lock, 0o600)


if __name__ == '__main__':
    unittest.main()
