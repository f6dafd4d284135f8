# SPDX-License-Identifier: LGPL-2.1-or-later
"""Set-up: checks and accounts, machine info, the preflight, the pool."""

import os
import resource
import shutil
import subprocess
import sys
import time

from . import SetupError
from .accounts import ensure_run_users
from .judging import Bench
from .options import judge_config
from .problem import compiler_command, submission_source, supports_std
from .sampler import cgroup_mode, meminfo, read_text

KEEPER = 'runguard-keeper'


def setup(opts):
    """The Bench, once root, runguard, the validator, the compiler and the
    run users are there."""
    if os.geteuid() != 0:
        raise SetupError('run as root')
    if not os.access(opts.runguard, os.X_OK):
        raise SetupError('no runguard at %s (./scripts/build)' % opts.runguard)
    prefix, runuser, rungroup = judge_config(opts)
    bench = Bench(opts, prefix, runuser, rungroup)
    ensure_run_users(runuser, rungroup, opts.workers)
    if opts.workload == 'trivial':
        if not os.access(bench.trivial, os.X_OK):
            raise SetupError('no program at %s (ninja -C build)'
                             % bench.trivial)
        return bench
    if not os.access(bench.compare, os.X_OK):
        raise SetupError('no validator at %s (ninja -C build)' % bench.compare)
    compiler = shutil.which(opts.compiler)
    if not compiler:
        raise SetupError('compiler %s not found' % opts.compiler)
    std = opts.std if opts.std and supports_std(compiler, opts.std) else ''
    bench.compiler_cmd = compiler_command(compiler, std)
    return bench


def first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return (out.stdout or out.stderr).splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return None


def machine_info(bench):
    u = os.uname()
    return {
        'uname': ' '.join(u), 'kernel': u.release, 'hostname': u.nodename,
        'cgroup_mode': cgroup_mode(), 'nproc': os.cpu_count(),
        'cpus_allowed': len(os.sched_getaffinity(0)),
        'mem_total_kb': meminfo().get('MemTotal'),
        'runguard': bench.runguard_src,
        'runguard_mtime': time.strftime('%Y-%m-%dT%H:%M:%S%z', time.localtime(
            os.stat(bench.runguard).st_mtime)),
        'runguard_version': first_line([bench.runguard, '--version']),
        'compiler_version': (first_line([bench.compiler_cmd[0], '--version'])
                             if bench.compiler_cmd else None),
        'cmdline': read_text('/proc/cmdline').strip(),
        'in_lab': 'LAB_RESULTS_DIR' in os.environ,
        'python': sys.version.split()[0],
    }


# ---------------------------------------------------------------------------
# Preflight: every submission compiled and run natively, before the clock

def children_time(fn):
    """Run fn() (which runs children); (wall, their CPU) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    fn()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime +
           after.ru_stime - before.ru_stime)
    return time.monotonic() - start, cpu


def _compile_natively(d, name, cmd):
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
    if p.returncode != 0:
        raise SetupError('compiling %s failed:\n%s'
                         % (name, p.stderr[-2000:]))


def _run_natively(d, name, inp, want):
    with open(inp) as fin:
        p = subprocess.run([os.path.join(d, 'program')], stdin=fin,
                           capture_output=True, text=True)
    if p.stdout.split() != want:
        raise SetupError('%s gives a wrong answer: %r'
                         % (name, p.stdout[:200]))


def preflight_variant(d, name, text, cmd, case, want):
    """Compile one variant in d and run it on case; its timings."""
    with open(os.path.join(d, 'source.cpp'), 'w') as f:
        f.write(submission_source(text, 0))
    cwall, ccpu = children_time(lambda: _compile_natively(d, name, cmd))
    rwall, rcpu = children_time(lambda: _run_natively(d, name, case[0], want))
    size = os.path.getsize(os.path.join(d, 'program'))
    print('scale: preflight %-18s compile %.2f s (cpu %.2f), run on %d '
          'numbers %.1f ms (cpu %.1f), %d KiB' % (
              name, cwall, ccpu, case[2], rwall * 1000, rcpu * 1000,
              size // 1024), flush=True)
    return {'variant': name, 'compile_wall_s': round(cwall, 3),
            'compile_cpu_s': round(ccpu, 3), 'run_wall_s': round(rwall, 4),
            'run_cpu_s': round(rcpu, 4), 'binary_bytes': size,
            'test_numbers': case[2]}


def preflight(bench, variants, cases, cmd):
    """Compile and run every variant without runguard: the compiler works,
    the answers are right, and how long each step takes here."""
    d = os.path.join(bench.base, 'preflight')
    os.makedirs(d)
    largest = max(cases, key=lambda c: c[2])
    with open(largest[1]) as f:
        want = f.read().split()
    report = [preflight_variant(d, name, text, cmd, largest, want)
              for name, text in variants]
    shutil.rmtree(d)
    return report


# ---------------------------------------------------------------------------
# The runguard binary and the pool

def keeper_of(runguard):
    """The keeper that goes with runguard: a build tree's, or the one next
    to it; None for an installed runguard (its copy finds the installed
    keeper)."""
    d = os.path.dirname(runguard)
    for path in (os.path.join(os.path.dirname(d), 'keeper', KEEPER),
                 os.path.join(d, KEEPER)):
        if os.path.isfile(path):
            return path
    return None


def private_runguard(bench):
    """A copy of the binary for the whole run: the build may be rebuilt
    meanwhile, and one run must measure one binary. The keeper is copied
    next to it, where runguard looks first outside a build tree: without
    it resident mode would measure pooled runs."""
    d = os.path.join(bench.base, 'bin')
    os.makedirs(d)
    dest = os.path.join(d, 'runguard')
    keeper = keeper_of(bench.runguard_src)
    for _ in range(10):
        try:
            if keeper:
                shutil.copy2(keeper, os.path.join(d, KEEPER))
            shutil.copy2(bench.runguard_src, dest)
            if subprocess.run([dest, '--version'],
                              capture_output=True).returncode == 0:
                bench.runguard = dest
                return
        except OSError:
            pass
        time.sleep(2)   # being relinked right now
    raise SetupError('cannot copy a working %s' % bench.runguard_src)


def pool_command(bench, *args):
    cmd = [bench.runguard, '--pool-size=%d' % bench.opts.pool_size,
           '--pool-dir=' + bench.opts.pool_dir] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True)


def pool_create(bench):
    if os.path.exists(bench.opts.pool_dir):
        # Left by an aborted run (or someone else's): start from nothing.
        pool_command(bench, '--pool-destroy=force')
    p = pool_command(bench, '--pool-create')
    if p.returncode != 0:
        raise SetupError('runguard --pool-create failed: %s'
                         % p.stderr.strip())
    print('scale: pool %s created (%d slots)' % (bench.opts.pool_dir,
                                                 bench.opts.pool_size),
          flush=True)


def pool_destroy(bench):
    """Plain destroy first (it refuses while a slot is held: that would be
    a run we did not wait for); a run just ended by SIGTERM can hold its
    slot a moment longer, so retry before forcing."""
    for _ in range(5):
        p = pool_command(bench, '--pool-destroy')
        if p.returncode == 0:
            return True
        time.sleep(1)
    print('scale: --pool-destroy failed (%s); forcing' % p.stderr.strip(),
          file=sys.stderr)
    p = pool_command(bench, '--pool-destroy=force')
    if p.returncode != 0:
        print('scale: --pool-destroy=force failed: %s' % p.stderr.strip(),
              file=sys.stderr)
    return p.returncode == 0
