/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One run's cgroup, across the hierarchies it needs, behind one interface
 * for cgroup v1 and v2. The per-run calls work on directory and file
 * descriptors opened once by rg_cgroup_create() or rg_cgroup_open().
 *
 * A pooled slot reuses one cgroup for many runs, each in its own process:
 * rg_cgroup_open() it, rg_cgroup_reset() it after the previous run's
 * rg_cgroup_kill_all(), rg_cgroup_start(), ..., rg_cgroup_close().
 *
 * v1 hierarchies used: memory (limit, memsw peak, OOM), cpuacct (CPU time),
 * freezer (race-free kill), cpuset (with a cpuset only).
 * v2: one directory; memory, cpuset controllers; cpu.stat is always there.
 */
#ifndef RG_CGROUP_H
#define RG_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <runguard/runguard.h>

#include "cgroup/cgroup_probe.h"
#include "cgroup/psi.h"

enum rg_cgroup_mode {
	RG_CGROUP_V1 = 1,
	RG_CGROUP_V2 = 2,
};

struct rg_cgroup;

/* Which limits rg_cgroup_apply_limits() writes; the others stay as they are. */
#define RG_CG_SET_MEMORY 0x1u
#define RG_CG_SET_CPUSET 0x2u

struct rg_cgroup_limits {
	unsigned int set;      /* RG_CG_SET_* */
	uint64_t memory_bytes; /* RG_UNLIMITED for none */
	/*
	 * NULL for no pinning: a cgroup with cpuset gets its parent's CPUs
	 * back, one without is left alone.
	 */
	const char *cpuset;
};

struct rg_cgroup_stats {
	uint64_t memory_peak;	/* bytes */
	char memory_method[40]; /* e.g. "memsw.max_usage_in_bytes" */
	bool memory_peak_valid; /* false when the kernel offers no peak */
	/* sampled, not kept by the kernel: the true peak may be higher */
	bool memory_peak_lower_bound;
	int64_t cpu_ns; /* since rg_cgroup_start(); -1 if unknown */
	/*
	 * The reading process's own CPU time between the two reads of the
	 * cgroup's CPU counter (at rg_cgroup_start() and here), ns: what a
	 * reader that lives in the cgroup (a resident slot's runner) takes
	 * out of cpu_ns. -1 if unknown.
	 */
	int64_t reader_cpu_ns;
	/* memory.stat pgmajfault since rg_cgroup_start(); -1 if unknown */
	int64_t major_faults;
	bool oom_killed; /* since rg_cgroup_start() */
	/*
	 * Since rg_cgroup_start(), ns, by enum rg_psi_kind: how long some task
	 * of the cgroup waited for a CPU, for I/O and for memory; -1 where
	 * the kernel tells nothing.
	 */
	int64_t wait_ns[RG_PSI_NR];
	const char *wait_method; /* how, e.g. "cgroup-psi"; NULL if no wait */
};

/*
 * v2 when /sys/fs/cgroup itself is a cgroup2 mount (as DOMjudge decides),
 * v1 otherwise. The result is cached.
 */
int rg_cgroup_detect(enum rg_cgroup_mode *mode, struct rg_error *err);

/*
 * The run's end: its waits (rg_cgroup_stats.wait_ns) stop growing here,
 * not when they are read (after its leftovers are killed, and in a
 * resident slot after the runner has reaped it).
 */
void rg_cgroup_stop(struct rg_cgroup *cg);

/*
 * How a run's cgroup gives its pressure totals: "cgroup-psi" (v2),
 * "unified-psi" (v1 with a unified hierarchy runs can join), NULL when
 * it gives none. Whether the kernel keeps them (/proc/pressure) is the
 * caller's to ask.
 */
const char *rg_cgroup_wait_method(void);

/*
 * Where the hierarchies are mounted, as text to keep with a pool (v1:
 * "controller mount" lines; v2: empty, its root is fixed).
 */
int rg_cgroup_mount_table(char *buf, size_t len, struct rg_error *err);

/*
 * Use a table from rg_cgroup_mount_table() instead of looking for the
 * mounts, if each one is still a cgroup hierarchy of its controller that
 * holds cgroup_path. Only before the first cgroup of the process; returns
 * whether the process now knows its mounts without a search.
 */
bool rg_cgroup_use_mount_table(const char *text, const char *cgroup_path);

/*
 * Create <parent>/<name> in every hierarchy needed (cpuset only when
 * want_cpuset), creating the parent on demand (v1 cpuset parent gets the
 * root's cpus/mems; v2 parent gets +memory [+cpuset] in its
 * subtree_control), and open every fd the run needs. On failure nothing is
 * left behind.
 */
int rg_cgroup_create(const char *parent, const char *name, bool want_cpuset,
		     struct rg_cgroup **out, struct rg_error *err);

/*
 * As rg_cgroup_create(), but <parent>/<name> may exist already (made by an
 * earlier process, or by a racing one): it is then used as it is, and
 * thawed should a crashed process have left it frozen. parent may have
 * several components ("runguard/pool-1a2b3c4d"). On failure, the run
 * directories this call made are removed again; parent levels stay, as
 * they do for rg_cgroup_create() (siblings may be using them).
 */
/*
 * own_parent: parent's last level is runguard's too (a pool's cgroup):
 * it is made root's alone (0700) as name is, whatever its mode was.
 */
int rg_cgroup_open(const char *parent, const char *name, bool want_cpuset,
		   bool own_parent, struct rg_cgroup **out,
		   struct rg_error *err);
/* This process made every directory of cg: no earlier run used them. */
bool rg_cgroup_fresh(const struct rg_cgroup *cg);

/* Write the limits selected by limits->set (none: no write at all). */
int rg_cgroup_apply_limits(struct rg_cgroup *cg,
			   const struct rg_cgroup_limits *limits,
			   struct rg_error *err);

/*
 * Move the calling process into the cgroup (every hierarchy). Called in the
 * child between clone and exec: only write() to fds opened before, no
 * allocation. Returns 0 or -errno. On v2, create the child in the cgroup
 * with clone3(CLONE_INTO_CGROUP, clone_fd()) instead and do not call this:
 * it works there too, but costs a migration.
 */
int rg_cgroup_attach_self(const struct rg_cgroup *cg);

/* v2: directory fd for clone3(CLONE_INTO_CGROUP); -1 on v1 and for NULL. */
int rg_cgroup_clone_fd(const struct rg_cgroup *cg);

/*
 * Baselines at the start of the timed window (the child is set up and
 * blocked): reset peak watermarks where the kernel allows it, remember CPU
 * usage and OOM counters so that stats are deltas.
 */
int rg_cgroup_start(struct rg_cgroup *cg, struct rg_error *err);

/*
 * Whether rg_cgroup_start() makes the memory peak this run's even in a
 * cgroup that earlier runs used. False only on v2 kernels whose memory.peak
 * cannot be reset (5.19 to 6.11): there a used cgroup's peak is reported
 * invalid ("memory.peak(stale)"). No system call.
 */
bool rg_cgroup_peak_resettable(const struct rg_cgroup *cg);

/*
 * Whether the next rg_cgroup_start() will get a memory peak of its run
 * alone: where the peak is reset or sampled, and on 5.19-6.11 in a cgroup
 * nothing was ever charged to (this handle made it, or its memory.peak
 * read 0 when it was opened, whoever made it). A pool gives a run a new
 * cgroup when this is false. No system call.
 */
bool rg_cgroup_peak_clean(const struct rg_cgroup *cg);

/*
 * A pooled cgroup (opened with its pool's level as its own parent) and
 * that level made root's alone again (0700), as rg_cgroup_open() makes
 * them: a slot's keeper, which opened it once, puts right after each run
 * what was chmod'ed since, so that no run reads the counters of earlier
 * ones. One fstat() per directory when nothing changed.
 */
int rg_cgroup_keep_private(struct rg_cgroup *cg, struct rg_error *err);

/*
 * The caller vouches that nothing but a resident task (rg_cgroup_set_
 * resident(), whose share the caller takes off) was charged to the cgroup
 * since it was made: on v2 5.19-6.11 its memory.peak then serves the next
 * rg_cgroup_start() as a new cgroup's would. A slot's runner is told so by
 * the client that made the cgroup (keeper_runner.c). No system call.
 */
void rg_cgroup_assume_peak_unused(struct rg_cgroup *cg);

/*
 * Where memory.peak cannot be reset (v2, 5.19-6.11), ignore it from now on
 * and sample memory.current instead, as before 5.19: the highest sample,
 * or the limit itself when memory.events says usage reached it. The peak
 * is then each run's in a cgroup that serves run after run (a pool slot
 * keeps its cgroup), at the price of a lower bound between samples.
 * Elsewhere the peak is exact and reset already: nothing changes. No
 * system call.
 */
void rg_cgroup_sample_unresettable_peak(struct rg_cgroup *cg);

/*
 * The caller reaps every process of each run and nothing else (a slot's
 * runner, init of the run's PID namespace): major faults are its
 * children's rusage, not memory.stat's pgmajfault, the costliest file of
 * a window's reads (about 20 us each at start and end). read_stats then
 * reports major_faults -1. No system call.
 */
void rg_cgroup_faults_by_reaper(struct rg_cgroup *cg);

/*
 * Bring an empty cgroup (after rg_cgroup_kill_all()) back to what a new one
 * reports: reclaim the memory still charged to it (page cache, slab of the
 * previous run), and on v1 zero the failure counters, watermarks and CPU
 * usage. Memory the kernel cannot reclaim (tmpfs files, for one) stays:
 * rg_cgroup_needs_recycle() then says so (read from memory.stat only
 * after a reset that reclaimed: pages left on a tmpfs are on the LRU).
 */
int rg_cgroup_reset(struct rg_cgroup *cg, struct rg_error *err);

/*
 * Whether rg_cgroup_reset() will have memory to reclaim (page cache the
 * run left). That can take 100 ms and more: reclaim that cannot reach
 * zero (dirty pages, per-CPU charges) is throttled by the kernel. One
 * read of memory.stat and the usage.
 */
bool rg_cgroup_reset_is_slow(struct rg_cgroup *cg);

/*
 * Whether the cgroup must not be reused for another run: the last reset
 * left tmpfs pages charged to it (any amount), or, on v2, killing
 * leftovers with cgroup.kill leaves a cgroup into which some kernels
 * (Debian's 6.12.107) kill every child created with CLONE_INTO_CGROUP.
 */
bool rg_cgroup_needs_recycle(const struct rg_cgroup *cg);

/*
 * Memory charged to the cgroup now (v1 memory.usage_in_bytes, v2
 * memory.current): one pread().
 */
/*
 * The bytes of pages on the memory LRU lists (anonymous, page cache,
 * tmpfs, unevictable): what tasks and files hold, without the kernel's
 * own objects, whose charge comes and goes with slab pages and per-CPU
 * batches whatever a run left.
 */
int rg_cgroup_user_memory(struct rg_cgroup *cg, uint64_t *bytes,
			  struct rg_error *err);

int rg_cgroup_memory_usage(struct rg_cgroup *cg, uint64_t *bytes,
			   struct rg_error *err);

/*
 * Page cache a reset leaves charged to a cgroup with a resident task (a
 * keeper, rg_cgroup_set_resident) rather than reclaim it: at most this
 * much. Its owner may free it at any time, during the next run too.
 */
#define RG_CACHE_LEFT_MAX (64u << 10)

/*
 * Kill every process in the cgroup, race-free against forks (v2
 * cgroup.kill, v1 freezer: freeze, SIGKILL all, thaw), and wait until the
 * cgroup is empty. Bounded in time; returns -1 if tasks survive. Once it
 * found the cgroup empty, later calls return at once until
 * rg_cgroup_expect_tasks().
 */
int rg_cgroup_kill_all(struct rg_cgroup *cg, struct rg_error *err);

/* "<parent>/<name>" as opened: for messages, and to tell cgroups apart. */
const char *rg_cgroup_label(const struct rg_cgroup *cg);

/* A child is about to be spawned into the cgroup. */
void rg_cgroup_expect_tasks(struct rg_cgroup *cg);

/*
 * A task lives in the cgroup between runs (a slot's keeper) and keeps
 * bytes charged: its anonymous pages are not a run's leftovers to
 * reclaim (rg_cgroup_reset()).
 */
void rg_cgroup_set_resident(struct rg_cgroup *cg, uint64_t bytes);

/* True if the cgroup still has processes (-1 on error). */
int rg_cgroup_populated(struct rg_cgroup *cg, struct rg_error *err);

/*
 * rg_cgroup_start() was called by a child sharing our memory (spawn.h),
 * whose CPU clock is not ours: our CPU time counts from now (we slept
 * from the clone to its execve).
 */
void rg_cgroup_reader_starts_now(struct rg_cgroup *cg);

/*
 * The run's numbers, once per rg_cgroup_start(). Read without a start
 * since the last read (a child that died in its set-up), the deltas are
 * unknown (-1): cpu_ns, reader_cpu_ns, major_faults, wait_ns.
 */
int rg_cgroup_read_stats(struct rg_cgroup *cg, struct rg_cgroup_stats *stats,
			 struct rg_error *err);

/*
 * Where the kernel keeps no memory peak (cgroup v2 before 5.19), or it is
 * ignored (rg_cgroup_sample_unresettable_peak()), the supervisor samples
 * memory.current every this many ms while the command runs; 0 when no
 * sampling is needed. rg_cgroup_sample() takes one sample: one pread() on
 * an open fd.
 */
unsigned int rg_cgroup_sample_interval_ms(const struct rg_cgroup *cg);
void rg_cgroup_sample(struct rg_cgroup *cg);

/*
 * Kill whatever is left, remove the directories (retrying briefly on
 * EBUSY), close fds and free. Safe on a partially created cgroup and on
 * NULL. Returns -1 if a directory could not be removed.
 */
int rg_cgroup_destroy(struct rg_cgroup *cg, struct rg_error *err);

/*
 * rg_cgroup_destroy() without the closing and freeing: for a process
 * about to exit that shares its memory with one that died at any
 * instruction (the watchdog), where a malloc lock may be taken for good.
 * Allocates and frees nothing.
 */
int rg_cgroup_remove(struct rg_cgroup *cg, struct rg_error *err);

/* Close the fds and free; the directories and any task in them stay. */
void rg_cgroup_close(struct rg_cgroup *cg);

#endif
