/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Destroying a pool: every slot locked (waiting for, or ending, the runs
 * that hold one), then its keepers, namespaces, cgroups and files removed.
 */
#include "pool/pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "cgroup/cgroup.h"
#include "ns/ns.h"
#include "pool/keeper.h"
#include "rg-build-config.h"

/* What a destroy does about a slot a run holds. */
enum held_slot {
	HELD_REFUSE,  /* fail, leaving the pool as it is */
	HELD_END_RUN, /* SIGTERM its runguard, then wait (force) */
	HELD_WAIT,    /* wait for the run to end by itself */
};

#define HELD_WAIT_STEP_NS 10000000 /* 10 ms */

/*
 * How long a slot locked by no run (its record clean, no holder) may stay
 * so: a resident run's runner reclaims what the run left after its reply
 * (keeper_runner.c), 100 ms and more.
 */
#define RESET_WAIT_MS 5000

static int64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * lock_fd's flock, waited for until deadline_ms on CLOCK_MONOTONIC
 * (<0: forever).
 */
static int wait_for_slot(int lock_fd, int64_t deadline_ms)
{
	const struct timespec step = { .tv_nsec = HELD_WAIT_STEP_NS };
	struct timespec now;

	for (;;) {
		if (flock(lock_fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (deadline_ms >= 0 &&
		    (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >=
			    deadline_ms) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&step, NULL);
	}
}

/*
 * Take every slot lock; a slot a run holds is handled as `how' says.
 * Waiting happens with pool.lock held: no new run takes a slot meanwhile.
 */
static int lock_all_slots(int dir_fd, const struct pool_header *h, int *locks,
			  enum held_slot how, int64_t deadline_ms,
			  struct rg_error *err)
{
	for (unsigned int i = 0; i < h->size; i++) {
		struct slot_record rec;
		char lock[32];

		snprintf(lock, sizeof(lock), "slot-%u.lock", i);
		locks[i] = openat(dir_fd, lock,
				  O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					  O_CLOEXEC);
		if (locks[i] < 0)
			continue; /* half-made pool */
		if (flock(locks[i], LOCK_EX | LOCK_NB) == 0)
			continue;
		rg_pool_read_record(dir_fd, i, &rec);
		/* not a run: the reclaim after one, which ends by itself */
		if (rec.state == SLOT_CLEAN && rec.holder == 0 &&
		    wait_for_slot(locks[i], monotonic_ms() + RESET_WAIT_MS) == 0)
			continue;
		if (how == HELD_REFUSE)
			return rg_fail(err, EBUSY,
				       "slot %u is held by pid %d "
				       "(use force to end its run, or wait)",
				       i, (int)rec.holder);
		if (how == HELD_WAIT) {
			rg_log_to(rg_admin_log(), RG_LOG_NOTICE,
				  "slot %u: "
				  "waiting for the run of pid %d",
				  i, (int)rec.holder);
			if (wait_for_slot(locks[i], deadline_ms) < 0)
				return rg_fail(err, errno,
					       "slot %u is still "
					       "held by pid %d: the pool is "
					       "left as it was",
					       i, (int)rec.holder);
			continue;
		}
		/* its runguard writes the meta file and releases the slot */
		rg_log_to(rg_admin_log(), RG_LOG_NOTICE,
			  "slot %u: ending the "
			  "run of pid %d",
			  i, (int)rec.holder);
		if (rec.holder > 0)
			kill(rec.holder, SIGTERM);
		if (flock(locks[i], LOCK_EX) < 0)
			return rg_fail(err, errno, "waiting for slot %u", i);
	}
	return 0;
}

static int destroy_slot(int dir_fd, const char *ns_dir,
			const struct pool_header *h, unsigned int index,
			struct rg_error *err)
{
	struct rg_cgroup *cg = NULL;
	char name[24], file[32];
	bool created;
	int rc = 0;

	rg_pool_slot_name(index, name, sizeof(name));
	/* the keeper dies with the cgroup's tasks */
	if (rg_pool_open_slot_cgroup(h, name, &cg, &created, err) < 0 ||
	    rg_cgroup_destroy(cg, err) < 0)
		rc = rg_fail_context(err, "removing slot %u's cgroup", index);
	if (rg_ns_remove(ns_dir, name, err) < 0)
		rc = rg_fail_context(err, "removing slot %u's namespaces",
				     index);
	snprintf(file, sizeof(file), "%s.lock", name);
	unlinkat(dir_fd, file, 0);
	snprintf(file, sizeof(file), "%s.sock", name);
	unlinkat(dir_fd, file, 0);
	return rc;
}

static int remove_cgroup_parent(const struct pool_header *h)
{
	struct rg_cgroup *cg = NULL;
	struct rg_error ignored;
	const char *slash = strrchr(h->cgroup_path, '/');
	char parent[256];

	/* the pool-XXXXXXXX level itself, opened from its own parent */
	if (!slash)
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - h->cgroup_path),
		 h->cgroup_path);
	/* its parent is the admin's (cgroup-parent): left as it is */
	if (rg_cgroup_open(parent, slash + 1, h->flags & RG_POOL_HAS_CPUSET,
			   false, &cg, &ignored) < 0)
		return -1;
	return rg_cgroup_destroy(cg, &ignored);
}

static void remove_prewarm_stamps(int dir_fd)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "prewarm-", 8))
			unlinkat(dir_fd, e->d_name, 0);
	closedir(d);
}

/* The slot locks a destroy holds: fd[0 .. n) are -1 or open. */
struct slot_locks {
	int *fd;
	unsigned int n;
};

/* For _cleanup_: release the slots and free the array. */
static void release_slot_locks(struct slot_locks *locks)
{
	for (unsigned int i = 0; i < locks->n; i++)
		rg_close_fd(&locks->fd[i]);
	free(locks->fd);
}

static int destroy_locked(int dir_fd, const struct pool_header *h,
			  enum held_slot how, int64_t deadline_ms,
			  struct rg_error *err)
{
	_cleanup_(release_slot_locks) struct slot_locks locks = { 0 };
	char ns_dir[PATH_MAX], dynmods[PATH_MAX + 16];
	int rc = 0;

	locks.fd = calloc(h->size + 1, sizeof(*locks.fd));
	if (!locks.fd)
		return rg_fail(err, errno, "allocating");
	for (unsigned int i = 0; i < h->size; i++)
		locks.fd[i] = -1;
	locks.n = h->size;
	if (lock_all_slots(dir_fd, h, locks.fd, how, deadline_ms, err) < 0 ||
	    rg_pool_ns_dir(dir_fd, ns_dir, sizeof(ns_dir), err) < 0)
		return -1;
	/* the header goes first: a run arriving now re-creates the pool */
	unlinkat(dir_fd, "pool.state", 0);
	for (unsigned int i = 0; i < h->size; i++) {
		if (destroy_slot(dir_fd, ns_dir, h, i, err) < 0)
			rc = -1;
		rg_log_to(rg_admin_log(), RG_LOG_NOTICE,
			  "slot %u removed "
			  "(%u of %u)",
			  i, i + 1, h->size);
	}
	remove_cgroup_parent(h);
	snprintf(dynmods, sizeof(dynmods), "%s/" RG_POOL_DYNMODS_DIR, ns_dir);
	if (umount2(dynmods, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 ||
	    errno == EINVAL || errno == ENOENT)
		rmdir(dynmods);
	if (umount2(ns_dir, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 &&
	    errno != EINVAL && errno != ENOENT && rc == 0)
		rc = rg_fail(err, errno, "unmounting `%s'", ns_dir);
	unlinkat(dir_fd, "ns/.ns-prepare.lock", 0);
	rmdir(ns_dir);
	unlinkat(dir_fd, "slots.table", 0);
	unlinkat(dir_fd, RG_POOL_MOUNT_TABLE, 0);
	remove_prewarm_stamps(dir_fd);
	return rc;
}

/* Highest slot-K.lock + 1: the size of a pool whose header is missing. */
static unsigned int count_slot_locks(int dir_fd)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	unsigned int n = 0, k;
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "slot-%u.lock", &k) == 1 &&
		    k < RG_POOL_SIZE_MAX && k + 1 > n)
			n = k + 1;
	closedir(d);
	return n;
}

/*
 * A creation that died before writing the header: rebuild what it would
 * have written, so that destroy can remove the parts it made.
 */
static int guess_header(int dir_fd, const char *dir, struct pool_header *h,
			struct rg_error *err)
{
	struct rg_pool_options o = { .dir = dir };
	enum rg_cgroup_mode mode;

	memset(h, 0, sizeof(*h));
	/* at least slot 0, which rg_pool_probe_cpuset() opens (and so may create) */
	h->size = count_slot_locks(dir_fd);
	if (h->size == 0)
		h->size = 1;
	if (rg_cgroup_detect(&mode, err) < 0)
		return -1;
	h->cgroup_version = mode == RG_CGROUP_V2 ? 2 : 1;
	if (rg_pool_cgroup_path(dir, o.cgroup_parent, h->cgroup_path,
				sizeof(h->cgroup_path), err) < 0)
		return -1;
	return rg_pool_probe_cpuset(h, err);
}

static int destroy(const char *dir, enum held_slot how, int64_t deadline_ms,
		   struct rg_error *err)
{
	_cleanup_close_ int dir_fd = -1;
	_cleanup_close_ int lock_fd = -1;
	struct pool_header h;

	if (!dir)
		dir = RG_POOL_DIR_DEFAULT;
	/* nothing there: nothing to do */
	if (rg_pool_open_dir(dir, false, &dir_fd, err) < 0)
		return err->errnum == ENOENT ? 0 : -1;
	lock_fd = openat(dir_fd, "pool.lock",
			 O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX) < 0)
		return rg_fail(err, errno, "locking the pool in `%s'", dir);
	if (rg_pool_read_header(dir_fd, &h) < 0 &&
	    guess_header(dir_fd, dir, &h, err) < 0)
		return -1;
	rg_log_to(rg_admin_log(), RG_LOG_NOTICE,
		  "destroying the pool in "
		  "`%s': %u slots",
		  dir, h.size);
	if (destroy_locked(dir_fd, &h, how, deadline_ms, err) < 0)
		return -1;
	unlinkat(dir_fd, "pool.lock", 0);
	/* only if empty: it may hold other things (open fds do not count) */
	rmdir(dir);
	return 0;
}

int rg_pool_destroy(const char *dir, bool force, struct rg_error *err)
{
	return destroy(dir, force ? HELD_END_RUN : HELD_REFUSE, -1, err);
}

int rg_pool_destroy_when_idle(const char *dir, int timeout_ms,
			      struct rg_error *err)
{
	struct timespec now;
	int64_t deadline_ms = -1;

	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		deadline_ms = (int64_t)now.tv_sec * 1000 +
			      now.tv_nsec / 1000000 + timeout_ms;
	}
	return destroy(dir, HELD_WAIT, deadline_ms, err);
}
