# SPDX-License-Identifier: LGPL-2.1-or-later
"""The churn scenario: what kernel objects each runguard run makes.

Not timed, so Python runs runguard itself here.  Each run executes
`trivial block`, which waits for EOF on a pipe held by the benchmark:
while it waits, its namespaces are read from /proc.  During the K measured
runs a private tracefs instance counts cgroup mkdir/rmdir, moves of tasks
into cgroups (cgroup_attach_task) and slab allocations of namespaces and
mounts (tests/integration/cgtrace.py), and a thread watches the host's
mount table.  Counts are of the whole machine ("all") and of this
benchmark's processes ("ours": the runguard processes, their programs and,
in resident slots, the keeper that forked the program, by thread group
id; cgroups also by path)."""

import os
import re
import select
import subprocess
import threading
import time

from cgtrace import KMEM_CACHES, CgroupTracer, kmem_object, parse_event
from cgtrace import proc_cgroup_counts as proc_cgroups

from .plan import meta_problem, parse_meta
from .sandbox import POOL_OF, is_keeper

NS_TYPES = ('ipc', 'net', 'uts', 'mnt', 'pid', 'cgroup')
CGROOT = '/sys/fs/cgroup'
# what runguard makes cgroups in: always shown in the /proc/cgroups rows
USED_CONTROLLERS = ('memory', 'cpuacct', 'cpu', 'freezer', 'cpuset')


# ---- looking at the system ------------------------------------------------

def mountinfo_lines():
    with open('/proc/1/mountinfo') as f:
        return len(f.read().splitlines())


def v2_dying():
    """nr_dying_descendants of the v2 root, or None on cgroup v1."""
    try:
        with open(os.path.join(CGROOT, 'cgroup.stat')) as f:
            for line in f:
                if line.startswith('nr_dying_descendants'):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def host_namespaces():
    """The benchmark's namespaces, and init's where it may read them (in a
    container, init may hold capabilities the benchmark lacks)."""
    seen = set()
    for pid in ('1', 'self'):
        for t in NS_TYPES:
            try:
                seen.add(os.readlink('/proc/%s/ns/%s' % (pid, t)))
            except PermissionError:
                pass
    return seen


def pool_namespaces(sb, contender):
    """The namespaces of contender's pool, as /proc/PID/ns links read: its
    nsfs bind mounts (ns/slot-K.ipc/net/uts/mnt) and those of its keepers
    (each the PID 1 of its slot's own PID namespace)."""
    seen = set()
    if contender not in POOL_OF:
        return seen
    nsdir = os.path.join(sb.pool_dir(contender), 'ns')
    for name in os.listdir(nsdir) if os.path.isdir(nsdir) else ():
        m = re.match(r'slot-[0-9]+\.(ipc|net|uts|mnt)$', name)
        if m:
            try:
                ino = os.stat(os.path.join(nsdir, name)).st_ino
            except OSError:
                continue
            seen.add('%s:[%d]' % (m.group(1), ino))
    for pid in sb.keepers(POOL_OF[contender]):
        for t in NS_TYPES:
            try:
                seen.add(os.readlink('/proc/%d/ns/%s' % (pid, t)))
            except OSError:
                pass
    return seen


def find_program(parent, uid, keeper_cgroup=None, timeout=5.0):
    """(pid, parent) of runguard's child once it runs `trivial` as the run
    user; its parent is runguard, or in a resident slot the runner of the
    pool whose cgroup is keeper_cgroup.  (None, None) if not found."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for name in os.listdir('/proc'):
            if not name.isdigit():
                continue
            ppid = program_parent(int(name), uid)
            if ppid is not None and (ppid == parent or (
                    keeper_cgroup and is_keeper(ppid, keeper_cgroup,
                                                runner=True))):
                return int(name), ppid
        time.sleep(0.001)
    return None, None


def program_parent(pid, uid):
    """The parent of pid if pid runs `trivial` as uid, else None."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            stat = f.read()
        comm = stat[stat.index('(') + 1:stat.rindex(')')]
        ppid = int(stat[stat.rindex(')') + 2:].split()[1])
        if comm != 'trivial':
            return None
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('Uid:'):
                    return ppid if int(line.split()[1]) == uid else None
    except (OSError, ValueError):
        pass
    return None


class MountWatcher(threading.Thread):
    """Counts change events of the host's mount table: /proc/1/mountinfo
    polls POLLPRI|POLLERR after every mount or umount in that namespace."""

    def __init__(self):
        super().__init__(daemon=True)
        self.events = 0
        self.stop_r, self.stop_w = os.pipe()
        self.fd = os.open('/proc/1/mountinfo', os.O_RDONLY)
        self.drain()        # the event is armed by reading the file

    def drain(self):
        os.lseek(self.fd, 0, os.SEEK_SET)
        while os.read(self.fd, 65536):
            pass

    def run(self):
        poller = select.poll()
        poller.register(self.fd, select.POLLPRI | select.POLLERR)
        poller.register(self.stop_r, select.POLLIN)
        while True:
            for fd, _ in poller.poll():
                if fd == self.stop_r:
                    return
                self.events += 1
                self.drain()

    def stop(self):
        os.write(self.stop_w, b'x')
        self.join()
        for fd in (self.fd, self.stop_r, self.stop_w):
            os.close(fd)
        return self.events


# ---- one run ---------------------------------------------------------------

def one_run(sb, contender, worker=0):
    """A run of `trivial block`: its namespaces while it waits, and why the
    run failed (None if it did not)."""
    cmd = sb.command(contender, worker, 'trivial', ['block'])
    open(cmd.meta, 'w').close()
    r_fd, w_fd = os.pipe()
    with open(cmd.stdout, 'wb') as out, open(cmd.stderr, 'wb') as err:
        proc = subprocess.Popen(cmd.argv, stdin=r_fd, stdout=out, stderr=err,
                                env=sb.env(), cwd=sb.workdir(worker))
    os.close(r_fd)
    pid = parent = ns = None
    keeper_cgroup = sb.pool_cgroup(contender) if contender in POOL_OF \
        else None
    try:
        pid, parent = find_program(proc.pid, sb.uids[worker], keeper_cgroup)
        if pid:
            ns = namespaces_of(pid)
    finally:
        os.close(w_fd)
        rc = proc.wait(timeout=30)
    problem = meta_problem(parse_meta(open(cmd.meta).read()))
    if not problem and rc:
        problem = 'runguard exit status %d' % rc
    if not problem and not ns:
        problem = 'the program was not found running (uid %d, parent %d)' \
            % (sb.uids[worker], proc.pid)
    if problem:
        with open(cmd.stderr, errors='replace') as f:
            problem += ': ' + f.read().strip()[:200]
    # a keeper's fork of the program is the keeper's doing
    return {'pids': {proc.pid, pid, parent}, 'ns': ns, 'problem': problem}


def namespaces_of(pid):
    """{type: (link, fd)}: the fd holds the namespace, so that its inode
    number cannot be reused by a later run's namespace while we compare."""
    ns = {}
    try:
        for t in NS_TYPES:
            path = '/proc/%d/ns/%s' % (pid, t)
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            ns[t] = (os.readlink(path), fd)
    except OSError:
        for _, fd in ns.values():
            os.close(fd)
        return None     # it died: reported as not found running
    return ns


class Namespaces:
    """Namespaces seen so far (kept alive), and the new ones per type."""

    def __init__(self, sb, contender):
        self.seen = host_namespaces() | pool_namespaces(sb, contender)
        self.fds = []
        self.new = dict.fromkeys(NS_TYPES, 0)

    def add(self, ns, count):
        for t, (link, fd) in (ns or {}).items():
            if link in self.seen:
                os.close(fd)
                continue
            self.seen.add(link)
            self.fds.append(fd)
            if count:
                self.new[t] += 1

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []


# ---- the scenario ----------------------------------------------------------

def count_events(lines, ours, pool_cgroup):
    """cgroup (mkdir, rmdir, attach) and kmem event counts, all and ours."""
    counts = {}

    def add(key, mine):
        c = counts.setdefault(key, {'all': 0, 'ours': 0})
        c['all'] += 1
        c['ours'] += 1 if mine else 0
    run_path = re.compile(r'/run-([0-9]+)-')
    for line in lines:
        ev = parse_event(line)
        if not ev:
            continue
        mine = (ev.tgid if ev.tgid is not None else ev.pid) in ours
        if ev.event in ('cgroup_mkdir', 'cgroup_rmdir',
                        'cgroup_attach_task'):
            m = run_path.search(ev.fields)
            mine = mine or bool(m and int(m.group(1)) in ours) or bool(
                pool_cgroup and pool_cgroup in ev.fields)
            add(ev.event[len('cgroup_'):].replace('_task', ''), mine)
        elif ev.event == 'kmem_cache_alloc':
            add(kmem_object(ev), mine)
    return counts


def trace_summary(tracer, reason, lines, ours, pool_cgroup):
    """The 'cgroups' and 'kmem' parts: counts, or why there are none."""
    if reason:
        return {'unavailable': reason}, {'unavailable': reason}
    lost = tracer.lost()
    if lost:
        why = '%d trace events lost (ring buffer overrun)' % lost
        return {'unavailable': why}, {'unavailable': why}
    counts = count_events(lines, ours, pool_cgroup)
    zero = {'all': 0, 'ours': 0}
    cgroups = {k: counts.get(k, zero) for k in ('mkdir', 'rmdir', 'attach')}
    if tracer.kmem_unavailable:
        kmem = {'unavailable': tracer.kmem_unavailable}
    else:
        kmem = {k: counts.get(k, zero) for k in KMEM_CACHES + ('other',)}
    return cgroups, kmem


def delta(before, after):
    return {k: after.get(k, 0) - v for k, v in before.items()}


def run_churn(sb, contender, runs, warmup, settle=2.0):
    namespaces = Namespaces(sb, contender)
    try:
        return churn(sb, contender, runs, warmup, settle, namespaces)
    finally:
        namespaces.close()


def churn(sb, contender, runs, warmup, settle, namespaces):
    problems = []
    for _ in range(warmup):
        res = one_run(sb, contender)
        namespaces.add(res['ns'], count=False)
        if res['problem']:
            problems.append(res['problem'])
    cg_before, dying_before = proc_cgroups(), v2_dying()
    mnt_before = mountinfo_lines()
    watcher = MountWatcher()
    watcher.start()
    tracer = CgroupTracer(kmem=True, name='rgbench', attach=True)
    reason = tracer.start()
    try:
        ours = set()
        first_ns = None
        for _ in range(runs):
            res = one_run(sb, contender)
            ours |= res['pids']
            if res['problem']:
                problems.append(res['problem'])
            if res['ns'] and not first_ns:
                first_ns = {t: v[0] for t, v in res['ns'].items()}
            namespaces.add(res['ns'], count=True)
        lines = tracer.stop() if not reason else []
        cgroups, kmem = trace_summary(tracer, reason, lines, ours,
                                      sb.pool_cgroup(contender)
                                      if contender in POOL_OF else None)
    finally:
        tracer.close()
        mount_events = watcher.stop()
        namespaces.close()      # nothing more to compare
    cg_after = proc_cgroups()
    dying_after = v2_dying()
    time.sleep(settle)
    cg_settled, dying_settled = proc_cgroups(), v2_dying()
    result = {
        'runs': runs, 'warmup': warmup, 'n': runs + warmup - len(problems),
        'failed': len(problems), 'failures': sorted(set(problems))[:5],
        'cgroups': cgroups, 'kmem': kmem,
        'proc_cgroups': {'before': cg_before,
                         'delta_after': delta(cg_before, cg_after),
                         'delta_after_%gs' % settle:
                             delta(cg_before, cg_settled)},
        'mountinfo': {'lines_before': mnt_before,
                      'lines_after': mountinfo_lines(),
                      'change_events': mount_events},
        'namespaces': {'new': namespaces.new, 'first_run': first_ns},
    }
    result['dying_memory'] = dying_memory(result, dying_before, dying_after,
                                          dying_settled, settle)
    result['per_run'] = per_run(result, runs, settle)
    return result


def dying_memory(result, before, after, settled, settle):
    if before is not None:
        return {'method': 'cgroup v2 root cgroup.stat nr_dying_descendants',
                'delta_after': after - before,
                'delta_after_%gs' % settle: settled - before}
    pc = result['proc_cgroups']
    return {'method': 'cgroup v1: /proc/cgroups memory num_cgroups delta '
                      '(live + dying; runguard removes its cgroups, so '
                      'growth is dying ones or other users\')',
            'delta_after': pc['delta_after'].get('memory'),
            'delta_after_%gs' % settle:
                pc['delta_after_%gs' % settle].get('memory')}


def per_run(result, runs, settle):
    """Counts divided by K, in one flat table."""
    rows = {}
    for part in ('cgroups', 'kmem'):
        for key, c in result[part].items():
            if key != 'unavailable':
                rows['%s %s (ours)' % (part, key)] = c['ours'] / runs
                rows['%s %s (all)' % (part, key)] = c['all'] / runs
    for t, n in result['namespaces']['new'].items():
        rows['new %s namespaces' % t] = n / runs
    later = 'delta_after_%gs' % settle
    pc = result['proc_cgroups']
    for ctrl in pc['before']:
        if ctrl in USED_CONTROLLERS or pc[later][ctrl] or \
                pc['delta_after'][ctrl]:
            rows['/proc/cgroups %s (after)' % ctrl] = \
                pc['delta_after'][ctrl] / runs
            rows['/proc/cgroups %s (+%gs)' % (ctrl, settle)] = \
                pc[later][ctrl] / runs
    dm = result['dying_memory']
    if dm[later] is not None:
        rows['dying memory cgroups (+%gs)' % settle] = dm[later] / runs
    mi = result['mountinfo']
    rows['host mountinfo lines'] = (mi['lines_after'] - mi['lines_before']) \
        / runs
    rows['host mount table events'] = mi['change_events'] / runs
    return rows
