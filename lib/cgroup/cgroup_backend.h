/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to dispatch.c, cgroup_v1.c and cgroup_v2.c: the backend operations
 * behind struct rg_cgroup and the small helpers both backends share.
 */
#ifndef RG_CGROUP_BACKEND_H
#define RG_CGROUP_BACKEND_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cgroup/cgroup.h"
#include "cgroup/cgroup_probe.h"
#include "cgroup/psi.h"
#include "base/base.h"

/* Bounds of the waiting loops. */
#define RG_CG_KILL_TIMEOUT_MS 5000
#define RG_CG_RMDIR_TIMEOUT_MS 200

struct rg_cgroup_ops {
	const char *name; /* "v1" or "v2", for messages */
	int (*set_memory)(struct rg_cgroup *cg, uint64_t bytes,
			  struct rg_error *err);
	/* NULL: the parent's CPUs again */
	int (*set_cpuset)(struct rg_cgroup *cg, const char *cpus,
			  struct rg_error *err);
	bool (*has_cpuset)(const struct rg_cgroup *cg);
	int (*attach_self)(const struct rg_cgroup *cg);
	int (*clone_fd)(const struct rg_cgroup *cg);
	int (*start)(struct rg_cgroup *cg, struct rg_error *err);
	int (*kill_all)(struct rg_cgroup *cg, struct rg_error *err);
	int (*populated)(struct rg_cgroup *cg, struct rg_error *err);
	int (*read_stats)(struct rg_cgroup *cg, struct rg_cgroup_stats *stats,
			  struct rg_error *err);
	/* optional: kernels that keep no memory peak (see cgroup.h) */
	unsigned int (*sample_interval_ms)(const struct rg_cgroup *cg);
	void (*sample)(struct rg_cgroup *cg);
	bool (*peak_resettable)(const struct rg_cgroup *cg);
	/* optional: as peak_resettable, or nothing charged yet (cgroup.h) */
	bool (*peak_clean)(const struct rg_cgroup *cg);
	/* rg_cgroup_keep_private() */
	int (*keep_private)(struct rg_cgroup *cg, struct rg_error *err);
	/* optional: rg_cgroup_assume_peak_unused() */
	void (*assume_peak_unused)(struct rg_cgroup *cg);
	/* optional: rg_cgroup_sample_unresettable_peak() */
	void (*sample_unresettable_peak)(struct rg_cgroup *cg);
	int (*reset)(struct rg_cgroup *cg, struct rg_error *err);
	bool (*needs_reclaim)(struct rg_cgroup *cg);
	int (*memory_usage)(struct rg_cgroup *cg, uint64_t *bytes,
			    struct rg_error *err);
	/* rg_cgroup_user_memory() */
	int (*user_memory)(struct rg_cgroup *cg, uint64_t *bytes,
			   struct rg_error *err);
	/* rmdir what was created; -1 if a directory stays */
	int (*remove)(struct rg_cgroup *cg, struct rg_error *err);
	/* close every fd and free */
	void (*release)(struct rg_cgroup *cg);
};

/* Embedded at the start of each backend's own structure. */
struct rg_cgroup {
	const struct rg_cgroup_ops *ops;
	/* "<parent>/<name>", for messages */
	char label[PATH_MAX];
	/* This process made every directory: no earlier run used them. */
	bool fresh;
	/*
	 * v2 cgroup.kill was written. Debian's 6.12.107 then SIGKILLs every
	 * later child created in the cgroup with CLONE_INTO_CGROUP (seen in
	 * the kernel lab): a reused cgroup must be made again.
	 */
	bool kill_written;
	/*
	 * The last reset left memory no reclaim frees (tmpfs pages, also
	 * swapped out): it would count in every later run's peak and limit.
	 */
	bool unreclaimable;
	/*
	 * rg_cgroup_kill_all() found it empty and no child was spawned into
	 * it since (only this process attaches tasks to it).
	 */
	bool known_empty;
	/* what a task living in it (a slot's keeper) keeps charged */
	uint64_t resident_bytes;
	/* major faults are the reader's to count (rg_cgroup_faults_by_reaper) */
	bool faults_by_reaper;
	/* rg_cg_reader_cpu_ns() just before the CPU counter's baseline */
	int64_t reader_cpu_base;
	/*
	 * rg_cgroup_start() took this process's baselines for the run, and
	 * its stats were not read since. Without it the baselines are an
	 * earlier run's (or none: a handle opened, or inherited by a fork,
	 * on a kept cgroup), and v2 cannot zero its counters.
	 */
	bool window_open;
	/*
	 * Its pressure files (psi.h), opened by the backend: v2's own, or on
	 * v1 those of its directory in the unified hierarchy; how, for
	 * rg_cgroup_stats.wait_method.
	 */
	struct rg_psi psi;
	const char *psi_method;
};

/*
 * how: RG_CG_REUSE, an existing <parent>/<name> is used (rg_cgroup_open;
 * otherwise it is an error, rg_cgroup_create), with RG_CG_OWN_PARENT
 * parent's last level made 0700 as well.
 */
#define RG_CG_REUSE 1u
#define RG_CG_OWN_PARENT 2u
int rg_cgroup_v1_create(const char *parent, const char *name, bool want_cpuset,
			unsigned int how, struct rg_cgroup **out,
			struct rg_error *err);

/* See rg_cgroup_mount_table() and rg_cgroup_use_mount_table(). */
int rg_cgroup_v1_mount_table(char *buf, size_t len, struct rg_error *err);
bool rg_cgroup_v1_use_mount_table(const char *text, const char *cgroup_path);

/*
 * root is the cgroup2 mount: /sys/fs/cgroup in production; tests point it
 * at another cgroup2 mount, where controllers may be unavailable (ctrl 0).
 */
int rg_cgroup_v2_create(const char *root, const char *parent, const char *name,
			unsigned int ctrl, unsigned int how,
			struct rg_cgroup **out, struct rg_error *err);

/* A name for one path component: non-empty, no '/', not "." or "..". */
int rg_cg_check_name(const char *name, struct rg_error *err);
int rg_cg_label(struct rg_cgroup *cg, const char *parent, const char *name,
		struct rg_error *err);

/* write() s to fd in one go. Async-signal-safe; 0 or -errno. */
int rg_cg_write(int fd, const char *s);
/* Open dir_fd/file, write s, close. */
int rg_cg_write_file(int dir_fd, const char *file, const char *s,
		     struct rg_error *err);

/* pread(fd, .., 0) into buf, NUL-terminated; length or -errno. */
int rg_cg_pread(int fd, char *buf, size_t size);
int rg_cg_read_u64(int fd, uint64_t *value);
/* The value of the "key value" line; -ENOENT if there is none. */
int rg_cg_read_key(int fd, const char *key, uint64_t *value);
/* The sum of the values of these keys' lines (missing ones count 0). */
int rg_cg_sum_keys(int fd, const char *const keys[], size_t nkeys,
		   uint64_t *sum);
/* memory.stat's pages on the LRU lists (anon, file, unevictable), bytes. */
int rg_cg_lru_bytes(int memory_stat_fd, uint64_t *bytes);
/*
 * A memory figure of cg for the ops memory_usage and user_memory: the
 * number in fd (file, e.g. memory.current), or with lru the LRU bytes of
 * the memory.stat in fd; fd < 0 means no memory controller.
 */
int rg_cg_memory_figure(const struct rg_cgroup *cg, int fd, bool lru,
			const char *file, uint64_t *bytes,
			struct rg_error *err);
/*
 * Does a reset need a reclaim, given memory.stat and the usage? Not when
 * only per-CPU charge caches and RCU-freed kernel objects are left.
 */
bool rg_cg_worth_reclaiming(int memory_stat_fd, uint64_t usage,
			    uint64_t resident_bytes);
/* After a reclaim: does memory.stat still show tmpfs pages (or swap)? */
bool rg_cg_holds_unreclaimable(int memory_stat_fd);
/* key's growth since base (UINT64_MAX: no base), or -1 when unknown */
int64_t rg_cg_delta(int fd, const char *key, uint64_t base);
/*
 * This process's CPU time, ns, read just before the cgroup's CPU counter
 * (at start and at the end): the clock read charges our running time to
 * the cgroup first, so the counter holds all of it up to that instant.
 */
int64_t rg_cg_reader_cpu_ns(void);
/* stats->reader_cpu_ns from base's baseline, just before the end's read */
void rg_cg_reader_cpu_delta(const struct rg_cgroup *base,
			    struct rg_cgroup_stats *stats);

/*
 * openat(dir_fd, file, flags | O_CLOEXEC) into *fd. When optional, a
 * missing file leaves *fd at -1 and is not an error.
 */
int rg_cg_open(int dir_fd, const char *file, int flags, bool optional, int *fd,
	       struct rg_error *err);

/*
 * Open root_fd/path, creating each missing component (racing creators are
 * fine); hook (if any) runs on every component with its parent's fd.
 */
typedef int (*rg_cg_dir_hook)(int up_fd, int dir_fd, void *data,
			      struct rg_error *err);
int rg_cg_open_parent(int root_fd, const char *path, rg_cg_dir_hook hook,
		      void *data, int *out, struct rg_error *err);

/* mkdirat + open the new directory; EEXIST is an error here. */
int rg_cg_make_dir(int parent_fd, const char *name, int *out,
		   struct rg_error *err);
/*
 * Open parent_fd/name, making it if missing (a racing creator is fine);
 * *made (if not NULL) says whether this call made it.
 */
int rg_cg_open_dir(int parent_fd, const char *name, bool *made, int *out,
		   struct rg_error *err);

/* Mode 0700 for dir_fd (a pooled cgroup), whatever it was made with. */
int rg_cg_keep_private(int dir_fd, const char *name, struct rg_error *err);

/* unlinkat(AT_REMOVEDIR), retrying EBUSY with 1, 2, 4 ... ms sleeps. */
int rg_cg_rmdir(int parent_fd, const char *name, struct rg_error *err);

/*
 * Read dir_fd/cgroup.procs afresh (v1 caches the list of a kept fd) and
 * send sig (0: none) to every pid but our own. Number of pids or -1.
 */
int rg_cg_procs_signal(int dir_fd, int sig, struct rg_error *err);

/* Sleeps that start short and double, up to a deadline. */
struct rg_cg_backoff {
	struct timespec deadline;
	long delay_us;
	long max_delay_us;
};

void rg_cg_backoff_init(struct rg_cg_backoff *b, long first_us,
			long max_delay_us, long timeout_ms);
/* Sleep the next step; false (without sleeping) once past the deadline. */
bool rg_cg_backoff_sleep(struct rg_cg_backoff *b);
/* Milliseconds left (0 when past the deadline). */
int rg_cg_backoff_left_ms(const struct rg_cg_backoff *b);

#endif
