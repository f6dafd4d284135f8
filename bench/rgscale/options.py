# SPDX-License-Identifier: LGPL-2.1-or-later
"""Command-line options, and the judgehost configuration they override."""

import argparse
import os

from . import SOURCE_ROOT, SetupError

POOL_DIR = '/run/runguard-scale'
# --help: the first line of the bench/scale launcher's docstring.
DESCRIPTION = ('bench/scale: a contest judgehost under load, measured over '
               'time.')


# modes that judge in a pool (resident: with --pool-keeper=yes)
POOL_MODES = ('pooled', 'resident')


def parse_args(argv):
    ncpu = os.cpu_count() or 1
    p = argparse.ArgumentParser(
        prog='bench/scale', description=DESCRIPTION,
        epilog='Needs root. See bench/README.md.')
    p.add_argument('--runguard',
                   default=os.path.join(SOURCE_ROOT, 'build', 'runguard',
                                        'runguard'))
    p.add_argument('--mode', choices=('per-run',) + POOL_MODES,
                   default='per-run',
                   help='resident: pooled with a keeper per slot')
    p.add_argument('--workload', choices=('judging', 'trivial'),
                   default='judging',
                   help='judging: compile, run and compare submissions; '
                   'trivial: only test-case runs of a static program that '
                   'exits at once (the cost of runguard itself)')
    p.add_argument('--trivial-program', metavar='PATH',
                   help='the program of --workload trivial (default: '
                   '<build>/bench/programs/trivial)')
    p.add_argument('--workers', type=int, default=2 * ncpu, metavar='K')
    p.add_argument('--tests', type=int, default=10, metavar='T',
                   help='test cases per submission (default 10)')
    p.add_argument('--minutes', type=float, default=10, metavar='D')
    p.add_argument('--sample-seconds', type=float, default=5, metavar='S')
    p.add_argument('--pool-size', type=int, metavar='N',
                   help='pool slots in pooled mode (default: K)')
    p.add_argument('--pool-dir', default=POOL_DIR)
    p.add_argument('-o', '--outdir', default='.', metavar='OUTDIR')
    p.add_argument('--compiler', default='g++',
                   help='C++ compiler of the compile step (default g++)')
    p.add_argument('--std', default='gnu++20',
                   help='-std= of the compile step ("" for none)')
    p.add_argument('--compare', help='output validator (default: '
                   '<build>/bench/scale_compare)')
    p.add_argument('--test-size', type=int, default=200000, metavar='N',
                   help='numbers in the largest test case (default 200000,'
                   ' ~30 ms of CPU natively)')
    p.add_argument('--time-scale', type=float, default=1.0, metavar='F',
                   help='multiply every time limit by F (emulated CPUs)')
    p.add_argument('--call-timeout', type=float, default=900, metavar='S',
                   help='a runguard call that takes longer is reported '
                   'hung, with its kernel stack, and killed (default 900:'
                   ' an emulated g++ takes minutes)')
    p.add_argument('--build-config', metavar='FILE',
                   help='rg-build-config.h (default: next to the runguard '
                   'binary; else $RG_CHROOT_PREFIX, $RG_RUNUSER, '
                   '$RG_RUNGROUP)')
    p.add_argument('--chroot-prefix')
    p.add_argument('--runuser')
    p.add_argument('--rungroup')
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--keep', action='store_true',
                   help='keep the judging directories')
    p.add_argument('--preflight-only', action='store_true',
                   help='only check the compiler and the submissions')
    opts = p.parse_args(argv)
    if opts.workers < 1 or opts.tests < 1 or opts.minutes <= 0:
        p.error('--workers, --tests and --minutes must be positive')
    if opts.pool_size is None:
        opts.pool_size = opts.workers
    return opts


def read_build_config(path):
    """The #define "..." strings of meson's rg-build-config.h."""
    values = {}
    with open(path) as f:
        for line in f:
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[0] == '#define':
                values[parts[1]] = parts[2].strip().strip('"')
    return values


def build_config(opts):
    """The build's config header, with the environment filling the gaps
    (the lab's guest has no build config, only these variables)."""
    path = opts.build_config or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(opts.runguard))),
        'rg-build-config.h')
    cfg = read_build_config(path) if os.path.exists(path) else {}
    if not cfg and opts.build_config:
        raise SetupError('cannot read %s' % path)
    for key in ('RG_CHROOT_PREFIX', 'RG_RUNUSER', 'RG_RUNGROUP'):
        cfg.setdefault(key, os.environ.get(key, ''))
    return cfg


def judge_config(opts):
    """CHROOT_PREFIX, RUNUSER, RUNGROUP: options, else the build's config
    header, else the environment, else DOMjudge's defaults."""
    cfg = build_config(opts)
    prefix = opts.chroot_prefix or cfg['RG_CHROOT_PREFIX'] or \
        '/opt/domjudge/judgehost/judgings'
    runuser = opts.runuser or cfg['RG_RUNUSER'] or 'domjudge-run'
    rungroup = opts.rungroup or cfg['RG_RUNGROUP'] or runuser
    return prefix, runuser, rungroup
