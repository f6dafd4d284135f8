/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/pool/'s header: what other folders use of the pool (the public
 * calls' helpers, rg_keeper_main), and what the pool's files share: the
 * pool directory's state (pool_files.c, pool_create.c, pool_view.c,
 * pool_destroy.c), the lease (lease.h) and the keepers (keeper.h). The
 * directory's layout, with each file's mode, is docs/pool.md's "Files";
 * a slot's cgroup is <header.cgroup_path>/slot-K.
 */
#ifndef RG_POOL_H
#define RG_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <limits.h>
#include <sys/stat.h>

#include <runguard/pool.h>

#include "base/base.h"
#include "pool/keeper.h"
#include "run/run.h"
#include "pool/trusted_path.h"

#define RG_POOL_MAGIC "RGPOOL\0\1"
/* "RGS2": records of the "RGS1" layout (no cpus) read as unknown, dirty */
#define RG_SLOT_MAGIC 0x32534752u

#define RG_POOL_HAS_CPUSET 0x1u	  /* slot cgroups include cpuset */
#define RG_POOL_FAVORDYNMODS 0x2u /* dynmods hierarchy mounted */

struct pool_header {
	char magic[8];
	uint32_t size;
	uint32_t cgroup_version;
	uint32_t flags;
	uint32_t reserved;
	int64_t created;
	char cgroup_path[256];
};

enum slot_state {
	SLOT_CLEAN = 1,
	SLOT_IN_USE = 2, /* seen by anyone but the holder: the holder died */
};

#define SLOT_SETTINGS_KNOWN 0x1u /* memory_limit and cpuset are in force */
#define SLOT_USED 0x2u		 /* a run happened since the cgroup was made */
/*
 * Clean once its keeper has reset it after the last run (keeper_slot.h):
 * clean only while that keeper lives.
 */
#define SLOT_KEEPER_RESETS 0x4u

struct slot_record {
	uint32_t magic;
	uint32_t state;
	int32_t holder;
	uint32_t flags;
	uint64_t runs;
	int64_t last_reset;
	uint64_t memory_limit;
	/* -P as given, for --pool-show; a longer list is cut, ending "..." */
	char cpuset[72];
	/* the CPUs of -P, none without: what is compared and in force */
	cpu_set_t cpus;
};

/*
 * An opened pool (rg_pool_open): what each run of it would otherwise look
 * up again. Read-only after the open, so runs of many threads share it.
 */
struct rg_pool {
	char *dir;
	unsigned int size;
	char *cgroup_parent; /* NULL: the build's default */
	bool favordynmods;
	int dir_fd; /* the pool directory, trusted at the open */
	char ns_dir[PATH_MAX];
	/*
	 * Slot i's cgroup, kept open between its runs in this process (size
	 * entries): a run then opens none of its files. Taken and given back
	 * by the slot's holder (lease.c); NULL while a run holds it.
	 */
	struct rg_cgroup **slot_cgroups;
	unsigned int kept;     /* how many of them are set (atomic) */
	unsigned int kept_max; /* within the fd budget (pool_handle.c) */
};

/* One borrowed slot. */
struct rg_pool_lease {
	struct rg_slot slot; /* its cgroup and the namespaces to join */
	/* v2 5.19-6.11: memory.peak in a new cgroup per run, not sampled */
	bool exact_v2_peak;
	int dir_fd;
	int table_fd; /* slots.table, opened to pick the slot, or -1 */
	int lock_fd;
	unsigned int index;
	char name[24]; /* "slot-K" */
	char ns_dir[PATH_MAX];
	struct slot_record rec;
	int keeper_conn;       /* resident slots: our keeper, or -1 */
	pid_t keeper_pid;      /* and its pid */
	uint64_t keeper_bytes; /* the cgroup's usage with only the keeper in */
	uint64_t keeper_pages; /* and of it, pages on the LRU lists */
	bool ran;	       /* a resident run's result came */
	bool prewarmed;	       /* the run's files, while the keeper woke */
	/* from rg_pool_open: other threads' runs share our fd table */
	bool threads_share_fds;
	struct rg_pool *pool; /* that handle, or NULL */
	bool cgroup_reusable; /* reset clean: the handle may keep it */
};

/*
 * Memory still charged to a slot after its reset beyond this (and a
 * keeper's own), or tmpfs pages of any size: the slot gets a new cgroup
 * (lease.c).
 */
#define RG_RECYCLE_ABOVE_BYTES (1u << 20)

/*
 * bytes rounded up to the kernel's memory charge batches (64 pages per
 * CPU): the units a slot's counters move in.
 */
static inline uint64_t rg_charge_batches(uint64_t bytes)
{
	uint64_t batch = 64 * (uint64_t)getpagesize();

	return (bytes + batch - 1) / batch * batch;
}

/*
 * The pool's files (pool_files.c, pool_create.c), for the other pool_*.c
 * and the lease's files (lease.h).
 */

/* ns/dynmods: a v1 pool's favordynmods mount; the saved v1 mount table */
#define RG_POOL_DYNMODS_DIR "dynmods"
#define RG_POOL_MOUNT_TABLE "cgroup.mounts"

int rg_pool_write_header(int dir_fd, const struct pool_header *h,
			 struct rg_error *err);
/* The host's v1 cgroup mounts, as the slots' runs will look them up. */
int rg_pool_save_mount_table(int dir_fd, struct rg_error *err);
/* Whether slot cgroups can include a cpuset (it opens slot 0). */
int rg_pool_probe_cpuset(struct pool_header *h, struct rg_error *err);

/*
 * Open the pool directory (O_PATH), made with its missing parents when
 * create. Refused (EPERM, with a message that says what to fix) unless
 * it and every directory above it is owned by root and writable by nobody
 * else (one above may be a sticky directory writable by all, such as
 * /tmp), and unless what runguard keeps in it is what runguard makes:
 * no symbolic link, nothing others could write. A symbolic link on the
 * way is followed only when root owns it.
 */
int rg_pool_open_dir(const char *dir, bool create, int *dir_fd,
		     struct rg_error *err);
/*
 * When the directory of *dir_fd was removed (a destroy), open dir again,
 * making it if needed. One fstat() when it was not.
 */
int rg_pool_reopen_dir(const char *dir, int *dir_fd, struct rg_error *err);
int rg_pool_read_header(int dir_fd, struct pool_header *h);

/*
 * audit.c: st is of this type (S_IFREG, S_IFDIR, S_IFSOCK), root's or the
 * effective user's, writable by nobody else and, unless a directory, not
 * linked elsewhere: what runguard makes in a pool directory.
 */
bool rg_pool_file_ok(const struct stat *st, mode_t type);
/* dir_fd/name so, or missing (made when needed); what is wrong in err. */
int rg_pool_check_file(int dir_fd, const char *dir, const char *name,
		       mode_t type, struct rg_error *err);
/* Every file of the pool in dir checked so; the first that is not, in err. */
int rg_pool_audit(const char *dir, struct rg_error *err);
/* The slot cgroups' parent for a pool in dir: "<parent>/pool-<hash>". */
int rg_pool_cgroup_path(const char *dir, const char *parent, char *buf,
			size_t len, struct rg_error *err);
/*
 * The keeper of every free slot that has none started, as a slot's first
 * run with keepers would (start_keepers.c). Slots that are held are
 * skipped.
 */
int rg_pool_start_keepers(const struct rg_pool_options *o,
			  struct rg_error *err);

/*
 * The caller's options as this version's struct, dir defaulted; EINVAL for
 * none or a struct_size too small.
 */
int rg_pool_options_in(struct rg_pool_options *own,
		       const struct rg_pool_options *options,
		       struct rg_error *err);

/* log: where creation reports each step (the run's or the admin sink) */
int rg_pool_ensure(int dir_fd, const char *dir, const struct rg_pool_options *o,
		   const struct rg_log_sink *log, struct pool_header *h,
		   struct rg_error *err);
/*
 * A slot's record in slots.table. The _at forms take the table's fd
 * (rg_pool_open_table: one open for a lease's reads and writes), the
 * others open it for the one call.
 */
int rg_pool_open_table(int dir_fd);
int rg_pool_read_record_at(int table_fd, unsigned int index,
			   struct slot_record *rec);
int rg_pool_write_record_at(int table_fd, unsigned int index,
			    const struct slot_record *rec,
			    struct rg_error *err);
int rg_pool_read_record(int dir_fd, unsigned int index,
			struct slot_record *rec);
int rg_pool_write_record(int dir_fd, unsigned int index,
			 const struct slot_record *rec, struct rg_error *err);
void rg_pool_slot_name(unsigned int index, char *buf, size_t len);
int rg_pool_open_slot_cgroup(const struct pool_header *h, const char *name,
			     struct rg_cgroup **cg, bool *created,
			     struct rg_error *err);
uint32_t rg_pool_hash(const char *s);
/* Take the saved cgroup mounts, when they still hold (v1). */
void rg_pool_use_mount_table(int dir_fd, const struct pool_header *h);
/* <pool directory>/ns by the path of dir_fd (from rg_pool_open_dir). */
int rg_pool_ns_dir(int dir_fd, char *buf, size_t len, struct rg_error *err);

/*
 * A slot borrowed from cfg's pool (cfg->pool_size > 0; created if need
 * be): kept cgroup and namespaces, settings written only where they
 * differ, cleaned first if its last holder died. Waits while every slot
 * is busy; wake_fd (if >= 0) or cfg's cancel fd becoming readable ends
 * the wait (EINTR).
 * pool: the pool opened already (rg_pool_open), or NULL to open cfg's.
 * In lease.c; rg_run() and rg_pool_run() take it as their slot source.
 */
int rg_slot_acquire_pooled(const struct rg_config *cfg, struct rg_pool *pool,
			   int wake_fd, struct rg_slot **out,
			   struct rg_error *err);

/*
 * The body of the runguard-keeper executable (keeper/main.c, in
 * keeper_server.c). argv: runguard-keeper POOL-DIR SLOT (what ps shows;
 * SLOT names the slot, the pool is the directory on fd 4). It serves its
 * slot until it is killed.
 */
int rg_keeper_main(int argc, char **argv);

#endif
