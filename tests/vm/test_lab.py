#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tests of the kernel lab's own parts that need no qemu: the initramfs
writer (read back by busybox cpio), the guest's result protocol, the hung
guest timeout (with a fake qemu), the unpacking of results, and the test
selection (--tests) a boot runs."""

import argparse
import base64
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import initramfs  # noqa: E402
import lab  # noqa: E402
import qemu  # noqa: E402
from kernels import LabError  # noqa: E402

BUSYBOX = '/bin/busybox'


class CpioTest(unittest.TestCase):

    def test_busybox_reads_back_what_we_write(self):
        if not os.access(BUSYBOX, os.X_OK):
            self.skipTest('busybox is not installed (scripts/install-deps)')
        with tempfile.TemporaryDirectory() as tmp:
            img = initramfs.Image()
            img.add_data('/etc/passwd', 'root:x:0:0::/:/bin/sh\n')
            img.add_data('/lab/command', '#!/bin/sh\nexit 3\n', 0o755)
            img.add_symlink('/bin', 'usr/bin')
            img.add_dir('/usr/bin')
            img.add_host('/bin/busybox')
            archive = os.path.join(tmp, 'initrd.cpio')
            img.write(archive)
            out = os.path.join(tmp, 'root')
            os.mkdir(out)
            with open(archive, 'rb') as f:
                subprocess.run([BUSYBOX, 'cpio', '-i', '-d', '-m'], stdin=f,
                               cwd=out, check=True, capture_output=True)
            with open(os.path.join(out, 'etc', 'passwd')) as f:
                self.assertEqual(f.read(), 'root:x:0:0::/:/bin/sh\n')
            cmd = os.path.join(out, 'lab', 'command')
            self.assertEqual(stat.S_IMODE(os.stat(cmd).st_mode), 0o755)
            self.assertEqual(os.readlink(os.path.join(out, 'bin')),
                             'usr/bin')
            # /bin/busybox is really /usr/bin/busybox on a merged-/usr host
            real = os.path.join(out, os.path.realpath(BUSYBOX).lstrip('/'))
            self.assertTrue(os.path.isfile(real), real)
            self.assertEqual(os.path.getsize(real),
                             os.path.getsize(BUSYBOX))

    def test_ldd_finds_libc_and_nothing_for_static(self):
        libs = initramfs.ldd(sys.executable)
        self.assertTrue(any('libc.so' in lib for lib in libs), libs)
        if os.access(BUSYBOX, os.X_OK):
            self.assertEqual(initramfs.ldd(BUSYBOX), [])


FAKE_QEMU = r'''#!/bin/sh
# prints like a guest: console noise, features, then behaves as $FAKE_MODE
echo "SeaBIOS noise"
echo "lab-feature: kernel: 9.9-fake"
case "$FAKE_MODE" in
result) echo "RUNGUARD-LAB-RESULT $FAKE_NONCE rc=7" ;;
forged) echo "RUNGUARD-LAB-RESULT 000000000000 rc=0" ;;
hang) exec sleep 600 ;;
int3) echo "[    3.2] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI"
      echo "[    3.3] Kernel panic - not syncing: Fatal exception" ;;
bug) echo "[    9.1] Oops: general protection fault: 0000 [#1] SMP"
     echo "[    9.2] Oops: int3: 0000 [#2] SMP" ;;
esac
'''


class BootTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        fake = os.path.join(self.tmp, 'fake-qemu')
        with open(fake, 'w') as f:
            f.write(FAKE_QEMU)
        os.chmod(fake, 0o755)
        self.addCleanup(shutil.rmtree, self.tmp)
        self.old_qemu = qemu.QEMU
        qemu.QEMU = fake
        self.addCleanup(setattr, qemu, 'QEMU', self.old_qemu)

    def boot(self, mode, timeout=30):
        os.environ['FAKE_MODE'] = mode
        os.environ['FAKE_NONCE'] = 'abcdef123456'
        lines = []
        res = qemu.boot('vmlinuz', 'initrd', 'cmdline', 'abcdef123456', 1,
                        256, timeout, 'tcg',
                        os.path.join(self.tmp, 'serial'),
                        os.path.join(self.tmp, 'console.log'), lines.append)
        return res, lines

    def test_result_line_with_nonce(self):
        res, lines = self.boot('result')
        self.assertEqual(res.rc, 7)
        self.assertFalse(res.hung)
        self.assertEqual(res.features, {'kernel': '9.9-fake'})
        self.assertIn('SeaBIOS noise', lines)

    def test_result_without_the_nonce_is_not_believed(self):
        res, _ = self.boot('forged')
        self.assertIsNone(res.rc)
        self.assertIn('without a result', res.describe())

    def test_hung_guest_is_killed_and_reported(self):
        res, _ = self.boot('hang', timeout=2)
        self.assertTrue(res.hung)
        self.assertIsNone(res.rc)
        self.assertLess(res.elapsed, 30)
        self.assertIn('hung', res.describe())

    def test_int3_oops_is_the_emulators_other_oopses_are_not(self):
        """Only a guest that died first of an int3 is booted again."""
        res, _ = self.boot('int3')
        res.accel = 'tcg'
        self.assertIn('Oops: int3', res.oops)
        self.assertTrue(lab.emulator_fault(res))
        res.accel = 'kvm'
        self.assertFalse(lab.emulator_fault(res))
        res, _ = self.boot('bug')
        res.accel = 'tcg'
        self.assertIn('general protection', res.oops)
        self.assertFalse(lab.emulator_fault(res))
        res, _ = self.boot('result')
        res.accel = 'tcg'
        self.assertIsNone(res.oops)
        self.assertFalse(lab.emulator_fault(res))


class ResultsTest(unittest.TestCase):

    def serial_with(self, members, nonce='n1'):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode='w:gz') as tar:
            for name, data, kind in members:
                info = tarfile.TarInfo(name)
                if kind == 'sym':
                    info.type = tarfile.SYMTYPE
                    info.linkname = data
                    tar.addfile(info)
                else:
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        text = base64.encodebytes(buf.getvalue()).decode()
        # the guest's tty turns \n into \r\n
        return ('RUNGUARD-LAB-RESULTS-BEGIN %s\r\n%s\r\n'
                'RUNGUARD-LAB-RESULTS-END %s\r\n'
                % (nonce, text.replace('\n', '\r\n'), nonce))

    def test_files_come_back_and_nothing_escapes(self):
        with tempfile.TemporaryDirectory() as tmp:
            serial = os.path.join(tmp, 'serial')
            with open(serial, 'w') as f:
                f.write(self.serial_with([
                    ('./out/data.json', b'{"runs": 3}\n', 'file'),
                    ('../escape', b'x', 'file'),
                    ('./link', '/etc/passwd', 'sym'),
                ]))
            dest = os.path.join(tmp, 'results')
            names = qemu.extract_results(serial, 'n1', dest)
            self.assertEqual(names, ['./out/data.json'])
            with open(os.path.join(dest, 'out', 'data.json')) as f:
                self.assertEqual(f.read(), '{"runs": 3}\n')
            self.assertFalse(os.path.exists(os.path.join(tmp, 'escape')))
            self.assertFalse(os.path.lexists(os.path.join(dest, 'link')))

    def test_other_nonce_and_truncation(self):
        with tempfile.TemporaryDirectory() as tmp:
            serial = os.path.join(tmp, 'serial')
            with open(serial, 'w') as f:
                f.write(self.serial_with([('./a', b'a', 'file')], 'old'))
            self.assertEqual(qemu.extract_results(serial, 'n1', tmp), [])
            with open(serial, 'w') as f:
                f.write('RUNGUARD-LAB-RESULTS-BEGIN n1\r\nH4sI')
            with self.assertRaises(LabError):
                qemu.extract_results(serial, 'n1', tmp)


class FakeBuild:
    def target_path(self, name):
        return '/build/' + name


class TestSelectionTest(unittest.TestCase):
    """What the guest's command runs for a --tests value (CI's 6.1 boot
    runs cgroup,pool)."""

    def command(self, text):
        return lab.test_command(FakeBuild(), lab.parse_tests(text))

    def integration_runs(self, cmd):
        """[(environment words, modules)] of each run.py line."""
        runs = []
        for line in cmd.splitlines():
            if '/run.py ' in line:
                words = line.split()
                env = [w for w in words
                       if re.fullmatch(r'[A-Z_]+=\S*', w)]
                runs.append((env, [w for w in words
                                   if w.startswith('test_')]))
        return runs

    def integration_modules(self, cmd):
        runs = self.integration_runs(cmd)
        return runs[0][1] if runs else []

    def test_all_runs_everything(self):
        cmd = self.command('all')
        self.assertIn('/build/test-cgroup', cmd)
        self.assertEqual(self.integration_runs(cmd), [
            ([], ['test_' + m for m in lab.INTEGRATION_MODULES])])

    def test_cgroup_and_one_module(self):
        cmd = self.command('cgroup,pool')
        self.assertIn('/build/test-cgroup', cmd)
        self.assertEqual(self.integration_modules(cmd), ['test_pool'])

    def test_module_alone(self):
        cmd = self.command('pool,cli')
        self.assertNotIn('test-cgroup', cmd)
        # in the suite's order, whatever the order given
        self.assertEqual(self.integration_modules(cmd),
                         ['test_cli', 'test_pool'])

    def test_meson_boots_name_known_selections(self):
        """Every boot in tests/vm/meson.build asks for tests lab.py
        knows (a removed module once failed CI's boot at once)."""
        with open(os.path.join(HERE, 'meson.build')) as f:
            boots = re.findall(r"\['(vm-[\w.-]+)', '[\d.]+', 'v\d', "
                               r"'([^']+)'", f.read())
        self.assertGreaterEqual(len(boots), 5, boots)
        for name, tests in boots:
            with self.subTest(boot=name):
                self.assertTrue(lab.parse_tests(tests))

    def test_unknown_name_is_refused(self):
        for bad in ('cgroup,nosuch', '', 'test_pool'):
            with self.assertRaises(argparse.ArgumentTypeError, msg=bad):
                lab.parse_tests(bad)


class KernelCmdlineTest(unittest.TestCase):
    def test_extra_args_come_last_so_they_win(self):
        line = lab.kernel_cmdline('v2', 'abc', ['loglevel=7']).split()
        self.assertIn('cgroup_no_v1=all', line)
        self.assertEqual(line[-1], 'loglevel=7')
        self.assertLess(line.index('loglevel=3'), line.index('loglevel=7'))

    def test_option_is_parsed(self):
        opts = lab.parse_args(['run', '-k', '6.1', '-c', 'v1',
                               '--kernel-arg', 'loglevel=7',
                               '--kernel-arg', 'softlockup_panic=1'])
        self.assertEqual(opts.kernel_arg, ['loglevel=7', 'softlockup_panic=1'])
        self.assertEqual(lab.parse_args(['matrix']).kernel_arg, [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
