# SPDX-License-Identifier: LGPL-2.1-or-later
"""Identity, capabilities, no_new_privs, seccomp, fds, namespaces, cpuset."""

import glob
import os
import resource

from rgtest import CGROUP_PARENT, RGTestCase, cgroup_mode, main

# Syscalls the default seccomp filter must deny with EPERM.
DENIED_EPERM = (
    'keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open',
    'userfaultfd', 'io_uring_setup', 'io_uring_enter', 'io_uring_register',
    'mount', 'umount2', 'pivot_root', 'open_tree', 'move_mount', 'fsopen',
    'fsconfig', 'fsmount', 'fspick', 'unshare0', 'unshare-newuser', 'setns',
    'kexec_load', 'kexec_file_load', 'init_module', 'finit_module',
    'delete_module', 'ptrace-traceme', 'clone-newuser',
)

# With the filter off these give a "normal" result (not EPERM/ENOSYS), which
# proves it is the filter that denies them above.
ALLOWED_WITHOUT_FILTER = {
    'setns': 'EBADF',
    'clone3': 'EINVAL',
    'io_uring_enter': 'EBADF',
    'open_tree': 'ENOENT',
    'unshare0': 'OK',
    'ptrace-traceme': 'OK',
}


def parse_probe(text):
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition(': ')
        if not sep and line.endswith(':'):
            k, v = line[:-1], ''
        if k == 'cgroup':
            out.setdefault('cgroup', []).append(v)
        else:
            out[k] = v
    return out


class PrivilegeTest(RGTestCase):

    def probe(self, *opts, **kw):
        res = self.rg(*opts, self.prog('probe'), **kw)
        self.assertRun(res)
        p = parse_probe(res.stdout)
        self.assertEqual(p.get('probe'), 'done', res.describe())
        return res, p

    def test_identity_caps_and_nnp(self):
        _, p = self.probe()
        self.assertEqual(p['uid'], '%d %d %d' % ((self.uid,) * 3))
        self.assertEqual(p['gid'], '%d %d %d' % ((self.gid,) * 3))
        self.assertEqual(p['groups'], '', 'supplementary groups not cleared')
        for cap in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'):
            self.assertEqual(int(p[cap], 16), 0, '%s = %s' % (cap, p[cap]))
        self.assertEqual(p['NoNewPrivs'], '1')
        self.assertEqual(p['cwd'], self.tdir)
        self.assertEqual(p['sid-leader'], '1')

    def test_supplementary_groups_of_caller_not_inherited(self):
        def add_groups():
            os.setgroups([0, 4, 27])
        _, p = self.probe(preexec_fn=add_groups)
        self.assertEqual(p['groups'], '')

    def test_only_standard_fds_open(self):
        extra_r, extra_w = os.pipe()
        other = os.open('/etc/passwd', os.O_RDONLY)
        try:
            _, p = self.probe(pass_fds=(extra_r, extra_w, other))
        finally:
            for fd in (extra_r, extra_w, other):
                os.close(fd)
        self.assertEqual(p['fds'], '0,1,2')

    def test_seccomp_denies_syscalls(self):
        res, p = self.probe()
        self.assertEqual(p['Seccomp'], '2')
        wrong = {name: p.get('sys-' + name) for name in DENIED_EPERM
                 if p.get('sys-' + name) != 'EPERM'}
        self.assertEqual(wrong, {}, 'syscalls not denied with EPERM\n'
                         + res.stdout)
        self.assertEqual(p['sys-clone3'], 'ENOSYS')
        # Ordinary process and thread creation still works.
        self.assertEqual(p['fork'], 'OK')
        self.assertEqual(p['thread'], 'OK')

    def test_seccomp_off(self):
        res, p = self.probe('--seccomp=off')
        self.assertEqual(p['Seccomp'], '0')
        for name, expect in ALLOWED_WITHOUT_FILTER.items():
            self.assertEqual(p['sys-' + name], expect, name + '\n' + res.stdout)
        # Still no privileges without the filter.
        for cap in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'):
            self.assertEqual(int(p[cap], 16), 0, cap)
        self.assertEqual(p['NoNewPrivs'], '1')
        self.assertEqual(p['uid'], '%d %d %d' % ((self.uid,) * 3))

    def test_core_dumps_off_by_default(self):
        _, p = self.probe()
        self.assertEqual(p['rlimit-core'], '1 1')

    def test_no_core_file_written(self):
        wdir = self.path('cwd')
        os.mkdir(wdir)
        os.chmod(wdir, 0o777)

        def allow_cores():
            resource.setrlimit(resource.RLIMIT_CORE,
                               (resource.RLIM_INFINITY,
                                resource.RLIM_INFINITY))
        res = self.rg(self.prog('signal'), 'SEGV', cwd=wdir,
                      preexec_fn=allow_cores)
        self.assertRun(res, exitcode=139)
        self.assertEqual(glob.glob(os.path.join(wdir, 'core*')), [])

    def test_allow_core_dumps(self):
        def set_core_limit():
            resource.setrlimit(resource.RLIMIT_CORE,
                               (1 << 20, resource.RLIM_INFINITY))
        _, p = self.probe('--allow-core-dumps', preexec_fn=set_core_limit)
        self.assertNotEqual(p['rlimit-core'].split()[0], '1',
                            'core dumps still disabled')
        # -c wins regardless.
        _, p = self.probe('--allow-core-dumps', '-c',
                          preexec_fn=set_core_limit)
        self.assertEqual(p['rlimit-core'], '1 1')

    def test_in_run_cgroup(self):
        _, p = self.probe()
        if cgroup_mode() == 'v1':
            for ctrl in ('memory', 'cpuacct'):
                lines = [l for l in p['cgroup']
                         if ctrl in l.split(':')[1].split(',')]
                self.assertEqual(len(lines), 1, p['cgroup'])
                path = lines[0].split(':', 2)[2]
                self.assertTrue(path.startswith('/%s/' % CGROUP_PARENT),
                                '%s cgroup %s is not below /%s/'
                                % (ctrl, path, CGROUP_PARENT))
        else:
            path = [l for l in p['cgroup'] if l.startswith('0::')][0][3:]
            self.assertTrue(path.startswith('/%s/' % CGROUP_PARENT), path)

    def test_network_namespace_has_only_loopback(self):
        _, p = self.probe()
        self.assertEqual(p['net-ifaces'], 'lo')

    def test_cpuset_pinning(self):
        with open('/sys/devices/system/cpu/online') as f:
            online = f.read().strip()
        cpus = ['0']
        if online != '0':
            last = online.replace(',', '-').split('-')[-1]
            cpus.append(last)
        for cpu in cpus:
            with self.subTest(cpu=cpu):
                _, p = self.probe('-P', cpu)
                self.assertEqual(p['Cpus_allowed_list'], cpu)

    def test_cpuset_offline_cpu_rejected(self):
        res = self.rg('-P', '4095', self.prog('hello'))
        self.assertEqual(res.rc, 255, res.describe())
        self.assertNotIn('hello stdout', res.stdout)


if __name__ == '__main__':
    main()
