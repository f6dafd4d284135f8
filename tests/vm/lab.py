#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard's kernel lab: boot Debian kernels under qemu, run tests inside.

usage:
  lab.py fetch [-k SERIES ...]                download the kernels (cached)
  lab.py run -k SERIES -c v1|v2 [options] [-- COMMAND ...]
                                              one boot: the test suite, or
                                              COMMAND
  lab.py matrix [options]                     every boot of the matrix

Options of run and matrix:
  -B, --build DIR     meson build directory (default: <source>/build)
  --smp N             vCPUs (default: 2; any number, even above the host's)
  --memory MIB        guest RAM (default: 2048)
  --timeout SEC       kill the guest after SEC seconds (default: 1200)
  --tests WHAT[,...]  cgroup, integration, all (default), or integration
                      modules by name (pool, cli, ...): cgroup,pool runs
                      the cgroup backend tests and test_pool
  --results DIR       where the guest's $LAB_RESULTS_DIR lands (run only)
  --add PATH          copy a host file or directory tree into the guest,
                      at the same path (run only; repeatable)
  -q, --quiet         print only the guest's test summary lines
  --no-compile        do not run meson compile first (meson test did)

Exit status: 0 when the command (or every boot) passed, 1 when a test
failed or a guest hung or crashed, 2 on a lab error (fetching, building).
The guest runs as root with cgroups mounted like a systemd host (v2) or a
hybrid v1 host; see docs/kernel-lab.md.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import initramfs  # noqa: E402
import kernels  # noqa: E402
import qemu  # noqa: E402
from kernels import LabError  # noqa: E402

SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
GUEST_RESULTS = '/lab/results'

# The matrix: every kernel on cgroup v2, and v1 on 6.1 (6.12 is built
# without v1 memory and cpuset controllers).
MATRIX = (
    ('6.12', 'v2'),
    ('6.1', 'v2'),
    ('5.10', 'v2'),
    ('6.1', 'v1'),
)

INTEGRATION_MODULES = ('cli', 'meta_limits', 'streams', 'privileges',
                       'cleanup', 'domjudge', 'languages', 'library', 'pool',
                       'check', 'waits')
TEST_GROUPS = ('all', 'cgroup', 'integration')


def parse_tests(text):
    """--tests: (run the cgroup backend tests?, integration modules)."""
    words = [w.strip() for w in text.split(',') if w.strip()]
    bad = [w for w in words
           if w not in TEST_GROUPS and w not in INTEGRATION_MODULES]
    if not words or bad:
        raise argparse.ArgumentTypeError(
            'unknown test selection %r (choose from %s)'
            % (','.join(bad) or text,
               ', '.join(TEST_GROUPS + INTEGRATION_MODULES)))
    if 'all' in words:
        return True, INTEGRATION_MODULES
    if 'integration' in words:
        mods = INTEGRATION_MODULES
    else:
        mods = tuple(m for m in INTEGRATION_MODULES if m in words)
    return 'cgroup' in words, mods


# ---------------------------------------------------------------------------
# The build: options and files to copy
# ---------------------------------------------------------------------------

class Build:
    def __init__(self, build_dir):
        self.dir = os.path.realpath(build_dir)
        if not os.path.exists(os.path.join(self.dir, 'build.ninja')):
            raise LabError('%s is not a meson build directory (run '
                           './scripts/build first)' % self.dir)
        self.options = {o['name']: o['value']
                        for o in self._introspect('--buildoptions')}
        if self.options.get('b_sanitize', 'none') != 'none':
            raise LabError('%s is a sanitizer build; the lab runs the '
                           'plain build' % self.dir)
        self.targets = self._introspect('--targets')

    def _introspect(self, what):
        out = subprocess.run(['meson', 'introspect', what, self.dir],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise LabError('meson introspect %s failed: %s'
                           % (what, out.stderr.strip()))
        return json.loads(out.stdout)

    def compile(self):
        proc = subprocess.run(['meson', 'compile', '-C', self.dir],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise LabError('meson compile failed:\n' + proc.stdout[-3000:])

    def target_files(self):
        files = []
        for t in self.targets:
            if t['type'] in ('executable', 'shared library'):
                files += [f for f in t['filename'] if os.path.exists(f)]
        # Versioned names of the shared library and its symlinks.
        libdir = os.path.join(self.dir, 'lib')
        for name in os.listdir(libdir):
            if name.startswith('librunguard.so'):
                files.append(os.path.join(libdir, name))
        return sorted(set(files))

    def target_path(self, name):
        for t in self.targets:
            if t['name'] == name and t['type'] == 'executable':
                return t['filename'][0]
        raise LabError('no target %s in %s' % (name, self.dir))

    def valid_users(self):
        """VALID_USERS of the build, as tests/integration/meson.build
        derives it when the option is empty."""
        runuser = self.options['runuser']
        return self.options['valid_users'] or '%s,%s-*' % (runuser, runuser)

    def run_users(self):
        """(users, group): the users the integration tests (RUNUSER-rgtest)
        and the sample judging (RUNUSER-0) run commands as, and the group
        named like the run user; the same names rgtest.py derives."""
        runuser = self.options['runuser']
        valid = self.valid_users()
        users = []
        for pat in valid.split(','):
            pat = pat.strip()
            if '*' in pat:
                users.append(pat.replace('*', 'rgtest', 1).replace('*', ''))
                users.append(pat.replace('*', '0', 1).replace('*', ''))
        return users or [valid.split(',')[0].strip()], runuser

    def test_env(self):
        """What tests/integration/meson.build gives the integration suite."""
        runuser = self.options['runuser']
        return {
            'RUNGUARD': self.target_path('runguard'),
            'RG_PROGRAMS': os.path.join(self.dir, 'tests', 'programs'),
            'RG_CHROOT_PREFIX': self.options['chroot_prefix'],
            'RG_CGROUP_PARENT': self.options['cgroup_parent'],
            'RG_RUNUSER': runuser,
            'RG_VALID_USERS': self.valid_users(),
            'RG_MINIJUDGE': self.target_path('minijudge'),
            'RG_POOLJUDGE': self.target_path('pooljudge'),
            'PYTHONDONTWRITEBYTECODE': '1',
            'RUNGUARD_REQUIRE_PRIVILEGED': '1',
            'LAB_RESULTS_DIR': GUEST_RESULTS,
        }


def project_files():
    """Source files the guest needs: the Python tests."""
    files = []
    for sub in ('tests/integration',):
        d = os.path.join(SOURCE_ROOT, sub)
        files += [os.path.join(d, n) for n in sorted(os.listdir(d))
                  if n.endswith('.py')]
    return files


# ---------------------------------------------------------------------------
# The guest's command
# ---------------------------------------------------------------------------

def test_command(build, tests):
    """Shell that runs the suites chosen by parse_tests(); its status is
    the boot's result."""
    cgroup, modules = tests
    lines = ['rc=0']
    if cgroup:
        cg = build.target_path('test-cgroup')
        lines += ['echo "lab-guest: === cgroup backend tests ==="',
                  '%s; s=$?' % shlex.quote(cg),
                  # 77: cmocka skipped everything, which is a failure here.
                  '[ $s -eq 0 ] || { echo "lab-guest: cgroup tests: exit '
                  '$s"; rc=1; }']
    run_py = os.path.join(SOURCE_ROOT, 'tests', 'integration', 'run.py')
    if modules:
        lines += integration_lines(run_py, ' '.join('test_' + m
                                                    for m in modules), '')
    lines.append('exit $rc')
    return '\n'.join(lines) + '\n'


def integration_lines(run_py, modules, env):
    """Shell lines that run the integration modules (with env before the
    command) and note a failure in rc."""
    return ['echo "lab-guest: === integration tests %s%s==="'
            % (env, modules + ' ' if env else ''),
            'cd %s' % shlex.quote(os.path.dirname(run_py)),
            '%s/usr/bin/python3 %s %s 2>&1; s=$?' % (
                env, shlex.quote(run_py), modules),
            '[ $s -eq 0 ] || { echo "lab-guest: integration tests: '
            'exit $s"; rc=1; }']


def user_command(argv):
    return 'exec %s\n' % ' '.join(shlex.quote(a) for a in argv)


def command_script(build, body):
    env = build.test_env()
    head = ['#!/bin/sh']
    head += ['export %s=%s' % (k, shlex.quote(v)) for k, v in env.items()]
    return '\n'.join(head) + '\n' + body


# ---------------------------------------------------------------------------
# One boot
# ---------------------------------------------------------------------------

def lab_dir(build):
    d = os.path.join(build.dir, 'vm')
    os.makedirs(d, exist_ok=True)
    return d


def cache_dir(build):
    """Machine-wide when we may write it, so that a fresh checkout's build
    directory does not download the kernels again; else the build's."""
    d = kernels.default_cache_dir()
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    return os.path.join(lab_dir(build), 'cache')


def kernel_cmdline(mode, nonce, extra=()):
    args = ['console=ttyS0', 'panic=-1', 'oops=panic', 'quiet',
            'loglevel=3', 'random.trust_cpu=on', 'nokaslr',
            'rglab=' + nonce]
    if mode == 'v2':
        # As on a unified host: no v1 hierarchy can take a controller.
        args.append('cgroup_no_v1=all')
    # Last: the kernel takes the last of a repeated parameter (loglevel=).
    args += list(extra)
    return ' '.join(args)


def boot_once(build, series, mode, body, opts, echo):
    tag = '%s-%s' % (series, mode)
    work = lab_dir(build)
    kernel = kernels.fetch(series, cache_dir(build), log=echo)
    nonce = uuid.uuid4().hex[:12]
    config = ('LAB_CGROUP=%s\nLAB_NONCE=%s\nLAB_RESULTS_DIR=%s\n'
              % (mode, nonce, GUEST_RESULTS))
    with open(os.path.join(HERE, 'guest-init')) as f:
        init = f.read()
    users, group = build.run_users()
    initrd = os.path.join(work, 'initramfs-%s.cpio' % tag)
    t0 = time.monotonic()
    initramfs.build(initrd, project_files() + getattr(opts, 'add', []),
                    build.target_files(), users,
                    group, init, command_script(build, body),
                    extra={'/lab/config': config})
    echo('lab: %s: initramfs %s (%.1f MiB, %.1f s); booting %s with %d '
         'vCPUs, %d MiB' % (tag, initrd, os.path.getsize(initrd) / 2**20,
                            time.monotonic() - t0, kernel.release, opts.smp,
                            opts.memory))
    serial = os.path.join(work, 'serial-%s.out' % tag)
    if os.path.exists(serial):
        os.unlink(serial)
    probe_cache = os.path.join(cache_dir(build), 'kvm-probe')
    accel = 'kvm' if qemu.kvm_usable(kernel.vmlinuz, probe_cache) else 'tcg'
    res = qemu.boot(kernel.vmlinuz, initrd,
                    kernel_cmdline(mode, nonce, opts.kernel_arg),
                    nonce, opts.smp, opts.memory, opts.timeout, accel, serial,
                    os.path.join(work, 'console-%s.log' % tag), echo)
    res.tag = tag
    res.release = kernel.release
    res.accel = accel
    res.results = []
    res.results_dir = opts.results
    if opts.results:
        res.results = qemu.extract_results(serial, nonce, opts.results)
    with open(os.path.join(work, 'features-%s.json' % tag), 'w') as f:
        json.dump(res.features, f, indent=1, sort_keys=True)
    return res


def emulator_fault(res):
    """A guest kernel that trapped on an int3 of its own live patching.

    The kernel patches its text at run time (static keys, alternatives)
    through a temporary int3; under TCG with several vCPUs another vCPU
    can still execute the int3 after the patch is done, and the kernel
    dies in "Oops: int3" at a place that has no breakpoint (seen on 6.12
    at boot and during the churn test). That is the emulator, not the
    code under test.
    """
    return (res.accel == 'tcg' and res.rc is None and not res.hung and
            res.oops is not None and 'Oops: int3' in res.oops)


def boot(build, series, mode, body, opts, echo):
    """boot_once, and once more after an emulator fault (said so)."""
    res = boot_once(build, series, mode, body, opts, echo)
    if emulator_fault(res):
        echo('lab: %s-%s: the guest kernel died on an int3 of its own text '
             'patching (a TCG fault, not a test failure): booting once '
             'more' % (series, mode))
        res = boot_once(build, series, mode, body, opts, echo)
    return res


def report(res, echo):
    ok = res.rc == 0 and not res.hung
    echo('lab: %s (%s, %s): %s in %.0f s -> %s' % (
        res.tag, res.release, res.accel, res.describe(), res.elapsed,
        'PASS' if ok else 'FAIL'))
    if res.rc is None:
        echo('lab: last console lines of %s:' % res.tag)
        for line in res.console_tail[-25:]:
            echo('  | ' + line)
    if res.results:
        echo('lab: %d result file(s) in %s' % (len(res.results),
                                                res.results_dir))
    return ok


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(prog='lab.py', description=__doc__.split(
        '\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='verb', required=True)

    f = sub.add_parser('fetch', help='download the kernels')
    f.add_argument('-k', '--kernel', action='append',
                   choices=sorted(kernels.SUITES))
    f.add_argument('-B', '--build', default=os.path.join(SOURCE_ROOT,
                                                         'build'))

    for verb in ('run', 'matrix'):
        s = sub.add_parser(verb)
        s.add_argument('-B', '--build', default=os.path.join(SOURCE_ROOT,
                                                             'build'))
        s.add_argument('--smp', type=int, default=2)
        s.add_argument('--memory', type=int, default=2048)
        s.add_argument('--timeout', type=int, default=1200)
        s.add_argument('--tests', type=parse_tests, default='all',
                       metavar='WHAT[,...]',
                       help='cgroup, integration, all, or integration '
                       'modules: %s' % ', '.join(INTEGRATION_MODULES))
        s.add_argument('-q', '--quiet', action='store_true')
        s.add_argument('--no-compile', action='store_true',
                       help='do not run meson compile first')
        s.add_argument('--kernel-arg', action='append', default=[],
                       metavar='ARG',
                       help='append ARG to the guest kernel command line '
                       '(e.g. loglevel=7 softlockup_panic=1)')
        if verb == 'run':
            s.add_argument('-k', '--kernel', required=True,
                           choices=sorted(kernels.SUITES))
            s.add_argument('-c', '--cgroup', required=True,
                           choices=('v1', 'v2'))
            s.add_argument('--results')
            s.add_argument('--add', action='append', default=[],
                           metavar='PATH',
                           help='copy a host file or tree into the guest '
                           '(same path; ELF files with their libraries)')
            s.add_argument('command', nargs=argparse.REMAINDER)
    opts = p.parse_args(argv)
    if getattr(opts, 'command', None) and opts.command[0] == '--':
        opts.command = opts.command[1:]
    if opts.verb != 'fetch' and opts.smp < 1:
        p.error('--smp must be at least 1')
    if opts.verb == 'matrix':
        opts.results = None
    return opts


def make_echo(quiet):
    """Quiet keeps the summary lines and every failure's whole report
    (a failure in CI is only as good as its traceback)."""
    in_failure = [False]

    def echo(line):
        if line.startswith('FAIL:') or line.startswith('ERROR:'):
            in_failure[0] = True
        elif line.startswith('=' * 10) or line.startswith('Ran '):
            in_failure[0] = False
        if quiet and not (in_failure[0] or line.startswith('lab')
                          or line.startswith('Ran ')
                          or line.startswith('FAIL') or line.startswith('OK')
                          or line.startswith('ERROR')
                          or line.startswith('[  ')
                          or 'skipped' in line):
            return
        print(line, flush=True)
    return echo


def main(argv):
    opts = parse_args(argv)
    echo = make_echo(getattr(opts, 'quiet', False))
    try:
        if opts.verb == 'fetch':
            d = kernels.default_cache_dir()
            for series in opts.kernel or sorted(kernels.SUITES):
                k = kernels.fetch(series, d, log=echo)
                echo('lab: %s: %s' % (series, k.vmlinuz))
            return 0
        build = Build(opts.build)
        if not opts.no_compile:
            build.compile()
        if opts.verb == 'run':
            body = (user_command(opts.command) if opts.command
                    else test_command(build, opts.tests))
            res = boot(build, opts.kernel, opts.cgroup, body, opts, echo)
            return 0 if report(res, echo) else 1
        results = []
        for series, mode in MATRIX:
            res = boot(build, series, mode, test_command(build, opts.tests),
                       opts, echo)
            results.append((res, report(res, echo)))
        echo('lab: matrix summary')
        for res, ok in results:
            echo('lab:   %-8s %-28s %s' % (res.tag, res.release,
                                           'PASS' if ok else 'FAIL: '
                                           + res.describe()))
        return 0 if all(ok for _, ok in results) else 1
    except LabError as e:
        print('lab: error: %s' % e, file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
