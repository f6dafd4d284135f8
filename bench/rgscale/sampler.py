# SPDX-License-Identifier: LGPL-2.1-or-later
"""Kernel state, sampled in the background: load, tasks in D state and
what they wait for, slab memory, cgroups (live and dying), mounts."""

import collections
import os
import sys
import threading

# Frames that say only "waiting", not on what (for the D-state report).
GENERIC_FRAMES = ('__schedule', 'schedule', 'io_schedule', 'wait_for_',
                  '__wait_', 'wait_', '__mutex_lock', 'mutex_lock',
                  'rwsem_down', 'down_', '__down', 'percpu_rwsem_wait',
                  '__percpu_down', 'percpu_down', 'bit_wait',
                  'out_of_line_wait', '__flush_work', 'flush_work',
                  '__synchronize_srcu', 'synchronize_srcu', '__wait_rcu_gp')


def read_text(path):
    """A /proc or /sys file; '' when it cannot be read (tasks come and
    go, and files differ between kernels)."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def meminfo():
    out = {}
    for line in read_text('/proc/meminfo').splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out[parts[0].rstrip(':')] = int(parts[1])
    return out


def proc_cgroups():
    """num_cgroups per enabled controller: live and dying cgroups together.
    (Not cgtrace's: the lab's guest may run this without tests/.)"""
    out = {}
    for line in read_text('/proc/cgroups').splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 4 and parts[3] == '1':
            out[parts[0]] = int(parts[2])
    return out


def cgroup_mounts():
    """{controller or 'unified': mount point} from our mountinfo."""
    out = {}
    for line in read_text('/proc/self/mountinfo').splitlines():
        left, _, right = line.partition(' - ')
        fields, rparts = left.split(), right.split()
        if len(rparts) < 3:
            continue
        if rparts[0] == 'cgroup2':
            out.setdefault('unified', fields[4])
        elif rparts[0] == 'cgroup':
            for opt in rparts[2].split(','):
                out.setdefault(opt, fields[4])
    return out


def count_dirs(top):
    """Live cgroups of a hierarchy: its directories, the root included."""
    n = 0
    stack = [top]
    while stack:
        d = stack.pop()
        n += 1
        try:
            with os.scandir(d) as it:
                stack += [e.path for e in it
                          if e.is_dir(follow_symlinks=False)]
        except OSError:
            pass
    return n


def cgroup_mode():
    """'v2', 'v1-hybrid' or 'v1': the labels of the recorded results
    (rgbench.report.cgroup_mode words them for bench/run's text)."""
    if os.path.exists('/sys/fs/cgroup/cgroup.controllers'):
        return 'v2'
    if os.path.isdir('/sys/fs/cgroup/unified'):
        return 'v1-hybrid'
    return 'v1'


def frame_name(line):
    # "[<0>] cgroup_kn_lock_live+0x2f/0xd0" -> "cgroup_kn_lock_live"
    parts = line.split()
    return parts[-1].split('+')[0] if parts else ''


def stack_top(path):
    """The first frames that say what a D task waits for."""
    frames = [frame_name(line) for line in read_text(path).splitlines()]
    frames = [f for f in frames if f]
    named = [f for f in frames if not f.startswith(GENERIC_FRAMES)]
    return '<'.join(named[:2]) if named else (frames[0] if frames else '?')


def _task_dirs():
    """/proc/PID/task/TID of every thread (those that vanish meanwhile
    are skipped)."""
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        tdir = '/proc/%s/task' % pid
        try:
            tids = os.listdir(tdir)
        except OSError:
            continue
        for tid in tids:
            yield '%s/%s' % (tdir, tid)


def d_state_tasks():
    """(count, Counter of wchan, Counter of stack tops) of D tasks."""
    count = 0
    wchan, stacks = collections.Counter(), collections.Counter()
    for task in _task_dirs():
        rest = read_text(task + '/stat').rpartition(')')[2].split()
        if not rest or rest[0] != 'D':
            continue
        count += 1
        wchan[read_text(task + '/wchan').strip() or '?'] += 1
        stacks[stack_top(task + '/stack')] += 1
    return count, wchan, stacks


def cgroup_stat(mounts):
    """The unified hierarchy's cgroup.stat (nr_descendants, nr_dying_...)."""
    d = mounts.get('unified')
    out = {}
    if d:
        for line in read_text(os.path.join(d, 'cgroup.stat')).splitlines():
            k, _, v = line.partition(' ')
            if v.strip().isdigit():
                out[k] = int(v)
    return out


def _memory_cgroups(mounts, counts):
    """(all, live, dying) memory cgroups: /proc/cgroups counts dying ones
    too, the hierarchy's directories are the live ones."""
    mem_top = mounts.get('memory') or mounts.get('unified')
    live = count_dirs(mem_top) if mem_top else None
    total = counts.get('memory')
    dying = total - live if total is not None and live else None
    return total, live, dying


def take_sample(t):
    mi = meminfo()
    load = read_text('/proc/loadavg').split()
    n_d, wchan, stacks = d_state_tasks()
    mounts = cgroup_mounts()
    counts = proc_cgroups()
    total_memory, live_memory, dying_memory = _memory_cgroups(mounts, counts)
    running, _, threads = load[3].partition('/') if len(load) > 3 else \
        ('0', '', '0')
    return {
        't': round(t, 2),
        'load1': float(load[0]), 'load5': float(load[1]),
        'load15': float(load[2]),
        'running': int(running), 'threads': int(threads),
        'd_tasks': n_d,
        'd_wchan': wchan.most_common(5),
        'd_stack': stacks.most_common(5),
        'slab_kb': mi.get('Slab'), 'sunreclaim_kb': mi.get('SUnreclaim'),
        'percpu_kb': mi.get('Percpu'), 'kernel_stack_kb':
            mi.get('KernelStack'), 'mem_available_kb': mi.get('MemAvailable'),
        'cgroups': counts,
        'memory_cgroups': total_memory,
        'memory_cgroups_live': live_memory,
        'memory_cgroups_dying': dying_memory,
        'cgroup_stat': cgroup_stat(mounts),
        'mounts': len(read_text('/proc/1/mountinfo').splitlines()),
    }


class Sampler(threading.Thread):
    def __init__(self, bench, every):
        super().__init__(name='sampler', daemon=True)
        self.b = bench
        self.every = every
        self.samples = []
        self.done = threading.Event()

    def run(self):
        next_t = 0.0
        while not self.done.is_set():
            try:
                self.samples.append(take_sample(self.b.now()))
            except Exception as e:   # never let sampling end the bench
                print('scale: sample failed: %s' % e, file=sys.stderr)
            next_t += self.every
            self.done.wait(max(0.0, next_t - self.b.now()))
