/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The slot pool: N slots, each a cgroup and an IPC, network and UTS
 * namespace that outlive the runs. A run borrows a free slot (flock on its
 * lock file, released by the kernel if the holder dies), uses it and leaves
 * it as clean as a new one, so that no cgroup, namespace or mount is created
 * or destroyed per run. See docs/pool.md.
 *
 * Runs use the pool when rg_config_set_pool() gave a size > 0; the first
 * such run creates the pool. The calls below are for administration.
 */
#ifndef RUNGUARD_POOL_H
#define RUNGUARD_POOL_H

#include <limits.h>
#include <runguard/runguard.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RG_POOL_DIR_DEFAULT "/run/runguard"
/* more slots than this is a typo, not a judgehost */
#define RG_POOL_SIZE_MAX 1024

/* How a pool is made (by rg_pool_create() or by the first run). */
struct rg_pool_options {
	size_t struct_size;	   /* sizeof(struct rg_pool_options) */
	const char *dir;	   /* NULL: RG_POOL_DIR_DEFAULT */
	unsigned int size;	   /* slots, 1 .. RG_POOL_SIZE_MAX */
	const char *cgroup_parent; /* NULL: the build's default */
	/*
	 * cgroup v1 only: mount a named hierarchy with "favordynmods", so that
	 * moving the child into the slot cgroups does not wait for an RCU grace
	 * period after idle (5-7 ms). Host-wide effect: see docs/pool.md.
	 */
	bool favordynmods;
	/*
	 * Start a keeper in every free slot that has none (resident slots,
	 * rg_config_set_pool_keeper()), so that no run pays for it. Each is
	 * an exec'd runguard-keeper, nothing of the caller's memory. Runs
	 * that do not want keepers stop them.
	 */
	bool keepers;
	/* new fields go here, at the end */
};

/* clang-format off */
#define RG_POOL_OPTIONS_INIT { .struct_size = sizeof(struct rg_pool_options) }
/* clang-format on */

/* Create the pool, or complete a half-made one. Idempotent. */
RG_EXPORT int rg_pool_create(const struct rg_pool_options *options,
			     struct rg_error *err);

/*
 * Remove slots, namespaces, mounts, cgroups and files. Refuses (EBUSY) while
 * a slot is held, unless force: then the runs in held slots are killed.
 */
RG_EXPORT int rg_pool_destroy(const char *dir, bool force,
			      struct rg_error *err);

/*
 * The same once every run in the pool has ended by itself: no new run
 * takes a slot meanwhile (runs that arrive wait, then make the pool
 * anew), so a restart of the pool (the systemd unit's stop) fails no run
 * in flight. After timeout_ms (negative: no limit) ETIMEDOUT, with the
 * pool left as it was.
 */
RG_EXPORT int rg_pool_destroy_when_idle(const char *dir, int timeout_ms,
					struct rg_error *err);

enum rg_pool_slot_state {
	RG_POOL_SLOT_FREE = 0,
	RG_POOL_SLOT_HELD = 1,
	/* its holder died during a run; the next holder cleans it */
	RG_POOL_SLOT_DIRTY = 2,
};

struct rg_pool_slot_info {
	size_t struct_size; /* what the library filled in */
	unsigned int index;
	enum rg_pool_slot_state state;
	pid_t holder;	       /* 0 when free */
	uint64_t runs;	       /* runs served */
	int64_t last_reset;    /* seconds since the epoch, 0: never */
	bool settings_known;   /* the two settings below are in force */
	uint64_t memory_limit; /* bytes, RG_UNLIMITED for none */
	char cpuset[72];       /* "" for none */
			       /* new fields go here, at the end */
};

struct rg_pool_info {
	size_t struct_size; /* sizeof(struct rg_pool_info), set by the caller */
	unsigned int size;
	int cgroup_version;    /* 1 or 2 */
	char cgroup_path[256]; /* parent of the slot cgroups */
	bool favordynmods;
	int64_t created; /* seconds since the epoch */
			 /* new fields go here, at the end */
};

/* clang-format off */
#define RG_POOL_INFO_INIT { .struct_size = sizeof(struct rg_pool_info) }
/* clang-format on */

/*
 * Read the pool's state without changing it. *slots is allocated as an
 * array of info->size entries of slot_size bytes each (pass
 * sizeof(struct rg_pool_slot_info)); free() it. ENOENT when there is no
 * pool.
 */
RG_EXPORT int rg_pool_show(const char *dir, struct rg_pool_info *info,
			   struct rg_pool_slot_info **slots, size_t slot_size,
			   struct rg_error *err);

/*
 * Slot index's keeper (resident slots): *pid is its pid, 0 when the slot
 * has none, -1 when it is alive but too busy to answer. Asks the keeper
 * itself (a connection that requests nothing), not the slot table.
 */
RG_EXPORT int rg_pool_slot_keeper(const char *dir, unsigned int index,
				  pid_t *pid, struct rg_error *err);

struct rg_prewarm_stats {
	size_t struct_size; /* sizeof(struct rg_prewarm_stats) */
	uint64_t files;
	uint64_t bytes;
	/* new fields go here, at the end */
};

/* clang-format off */
#define RG_PREWARM_STATS_INIT { .struct_size = sizeof(struct rg_prewarm_stats) }
/* clang-format on */

/*
 * Bring files (directories: every regular file below them, same file
 * system) into the page cache from the calling process, so that the pages
 * are charged to the caller's cgroup and not to the slot of the first run
 * that touches them. Returns once every byte is in (stats counts them).
 */
RG_EXPORT int rg_pool_prewarm(const char *const paths[], size_t count,
			      struct rg_prewarm_stats *stats,
			      struct rg_error *err);

/*
 * A pool opened once by a judge that runs many commands through it: made
 * (or completed) as rg_pool_create() would, its directory checked and
 * kept open. NULL on error. Free with rg_pool_close() once no rg_pool_run()
 * is under way. The handle also keeps the cgroups of slots it ran in open
 * for their next runs, using at most a quarter of RLIMIT_NOFILE's soft
 * limit (about 30 fds a slot on cgroup v1; docs/pool.md).
 */
struct rg_pool;

RG_EXPORT struct rg_pool *rg_pool_open(const struct rg_pool_options *options,
				       struct rg_error *err);

/*
 * rg_run() in a free slot of pool (waiting while all are busy): cfg's own
 * pool directory, size, cgroup parent and favordynmods give way to the
 * pool's; its keeper and v2-memory-peak settings apply. Safe to call from
 * many threads at once, each with its own cfg and result: every run holds
 * its slot alone, against other threads and other processes (the CLI
 * included). Leave rg_config_set_reap_all_children() off: it would reap
 * other threads' children. Returns as rg_run().
 */
RG_EXPORT enum rg_outcome rg_pool_run(struct rg_pool *pool,
				      const struct rg_config *cfg,
				      struct rg_result *result,
				      struct rg_error *err);

RG_EXPORT void rg_pool_close(struct rg_pool *pool);

/* Run in a pool of size slots at dir (NULL: default); 0 turns it off. */
RG_EXPORT int rg_config_set_pool(struct rg_config *cfg, const char *dir,
				 unsigned int size, struct rg_error *err);

/*
 * Resident slots: each slot has a keeper process (PID 1 of the slot's own
 * PID namespace, in its namespaces and cgroup) that forks the runs, so a
 * run joins no namespace and no cgroup. Default true, as in the CLI and
 * the Python binding: the keeper is an executable of its own
 * (runguard-keeper), nothing of the caller's memory (docs/pool.md).
 */
RG_EXPORT void rg_config_set_pool_keeper(struct rg_config *cfg, bool enable);

/*
 * How a pooled run measures its memory peak on cgroup v2 kernels whose
 * memory.peak cannot be reset (5.19 to 6.11). Elsewhere the peak is the
 * kernel's and the slot keeps its cgroup either way: this changes nothing.
 */
enum rg_pool_v2_memory_peak {
	/*
	 * memory.current sampled every 5 ms, and the limit itself when
	 * memory.events says usage reached it: the slot keeps its cgroup,
	 * the peak is a lower bound between samples. The default.
	 */
	RG_POOL_V2_PEAK_SAMPLED = 0,
	/* memory.peak, exact: a memory cgroup made and removed per run */
	RG_POOL_V2_PEAK_EXACT = 1,
};

/* EINVAL for a value not in enum rg_pool_v2_memory_peak. */
RG_EXPORT int rg_config_set_pool_v2_memory_peak(struct rg_config *cfg,
						enum rg_pool_v2_memory_peak how,
						struct rg_error *err);

/*
 * See rg_pool_options.favordynmods; default false, as in the CLI: it is a
 * host-wide switch, and resident slots (the default) make no attach.
 */
RG_EXPORT void rg_config_set_pool_favordynmods(struct rg_config *cfg,
					       bool enable);

#ifdef __cplusplus
}
#endif

#endif
