# SPDX-License-Identifier: LGPL-2.1-or-later
"""A minimal writer for the kernel's initramfs format (cpio "newc").

Entries are written in the order added; parents must come before children.
Every entry is owned by root; modes are taken from the caller.
"""

import stat

_MAGIC = b'070701'
_TRAILER = 'TRAILER!!!'


def _pad4(n):
    return (4 - n % 4) % 4


class CpioWriter:
    def __init__(self, out):
        self.out = out
        self.ino = 1

    def _entry(self, name, mode, data=b'', nlink=1, mtime=0):
        name_b = name.encode() + b'\0'
        fields = (self.ino, mode, 0, 0, nlink, mtime, len(data),
                  0, 0, 0, 0, len(name_b), 0)
        self.ino += 1
        header = _MAGIC + b''.join(b'%08X' % v for v in fields)
        self.out.write(header)
        self.out.write(name_b)
        self.out.write(b'\0' * _pad4(len(header) + len(name_b)))
        self.out.write(data)
        self.out.write(b'\0' * _pad4(len(data)))

    def directory(self, name, perm=0o755):
        self._entry(name, stat.S_IFDIR | perm, nlink=2)

    def file(self, name, data, perm=0o644):
        self._entry(name, stat.S_IFREG | perm, data)

    def symlink(self, name, target):
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def char_device(self, name, perm, major, minor):
        name_b = name.encode() + b'\0'
        fields = (self.ino, stat.S_IFCHR | perm, 0, 0, 1, 0, 0,
                  0, 0, major, minor, len(name_b), 0)
        self.ino += 1
        header = _MAGIC + b''.join(b'%08X' % v for v in fields)
        self.out.write(header + name_b)
        self.out.write(b'\0' * _pad4(len(header) + len(name_b)))

    def close(self):
        self._entry(_TRAILER, 0)
