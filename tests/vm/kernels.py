# SPDX-License-Identifier: LGPL-2.1-or-later
"""Debian kernel images for the lab, fetched with apt-get download.

Each suite gets a private apt configuration and state directory below the
machine-wide cache: the machine's own apt sources, lists and locks are never
touched.  Packages are verified by apt against Debian's archive keyring, and
a kernel once fetched is never fetched again on this machine: the .deb and
the extracted vmlinuz stay in the cache.
"""

import glob
import os
import shutil
import subprocess
import tarfile

# Kernel series -> Debian suite that ships it.
SUITES = {
    '5.10': 'bullseye',
    '6.1': 'bookworm',
    '6.12': 'trixie',
}
MIRROR = os.environ.get('RG_LAB_MIRROR', 'http://deb.debian.org/debian')
KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg'
# The plain amd64 flavour: the cloud flavour lacks drivers we do not need
# either, but "what a judgehost runs" is the generic image.
FLAVOUR = os.environ.get('RG_LAB_FLAVOUR', 'amd64')


class LabError(Exception):
    """A lab step failed; the message says which and why."""


def default_cache_dir():
    """Machine-wide: a clean checkout must not download kernels again."""
    return os.environ.get('RG_LAB_CACHE', '/var/cache/runguard-lab')


class AptSuite:
    """apt-get for one Debian suite, with its own config and state."""

    def __init__(self, cache_dir, suite):
        self.suite = suite
        self.root = os.path.join(cache_dir, 'apt', suite)

    def _prepare(self):
        for sub in ('etc/preferences.d', 'etc/trusted.gpg.d',
                    'state/lists/partial', 'cache/archives/partial'):
            os.makedirs(os.path.join(self.root, sub), exist_ok=True)
        with open(os.path.join(self.root, 'etc', 'sources.list'), 'w') as f:
            f.write('deb [arch=amd64 signed-by=%s] %s %s main\n'
                    % (KEYRING, MIRROR, self.suite))

    def _options(self):
        r = self.root
        opts = {
            'Dir::Etc': r + '/etc',
            'Dir::Etc::sourcelist': r + '/etc/sources.list',
            'Dir::Etc::sourceparts': '-',
            'Dir::Etc::preferences': r + '/etc/preferences',
            'Dir::Etc::preferencesparts': r + '/etc/preferences.d',
            'Dir::Etc::trusted': r + '/etc/trusted.gpg',
            'Dir::Etc::trustedparts': r + '/etc/trusted.gpg.d',
            'Dir::State': r + '/state',
            'Dir::State::status': '/dev/null',
            'Dir::Cache': r + '/cache',
            'APT::Architecture': 'amd64',
            'APT::Architectures': 'amd64',
            # Our own state directory: no need for the system's lock.
            'Debug::NoLocking': '1',
            # Files land in a root-owned cache; do not drop to _apt.
            'APT::Sandbox::User': 'root',
        }
        args = []
        for k, v in opts.items():
            args += ['-o', '%s=%s' % (k, v)]
        return args

    def _run(self, tool, *args, cwd=None):
        cmd = [tool] + self._options() + list(args)
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise LabError('%s failed (%d): %s\n%s' % (
                ' '.join([tool] + list(args)), proc.returncode,
                proc.stdout[-2000:], proc.stderr[-2000:]))
        return proc.stdout

    def update(self):
        self._prepare()
        self._run('apt-get', '-q', 'update')

    def image_package(self):
        """linux-image-<version>-<flavour>, via the flavour's metapackage."""
        out = self._run('apt-cache', 'depends', 'linux-image-' + FLAVOUR)
        for line in out.splitlines():
            line = line.strip()
            if line.startswith('Depends: linux-image-'):
                return line.split(':', 1)[1].strip()
        raise LabError('no kernel image behind linux-image-%s in %s'
                       % (FLAVOUR, self.suite))

    def download(self, package, dest):
        os.makedirs(dest, exist_ok=True)
        self._run('apt-get', '-q', 'download', package, cwd=dest)
        found = glob.glob(os.path.join(dest, package + '_*.deb'))
        if not found:
            raise LabError('apt-get download %s left no .deb in %s'
                           % (package, dest))
        return found[0]


def _boot_file_kind(member):
    """'vmlinuz' or 'config' for the files we want, else None."""
    kind = os.path.basename(member.name).split('-', 1)[0]
    if (member.isfile() and '/boot/' in member.name
            and kind in ('vmlinuz', 'config')):
        return kind
    return None


def _extract_atomically(tar, member, dest):
    """A half-written kernel must never look cached."""
    path = os.path.join(dest, os.path.basename(member.name))
    try:
        with open(path + '.tmp', 'wb') as out:
            shutil.copyfileobj(tar.extractfile(member), out)
        os.replace(path + '.tmp', path)
    finally:
        if os.path.exists(path + '.tmp'):
            os.unlink(path + '.tmp')
    return path


def _extract_boot_files(deb, dest):
    """Only /boot/vmlinuz-* and /boot/config-*: no modules are needed."""
    found = {}
    with subprocess.Popen(['dpkg-deb', '--fsys-tarfile', deb],
                          stdout=subprocess.PIPE) as proc:
        try:
            with tarfile.open(fileobj=proc.stdout, mode='r|') as tar:
                for member in tar:
                    kind = _boot_file_kind(member)
                    if kind:
                        found[kind] = _extract_atomically(tar, member, dest)
        except (tarfile.TarError, OSError) as e:
            proc.kill()
            raise LabError('cannot read %s: %s' % (deb, e))
    if proc.returncode != 0:
        raise LabError('dpkg-deb --fsys-tarfile %s failed' % deb)
    if 'vmlinuz' not in found:
        raise LabError('%s holds no /boot/vmlinuz-*' % deb)
    return found['vmlinuz'], found.get('config')


class Kernel:
    def __init__(self, series, vmlinuz, config):
        self.series = series
        self.vmlinuz = vmlinuz
        self.config = config
        self.release = os.path.basename(vmlinuz)[len('vmlinuz-'):]

    def config_value(self, key):
        """'y', 'm', a value, or None when unset (or no config shipped)."""
        if not self.config:
            return None
        with open(self.config) as f:
            for line in f:
                if line.startswith(key + '='):
                    return line.split('=', 1)[1].strip()
        return None


def fetch(series, cache_dir=None, log=print):
    """The kernel of a series, from the cache or downloaded once."""
    if series not in SUITES:
        raise LabError('unknown kernel series %s (known: %s)'
                       % (series, ', '.join(sorted(SUITES))))
    cache_dir = cache_dir or default_cache_dir()
    kdir = os.path.join(cache_dir, 'kernels', series + '-' + FLAVOUR)
    found = sorted(glob.glob(os.path.join(kdir, 'vmlinuz-*')))
    if found:
        config = found[-1].replace('vmlinuz-', 'config-')
        return Kernel(series, found[-1],
                      config if os.path.exists(config) else None)

    suite = SUITES[series]
    log('lab: fetching the %s kernel from Debian %s (once per machine, '
        'cached in %s)' % (series, suite, cache_dir))
    apt = AptSuite(cache_dir, suite)
    apt.update()
    package = apt.image_package()
    deb = apt.download(package, os.path.join(cache_dir, 'debs'))
    os.makedirs(kdir, exist_ok=True)
    vmlinuz, config = _extract_boot_files(deb, kdir)
    log('lab: %s -> %s' % (package, vmlinuz))
    return Kernel(series, vmlinuz, config)
