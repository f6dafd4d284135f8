/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Creating a pool: idempotent, under the pool-wide lock, safe after a crash
 * half-way or a reboot (rg_pool_create, rg_pool_ensure).
 */
#include "pool/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "cgroup/cgroup.h"
#include "ns/ns.h"
#include "pool/keeper.h"
#include "rg-build-config.h"

#define DYNMODS_OPTIONS "none,name=runguard_dynmods,favordynmods"

/* The first slot tells whether slot cgroups can include a cpuset. */
int rg_pool_probe_cpuset(struct pool_header *h, struct rg_error *err)
{
	struct rg_cgroup *cg = NULL;
	struct rg_error ignored;
	char name[24];

	rg_pool_slot_name(0, name, sizeof(name));
	h->flags |= RG_POOL_HAS_CPUSET;
	if (rg_cgroup_open(h->cgroup_path, name, true, true, &cg, &ignored) ==
	    0) {
		rg_cgroup_close(cg);
		return 0;
	}
	h->flags &= ~RG_POOL_HAS_CPUSET;
	if (rg_cgroup_open(h->cgroup_path, name, false, true, &cg, err) < 0)
		return -1;
	rg_cgroup_close(cg);
	return 0;
}

/*
 * cgroup v1: moving a task waits for an RCU grace period when no other
 * move happened recently (5-7 ms, kernel-notes). A hierarchy mounted with
 * favordynmods keeps the kernel's threadgroup lock in the mode that needs
 * no grace period (6.18+: per-threadgroup locking, irreversible until
 * reboot). A kernel without the option refuses the mount: then runs pay
 * the grace period.
 */
static bool mount_dynmods(const char *ns_dir)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/" RG_POOL_DYNMODS_DIR,
			     ns_dir) >= sizeof(path))
		return false;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return false;
	if (mount("runguard_dynmods", path, "cgroup",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC, DYNMODS_OPTIONS) == 0)
		return true;
	/* already mounted by an earlier, half-finished creation */
	return errno == EBUSY;
}

static int create_slot(int dir_fd, const char *ns_dir,
		       const struct pool_header *h, unsigned int index,
		       struct rg_error *err)
{
	struct slot_record rec;
	struct rg_cgroup *cg = NULL;
	int fds[RG_NS_COUNT];
	bool created;
	char name[24], lock[32];
	int fd;

	rg_pool_slot_name(index, name, sizeof(name));
	snprintf(lock, sizeof(lock), "%s.lock", name);
	fd = openat(dir_fd, lock, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return rg_fail(err, errno, "creating %s", lock);
	close(fd);
	if (rg_pool_open_slot_cgroup(h, name, &cg, &created, err) < 0)
		return rg_fail_context(err, "slot %u", index);
	rg_cgroup_close(cg);
	/* a slot that a run holds (extending the pool) keeps its ns */
	if (rg_ns_open(ns_dir, name, fds, err) == 0)
		rg_ns_close(fds);
	else if (rg_ns_remove(ns_dir, name, err) < 0 ||
		 rg_ns_create(ns_dir, name, err) < 0) {
		return rg_fail_context(err, "slot %u", index);
	}
	if (rg_pool_read_record(dir_fd, index, &rec) == 0)
		return 0;
	/* unknown settings: the first holder writes them all */
	rec.magic = RG_SLOT_MAGIC;
	rec.state = SLOT_CLEAN;
	return rg_pool_write_record(dir_fd, index, &rec, err);
}

static void say_creating(const struct rg_log_sink *log, const char *dir,
			 const struct pool_header *h, unsigned int first,
			 unsigned int size)
{
	if (first == 0)
		rg_log_to(log, RG_LOG_NOTICE,
			  "creating the pool in `%s': %u "
			  "slots, cgroup v%u, under %s",
			  dir, size, h->cgroup_version, h->cgroup_path);
	else
		rg_log_to(log, RG_LOG_NOTICE,
			  "growing the pool in `%s' from "
			  "%u to %u slots",
			  dir, first, size);
}

static int create_locked(int dir_fd, const char *dir,
			 const struct rg_pool_options *o,
			 const struct rg_log_sink *log, struct pool_header *h,
			 struct rg_error *err)
{
	enum rg_cgroup_mode mode;
	struct pool_header old;
	char ns_dir[PATH_MAX];
	unsigned int first = 0;
	int fd;

	/* refused before anything is made, not when the header is written */
	if (rg_pool_check_file(dir_fd, dir, "pool.state.new", S_IFREG, err) < 0 ||
	    rg_pool_check_file(dir_fd, dir, "cgroup.mounts.new", S_IFREG,
			       err) < 0)
		return -1;
	if (rg_pool_read_header(dir_fd, &old) == 0) {
		if (old.size >= o->size) {
			*h = old;
			return 0;
		}
		*h = old;
		first = old.size;
	} else {
		memset(h, 0, sizeof(*h));
		memcpy(h->magic, RG_POOL_MAGIC, sizeof(h->magic));
		h->created = time(NULL);
		if (rg_cgroup_detect(&mode, err) < 0)
			return -1;
		h->cgroup_version = mode == RG_CGROUP_V2 ? 2 : 1;
		if (rg_pool_cgroup_path(dir, o->cgroup_parent, h->cgroup_path,
					sizeof(h->cgroup_path), err) < 0)
			return -1;
		if (rg_pool_probe_cpuset(h, err) < 0)
			return -1;
	}
	fd = openat(dir_fd, "slots.table",
		    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return rg_fail(err, errno, "creating slots.table");
	close(fd);
	if (rg_pool_ns_dir(dir_fd, ns_dir, sizeof(ns_dir), err) < 0 ||
	    rg_ns_prepare_dir(ns_dir, err) < 0)
		return -1;
	say_creating(log, dir, h, first, o->size);
	if (h->cgroup_version == 1 && o->favordynmods && mount_dynmods(ns_dir)) {
		h->flags |= RG_POOL_FAVORDYNMODS;
		rg_log_to(log, RG_LOG_NOTICE,
			  "mounted the favordynmods "
			  "hierarchy");
	}
	for (unsigned int i = first; i < o->size; i++) {
		if (create_slot(dir_fd, ns_dir, h, i, err) < 0)
			return -1;
		rg_log_to(log, RG_LOG_NOTICE,
			  "slot %u made: cgroup and "
			  "namespaces (%u of %u)",
			  i, i + 1, o->size);
	}
	h->size = o->size;
	if (rg_pool_save_mount_table(dir_fd, err) < 0 ||
	    rg_pool_write_header(dir_fd, h, err) < 0)
		return -1;
	rg_log_to(log, RG_LOG_NOTICE, "the pool in `%s' is ready", dir);
	return 0;
}

/*
 * A header of at least o->size slots in *h, creating what is missing under
 * the exclusive pool lock. The caller must not hold the pool lock (flock
 * locks of two open files of one process conflict).
 */
int rg_pool_ensure(int dir_fd, const char *dir, const struct rg_pool_options *o,
		   const struct rg_log_sink *log, struct pool_header *h,
		   struct rg_error *err)
{
	int lock_fd;
	int rc;

	if (rg_pool_read_header(dir_fd, h) == 0 && h->size >= o->size)
		return 0;
	lock_fd = openat(dir_fd, "pool.lock",
			 O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		return rg_fail(err, errno, "opening pool.lock");
	if (flock(lock_fd, LOCK_EX) < 0) {
		close(lock_fd);
		return rg_fail(err, errno, "locking the pool");
	}
	rc = create_locked(dir_fd, dir, o, log, h, err);
	close(lock_fd);
	if (rc < 0)
		return rg_fail_context(err, "creating the pool in `%s'", dir);
	return 0;
}

int rg_pool_options_in(struct rg_pool_options *own,
		       const struct rg_pool_options *options,
		       struct rg_error *err)
{
	if (!options)
		return rg_fail(err, EINVAL, "no pool options");
	if (rg_abi_check(options,
			 RG_SIZE_THROUGH(struct rg_pool_options, keepers),
			 "rg_pool_options", err) < 0)
		return -1;
	rg_abi_copy_in(own, sizeof(*own), options);
	if (!own->dir)
		own->dir = RG_POOL_DIR_DEFAULT;
	return 0;
}

int rg_pool_create(const struct rg_pool_options *options, struct rg_error *err)
{
	struct rg_pool_options o;
	struct pool_header h;
	int dir_fd, rc;

	if (rg_pool_options_in(&o, options, err) < 0)
		return -1;
	if (!o.dir)
		o.dir = RG_POOL_DIR_DEFAULT;
	if (o.size == 0 || o.size > RG_POOL_SIZE_MAX)
		return rg_fail(err, EINVAL, "pool size must be 1 to %d",
			       RG_POOL_SIZE_MAX);
	if (rg_pool_open_dir(o.dir, true, &dir_fd, err) < 0)
		return -1;
	rc = rg_pool_ensure(dir_fd, o.dir, &o, rg_admin_log(), &h, err);
	close(dir_fd);
	if (rc == 0 && o.keepers)
		rc = rg_pool_start_keepers(&o, err);
	return rc;
}

/* "free", "held" or "dirty": a held lock is the only proof of life. */
