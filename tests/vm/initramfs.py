# SPDX-License-Identifier: LGPL-2.1-or-later
"""The lab's initramfs: busybox, python3, our build, our tests, a run user.

Host files keep their absolute paths inside the guest (symlinks such as
/lib -> usr/lib included), so RPATHs, the paths baked into the build and
the test environment work unchanged.  Shared libraries are found with ldd.
"""

import os
import stat
import subprocess

from cpio import CpioWriter
from kernels import LabError

BUSYBOX = '/bin/busybox'
PYTHON = '/usr/bin/python3'
# Host tools the tests call (ldd is a bash script); fincore (util-linux-
# extra, page cache residency for test_pool's prewarm test) when the host
# has it: busybox has no applet for it.
TOOLS = ('/bin/bash', '/usr/bin/ldd')
OPTIONAL_TOOLS = ('/usr/bin/fincore',)
# glibc loads it at run time (thread cancellation, C++ unwinding).
DLOPENED = ('libgcc_s.so.1',)
# Parts of the Python standard library the tests never import.
PYTHON_SKIP = ('test', 'idlelib', 'tkinter', 'turtledemo', 'ensurepip',
               'lib2to3', 'pydoc_data')


def _is_elf(path):
    try:
        with open(path, 'rb') as f:
            return f.read(4) == b'\x7fELF'
    except OSError:
        return False


def ldd(path):
    """Absolute paths of the shared objects path needs ([] if static)."""
    proc = subprocess.run(['ldd', path], capture_output=True, text=True)
    if proc.returncode != 0:
        if 'not a dynamic executable' in proc.stdout + proc.stderr:
            return []
        raise LabError('ldd %s failed: %s' % (path, proc.stderr.strip()))
    libs = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if 'not found' in line:
            raise LabError('ldd %s: %s' % (path, line))
        if '=>' in line:
            target = line.split('=>', 1)[1].strip().split(' (')[0]
        else:
            target = line.split(' (')[0]
        if target.startswith('/'):
            libs.append(target)
    return libs


class Image:
    """Entries by guest path; written in path order (parents first)."""

    def __init__(self):
        self.entries = {}

    # -- host files ------------------------------------------------------

    def add_host(self, path):
        """Add a host path, the symlinks on its way and what they point to."""
        path = os.path.normpath(path)
        cur = '/'
        for comp in path.strip('/').split('/'):
            nxt = os.path.join(cur, comp)
            st = os.lstat(nxt)
            if stat.S_ISLNK(st.st_mode):
                self.entries[nxt] = ('symlink', os.readlink(nxt))
                cur = os.path.realpath(nxt)
                self.add_host(cur)
            elif stat.S_ISDIR(st.st_mode):
                self.entries.setdefault(nxt, ('dir', stat.S_IMODE(st.st_mode)))
                cur = nxt
            else:
                self.entries[nxt] = ('host', nxt, stat.S_IMODE(st.st_mode))
                cur = nxt

    def add_tree(self, top, skip=lambda name: False):
        """top and everything below it, but for directories skip(name)."""
        self.add_host(top)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not skip(d)]
            for name in dirnames + filenames:
                self.add_host(os.path.join(dirpath, name))

    def add_elf(self, path):
        """An ELF file and, recursively, every shared object it needs."""
        self.add_host(path)
        for lib in ldd(path):
            self.add_host(lib)

    # -- generated files -------------------------------------------------

    def add_dir(self, path, perm=0o755):
        parent = os.path.dirname(path)
        if parent != '/' and parent not in self.entries:
            self.add_dir(parent)
        self.entries.setdefault(path, ('dir', perm))

    def add_data(self, path, data, perm=0o644):
        self.add_dir(os.path.dirname(path))
        if isinstance(data, str):
            data = data.encode()
        self.entries[path] = ('data', data, perm)

    def add_symlink(self, path, target):
        self.add_dir(os.path.dirname(path))
        self.entries[path] = ('symlink', target)

    # -- output ----------------------------------------------------------

    def write(self, out_path):
        tmp = out_path + '.tmp'
        try:
            self._write(tmp)
            os.replace(tmp, out_path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _write(self, tmp):
        with open(tmp, 'wb') as out:
            w = CpioWriter(out)
            for path in sorted(self.entries, key=lambda p: p.split('/')):
                e = self.entries[path]
                name = path.lstrip('/')
                if e[0] == 'dir':
                    w.directory(name, e[1])
                elif e[0] == 'symlink':
                    w.symlink(name, e[1])
                elif e[0] == 'data':
                    w.file(name, e[1], e[2])
                else:
                    with open(e[1], 'rb') as f:
                        w.file(name, f.read(), e[2])
            w.char_device('dev/console', 0o600, 5, 1)
            w.char_device('dev/null', 0o666, 1, 3)
            w.close()


def _python_files(img):
    real = os.path.realpath(PYTHON)
    img.add_elf(PYTHON)
    version = os.path.basename(real)             # python3.11
    stdlib = os.path.join('/usr/lib', version)
    if not os.path.isdir(stdlib):
        raise LabError('Python standard library %s not found' % stdlib)
    # config-*: the static libpython and its build files.
    img.add_tree(stdlib, lambda d: d in PYTHON_SKIP or d.startswith('config-'))
    dynload = os.path.join(stdlib, 'lib-dynload')
    for name in sorted(os.listdir(dynload)):
        if name.endswith('.so'):
            img.add_elf(os.path.join(dynload, name))


def _dlopened_libs(img):
    for d in ('/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu'):
        for name in DLOPENED:
            p = os.path.join(d, name)
            if os.path.exists(p):
                img.add_host(p)
                break


def _users(run_users, run_group):
    """passwd/group with root, nobody and the run users (uid 2000+)."""
    passwd = ['root:x:0:0:root:/root:/bin/sh',
              'nobody:x:65534:65534:nobody:/nonexistent:/bin/false']
    group = ['root:x:0:', 'nogroup:x:65534:', '%s:x:2000:' % run_group]
    for i, name in enumerate(run_users):
        uid = 2001 + i
        # Each run user's primary group is its own, as useradd makes it.
        group.append('%s:x:%d:' % (name, uid))
        passwd.append('%s:x:%d:%d::/nonexistent:/bin/false' % (name, uid, uid))
    return '\n'.join(passwd) + '\n', '\n'.join(group) + '\n'


def build(out_path, project_files, elf_files, run_users, run_group,
          init_script, command_script, extra=None):
    """Write the initramfs to out_path; extra: {guest path: text}."""
    img = Image()
    # busybox --install puts applets in all four; keep the host's /usr merge.
    for d in ('/bin', '/sbin', '/usr/bin', '/usr/sbin'):
        img.add_host(d)
    img.add_host(BUSYBOX)
    for tool in TOOLS + tuple(t for t in OPTIONAL_TOOLS
                              if os.path.exists(t)):
        if _is_elf(tool):
            img.add_elf(tool)
        else:
            img.add_host(tool)
    _python_files(img)
    _dlopened_libs(img)
    for path in elf_files:
        if _is_elf(path):
            img.add_elf(path)
        else:
            img.add_host(path)
    for path in project_files:
        if os.path.isdir(path):
            img.add_tree(path)
        elif _is_elf(path):
            img.add_elf(path)
        else:
            img.add_host(path)

    passwd, group = _users(run_users, run_group)
    img.add_data('/etc/passwd', passwd)
    img.add_data('/etc/group', group)
    img.add_data('/etc/nsswitch.conf', 'passwd: files\ngroup: files\n')
    img.add_data('/etc/hostname', 'runguard-lab\n')
    img.add_data('/init', init_script, 0o755)
    img.add_data('/lab/command', command_script, 0o755)
    for path, text in (extra or {}).items():
        img.add_data(path, text)
    for d in ('/proc', '/sys', '/dev', '/tmp', '/run', '/root', '/var',
              '/opt', '/mnt'):
        img.add_dir(d, 0o1777 if d == '/tmp' else 0o755)
    img.write(out_path)
    return out_path
