# SPDX-License-Identifier: LGPL-2.1-or-later
"""Counting kernel object creation with tracepoints, in a private tracefs
instance (used by test_pool.py's churn test and by bench/run).

CgroupTracer enables cgroup_mkdir/cgroup_rmdir and, when asked for,
cgroup_attach_task and kmem:kmem_cache_alloc of the slab caches of
namespaces and mounts.  Every
count is of what the whole machine did while tracing was on; the callers
attribute events to their own runs by cgroup path or process id.
"""

import os
import re
import shutil
import subprocess
from collections import namedtuple

TRACING = '/sys/kernel/tracing'

# Slab caches whose allocations mean "a kernel object was made".
KMEM_CACHES = ('net_namespace', 'uts_namespace', 'pid_namespace',
               'mnt_cache')

# The allocating functions of those objects.  Slab merging shares a cache
# between unrelated objects (on 6.18, mnt_cache also serves posix timers:
# timer_create() shows up as name=mnt_cache), so an event is classified by
# its call site, not by the cache name alone.
KMEM_CALL_SITES = {
    'net_namespace': ('net_alloc', 'copy_net_ns'),
    'uts_namespace': ('clone_uts_ns', 'copy_utsname'),
    'pid_namespace': ('create_pid_namespace', 'copy_pid_ns'),
    'mnt_cache': ('alloc_vfsmnt',),
}

# "  comm-pid  (  tgid) [cpu] flags  ts: event: fields"; the tgid column
# exists with options/record-tgid (it may read "(-------)").
_LINE_RE = re.compile(r'^\s*(?P<comm>.*?)-(?P<pid>[0-9]+)\s+'
                      r'(?:\(\s*(?P<tgid>[0-9]+|-+)\)\s+)?\[[0-9]+\]\s+'
                      r'\S+\s+[0-9.]+:\s+(?P<event>\w+):\s?(?P<fields>.*)$')

TraceEvent = namedtuple('TraceEvent', 'comm pid tgid event fields')


def parse_event(line):
    """A trace line as a TraceEvent (tgid None when not recorded), or None."""
    m = _LINE_RE.match(line)
    if not m:
        return None
    tgid = m.group('tgid')
    tgid = int(tgid) if tgid and tgid.isdigit() else None
    return TraceEvent(m.group('comm'), int(m.group('pid')), tgid,
                      m.group('event'), m.group('fields'))


def kmem_object(ev):
    """What a kmem_cache_alloc event made: a KMEM_CACHES name, or 'other'
    (a merged cache's allocation for something else)."""
    name = re.search(r'\bname=(\S+)', ev.fields)
    site = re.search(r'\bcall_site=([A-Za-z0-9_.]+)', ev.fields)
    site = site.group(1) if site and not site.group(1).startswith('0x') \
        else None
    for cache, funcs in KMEM_CALL_SITES.items():
        if site in funcs:
            return cache
    if name and name.group(1) in KMEM_CACHES and not site:
        return name.group(1)    # no symbols: trust the name
    return 'other'


def _cache_aliases(cache):
    """Names the tracepoint may show for cache: with slab merging, the name
    of whichever merged cache was created first."""
    slab = '/sys/kernel/slab'
    path = os.path.join(slab, cache)
    if not os.path.islink(path):
        return [cache]
    target = os.readlink(path)
    try:
        return sorted(n for n in os.listdir(slab)
                      if os.path.islink(os.path.join(slab, n))
                      and os.readlink(os.path.join(slab, n)) == target)
    except OSError:
        return [cache]


def proc_cgroups_table():
    """{controller: (hierarchy id, num_cgroups)} from /proc/cgroups;
    num_cgroups counts live and dying cgroups."""
    res = {}
    with open('/proc/cgroups') as f:
        for line in f:
            if not line.startswith('#'):
                name, h, num, _ = line.split()
                res[name] = (int(h), int(num))
    return res


def proc_cgroup_counts():
    """{controller: num_cgroups} (live and dying) from /proc/cgroups."""
    return {name: num for name, (_, num) in proc_cgroups_table().items()}


class CgroupTracer:
    """cgroup_mkdir/cgroup_rmdir (and optionally kmem_cache_alloc of
    KMEM_CACHES) tracepoints in a private tracefs instance.  When tracefs
    is not mounted, it is mounted in a private mount namespace of a helper
    process (the host's mount table stays untouched) and used through
    /proc/<helper>/root."""

    def __init__(self, kmem=False, name='rgtest', attach=False, setns=False,
                 reclaim=False, page_cache_ino=None):
        self.want_kmem = kmem
        # pages added to the page cache for this inode number
        self.page_cache_ino = page_cache_ino
        # None when they are traced, else why not
        self.page_cache_unavailable = 'not requested'
        self.want_attach = attach
        self.want_setns = setns
        self.want_reclaim = reclaim
        # None when memcg reclaims are traced, else why not
        self.reclaim_unavailable = 'not requested'
        # None when setns(2) calls are traced, else why not
        self.setns_unavailable = 'not requested'

        self.name = name
        self.proc = None
        self.inst = None
        # None when kmem events are traced, else why not
        self.kmem_unavailable = 'not requested'

    def start(self):
        """Start tracing; return None, or why cgroup events cannot be
        traced (kmem problems only set kmem_unavailable)."""
        with open('/proc/filesystems') as f:
            if 'tracefs' not in f.read():
                return 'tracefs is not supported by the kernel'
        if os.path.isdir(os.path.join(TRACING, 'events', 'cgroup')):
            # already mounted (by someone else): just add an instance
            return self.make_instance(TRACING)
        if not shutil.which('unshare'):
            return 'unshare(1) is missing'
        self.proc = subprocess.Popen(
            ['unshare', '--mount', '--propagation', 'private', '--', 'sh',
             '-c', 'mount -t tracefs nodev %s && '
             'echo ready && exec cat >/dev/null' % TRACING],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        if self.proc.stdout.readline() != 'ready\n':
            self.close()
            return 'cannot mount tracefs in a private mount namespace'
        return self.make_instance('/proc/%d/root%s' % (self.proc.pid,
                                                        TRACING))

    def _write(self, rel, value):
        with open(os.path.join(self.inst, rel), 'w') as f:
            f.write(value)

    def make_instance(self, tracing):
        events = os.path.join(tracing, 'events', 'cgroup')
        if not os.path.isdir(os.path.join(events, 'cgroup_mkdir')):
            self.close()
            return 'no cgroup tracepoints'
        try:
            self.inst = os.path.join(tracing, 'instances',
                                     '%s-%d' % (self.name, os.getpid()))
            os.mkdir(self.inst)
            if os.path.exists(os.path.join(self.inst, 'options',
                                           'record-tgid')):
                self._write('options/record-tgid', '1')
            if self.want_kmem:
                self.kmem_unavailable = self.enable_kmem()
            events = ['cgroup_mkdir', 'cgroup_rmdir']
            if self.want_attach:
                events.append('cgroup_attach_task')
            for ev in events:
                self._write('events/cgroup/%s/enable' % ev, '1')
            if self.want_setns:
                self.setns_unavailable = self.enable_setns()
            if self.want_reclaim:
                self.reclaim_unavailable = self.enable_reclaim()
            if self.page_cache_ino is not None:
                self.page_cache_unavailable = self.enable_page_cache()
        except OSError as e:
            self.close()
            return 'cannot set up a tracefs instance: %s' % e
        return None

    def enable_kmem(self):
        """Enable kmem_cache_alloc, filtered by cache name; return None or
        why not."""
        ev = os.path.join(self.inst, 'events', 'kmem', 'kmem_cache_alloc')
        try:
            with open(os.path.join(ev, 'format')) as f:
                fmt = f.read()
        except OSError:
            return 'no kmem:kmem_cache_alloc tracepoint'
        if not re.search(r'field:__data_loc char\[\] name;', fmt):
            return 'kmem_cache_alloc has no string field "name"'
        names = sorted(set(n for c in KMEM_CACHES for n in _cache_aliases(c)))
        try:
            self._write('buffer_size_kb', '4096')
            with open(os.path.join(ev, 'filter'), 'w') as f:
                f.write(' || '.join('name == "%s"' % n for n in names))
            with open(os.path.join(ev, 'enable'), 'w') as f:
                f.write('1')
        except OSError as e:
            return 'cannot enable kmem_cache_alloc with a name filter: %s' % e
        return None

    def _enable(self, group, event, missing):
        """Enable one tracepoint; return None or why not (missing: the
        reason when the kernel has no such tracepoint)."""
        ev = os.path.join(self.inst, 'events', group, event)
        if not os.path.isdir(ev):
            return missing
        try:
            with open(os.path.join(ev, 'enable'), 'w') as f:
                f.write('1')
        except OSError as e:
            return 'cannot enable %s: %s' % (event, e)
        return None

    def enable_setns(self):
        """Enable the setns(2) entry tracepoint; return None or why not."""
        return self._enable('syscalls', 'sys_enter_setns',
                            'no syscalls:sys_enter_setns tracepoint '
                            '(CONFIG_FTRACE_SYSCALLS)')

    def enable_reclaim(self):
        """Enable the start of a memory cgroup's reclaim (force_empty,
        memory.reclaim, a limit reached); return None or why not."""
        return self._enable('vmscan', 'mm_vmscan_memcg_reclaim_begin',
                            'no vmscan:mm_vmscan_memcg_reclaim_begin '
                            'tracepoint')

    def enable_page_cache(self):
        """Enable the addition of a page to the page cache, for the inode
        number asked for (the device is the caller's to check: the trace
        prints it as major:minor); return None or why not."""
        ev = os.path.join(self.inst, 'events', 'filemap',
                          'mm_filemap_add_to_page_cache')
        if not os.path.isdir(ev):
            return 'no filemap:mm_filemap_add_to_page_cache tracepoint'
        try:
            with open(os.path.join(ev, 'filter'), 'w') as f:
                f.write('i_ino == %d' % self.page_cache_ino)
            with open(os.path.join(ev, 'enable'), 'w') as f:
                f.write('1')
        except OSError as e:
            return 'cannot enable mm_filemap_add_to_page_cache: %s' % e
        return None

    def mark(self, text):
        """A line of ours in the trace, between the kernel's events."""
        self._write('trace_marker', text)

    def lost(self):
        """Events the ring buffer dropped (overrun), summed over CPUs."""
        total = 0
        per_cpu = os.path.join(self.inst, 'per_cpu')
        for cpu in os.listdir(per_cpu):
            with open(os.path.join(per_cpu, cpu, 'stats')) as f:
                for line in f:
                    key, _, value = line.partition(':')
                    if key in ('overrun', 'dropped events'):
                        total += int(value)
        return total

    def stop(self):
        """Stop tracing; return the event lines."""
        self._write('tracing_on', '0')
        with open(os.path.join(self.inst, 'trace')) as f:
            return [ln for ln in f.read().splitlines()
                    if not ln.startswith('#')
                    and ('cgroup_' in ln or 'kmem_cache_alloc' in ln
                         or 'sys_setns(' in ln
                         or 'mm_vmscan_memcg_reclaim_begin' in ln
                         or 'mm_filemap_add_to_page_cache' in ln
                         or 'tracing_mark_write' in ln)]

    def close(self):
        if self.inst:
            try:
                os.rmdir(self.inst)
            except OSError:
                pass
            self.inst = None
        if self.proc:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.proc.stderr.close()
            self.proc = None
