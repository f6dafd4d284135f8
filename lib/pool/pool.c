/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pool's files and kernel objects: creation (idempotent, under the
 * pool-wide lock, safe after a crash half-way or a reboot), destruction and
 * the read-only view for administrators. The per-run path is in lease.c.
 */
#include "pool/pool.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "cgroup/cgroup.h"
#include "pool/keeper.h"
#include "ns/ns.h"
#include "rg-build-config.h"
#define DYNMODS_DIR "dynmods"
#define MOUNT_TABLE "cgroup.mounts"
#define DYNMODS_OPTIONS "none,name=runguard_dynmods,favordynmods"

void rg_pool_slot_name(unsigned int index, char *buf, size_t len)
{
	snprintf(buf, len, "slot-%u", index);
}

/* The pool directory, walked and checked as trusted_path.c says. */
static int open_trusted(const char *dir, bool create, int *dir_fd,
			struct rg_error *err)
{
	return rg_trusted_dir_open(dir, "pool directory", create, dir_fd, err);
}

/*
 * What runguard keeps in the pool directory and trusts (prewarm stamps and
 * slot locks aside: only flocked, opened with O_NOFOLLOW | O_NONBLOCK);
 * the temporaries of write_file_atomic are checked when found.
 */
static const char *const pool_files[] = {
	"pool.lock", "pool.state", "slots.table", "cgroup.mounts",
};

/*
 * ns/ holds the slots' mqueue mounts, whose root the kernel makes mode
 * 1777: only root may reach them. A pool made before that rule had ns/
 * at 0755; ours and writable by nobody else (rg_pool_check_file), it is closed
 * here rather than refused, so that the pool need not be made again.
 */
static int close_ns_dir(int dir_fd, const char *dir, struct rg_error *err)
{
	struct stat st;

	if (fstatat(dir_fd, "ns", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !(st.st_mode & (S_IRWXG | S_IRWXO)))
		return 0;
	if (fchmodat(dir_fd, "ns", 0700, 0) < 0)
		return rg_fail(err, errno, "chmod 0700 `%s/ns'", dir);
	return 0;
}

static int check_entries(int dir_fd, const char *dir, struct rg_error *err)
{
	for (size_t i = 0; i < sizeof(pool_files) / sizeof(*pool_files); i++)
		if (rg_pool_check_file(dir_fd, dir, pool_files[i], S_IFREG,
				       err) < 0)
			return -1;
	if (rg_pool_check_file(dir_fd, dir, "ns", S_IFDIR, err) < 0)
		return -1;
	return close_ns_dir(dir_fd, dir, err);
}

int rg_pool_open_dir(const char *dir, bool create, int *dir_fd,
		     struct rg_error *err)
{
	if (open_trusted(dir, create, dir_fd, err) < 0)
		return -1;
	if (check_entries(*dir_fd, dir, err) < 0) {
		rg_close_fd(dir_fd);
		return -1;
	}
	return 0;
}

int rg_pool_reopen_dir(const char *dir, int *dir_fd, struct rg_error *err)
{
	struct stat st;

	/* removed (a destroy): a new one, if someone made it, or ours */
	if (fstat(*dir_fd, &st) == 0 && st.st_nlink > 0)
		return 0;
	rg_close_fd(dir_fd);
	return rg_pool_open_dir(dir, true, dir_fd, err);
}

/* The path of dir_fd, as walked; the length, or -1. */
static ssize_t fd_path(int dir_fd, char *buf, size_t len, struct rg_error *err)
{
	char proc[32];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dir_fd);
	n = readlink(proc, buf, len);
	if (n < 0)
		return rg_fail(err, errno, "reading %s", proc);
	if ((size_t)n >= len)
		return rg_fail(err, ENAMETOOLONG, "pool directory path");
	buf[n] = '\0';
	return n;
}

/* Mounts go by path: the one walked and checked. */
int rg_pool_ns_dir(int dir_fd, char *buf, size_t len, struct rg_error *err)
{
	ssize_t n = fd_path(dir_fd, buf, len, err);

	if (n < 0)
		return -1;
	if ((size_t)n + sizeof("/ns") > len)
		return rg_fail(err, ENAMETOOLONG, "pool directory path");
	memcpy(buf + n, "/ns", sizeof("/ns"));
	return 0;
}

/* A temporary left by a crash may go; anything else there is refused. */
static int remove_stale(int dir_fd, const char *name, struct rg_error *err)
{
	char dir[PATH_MAX];

	if (fd_path(dir_fd, dir, sizeof(dir), err) < 0 ||
	    rg_pool_check_file(dir_fd, dir, name, S_IFREG, err) < 0)
		return -1;
	if (unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
		return rg_fail(err, errno, "removing %s/%s", dir, name);
	return 0;
}

/* 0 when dir_fd holds a complete header, -1 otherwise. */
int rg_pool_read_header(int dir_fd, struct pool_header *h)
{
	int fd = openat(dir_fd, "pool.state",
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, h, sizeof(*h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(*h) ||
	    memcmp(h->magic, RG_POOL_MAGIC, sizeof(h->magic)) ||
	    h->size == 0 || h->size > RG_POOL_SIZE_MAX ||
	    memchr(h->cgroup_path, '\0', sizeof(h->cgroup_path)) == NULL)
		return -1;
	return 0;
}

/*
 * Written to a temporary file and renamed: readers see all or nothing. The
 * temporary is made new (O_EXCL), never opened through a link: one left
 * by a crash is removed first.
 */
static int write_file_atomic(int dir_fd, const char *name, const void *buf,
			     size_t len, struct rg_error *err)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	char tmp[64];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", name);
	fd = openat(dir_fd, tmp, flags, 0644);
	if (fd < 0 && errno == EEXIST) {
		if (remove_stale(dir_fd, tmp, err) < 0)
			return -1;
		fd = openat(dir_fd, tmp, flags, 0644);
	}
	if (fd < 0)
		return rg_fail(err, errno, "creating %s", tmp);
	if (write(fd, buf, len) != (ssize_t)len) {
		int e = errno ? errno : EIO;

		close(fd);
		return rg_fail(err, e, "writing %s", name);
	}
	close(fd);
	if (renameat(dir_fd, tmp, dir_fd, name) < 0)
		return rg_fail(err, errno, "renaming %s", name);
	return 0;
}

static int write_header(int dir_fd, const struct pool_header *h,
			struct rg_error *err)
{
	return write_file_atomic(dir_fd, "pool.state", h, sizeof(*h), err);
}

/*
 * The cgroup mounts found when the pool was made, so that a run need not
 * search for them (libcgroup's search costs about a millisecond).
 */
static int save_mount_table(int dir_fd, struct rg_error *err)
{
	char table[4096];

	if (rg_cgroup_mount_table(table, sizeof(table), err) < 0)
		return -1;
	return write_file_atomic(dir_fd, MOUNT_TABLE, table, strlen(table),
				 err);
}

void rg_pool_use_mount_table(int dir_fd, const struct pool_header *h)
{
	char table[4096];
	ssize_t n;
	int fd;

	if (h->cgroup_version != 1)
		return;
	fd = openat(dir_fd, MOUNT_TABLE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, table, sizeof(table) - 1);
	close(fd);
	if (n <= 0)
		return;
	table[n] = '\0';
	/* a table that no longer holds is ignored: the mounts are searched */
	rg_cgroup_use_mount_table(table, h->cgroup_path);
}

int rg_pool_read_record(int dir_fd, unsigned int index,
			struct slot_record *rec)
{
	int fd = openat(dir_fd, "slots.table",
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	memset(rec, 0, sizeof(*rec));
	if (fd < 0)
		return -1;
	n = pread(fd, rec, sizeof(*rec), (off_t)index * sizeof(*rec));
	close(fd);
	if (n != (ssize_t)sizeof(*rec) || rec->magic != RG_SLOT_MAGIC) {
		memset(rec, 0, sizeof(*rec));
		return -1;
	}
	rec->cpuset[sizeof(rec->cpuset) - 1] = '\0';
	return 0;
}

int rg_pool_write_record(int dir_fd, unsigned int index,
			 const struct slot_record *rec, struct rg_error *err)
{
	int fd = openat(dir_fd, "slots.table",
			O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return rg_fail(err, errno, "opening slots.table");
	n = pwrite(fd, rec, sizeof(*rec), (off_t)index * sizeof(*rec));
	close(fd);
	if (n != (ssize_t)sizeof(*rec))
		return rg_fail(err, n < 0 ? errno : EIO,
			       "writing slot %u's record", index);
	return 0;
}

/* FNV-1a: stable short names (the pool's cgroup, prewarm stamps). */
uint32_t rg_pool_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

int rg_pool_cgroup_path(const char *dir, const char *parent, char *buf,
			size_t len, struct rg_error *err)
{
	char *real = realpath(dir, NULL);
	int n;

	if (!real)
		return rg_fail(err, errno, "pool directory `%s'", dir);
	n = snprintf(buf, len, "%s/pool-%08x", parent ? parent :
		     RG_CGROUP_PARENT, rg_pool_hash(real));
	free(real);
	if (n < 0 || (size_t)n >= len)
		return rg_fail(err, ENAMETOOLONG, "cgroup parent too long");
	return 0;
}

int rg_pool_open_slot_cgroup(const struct pool_header *h, const char *name,
			     struct rg_cgroup **cg, bool *created,
			     struct rg_error *err)
{
	if (rg_cgroup_open(h->cgroup_path, name,
			   h->flags & RG_POOL_HAS_CPUSET, true, cg, err) < 0)
		return -1;
	*created = rg_cgroup_fresh(*cg);
	return 0;
}

/* The first slot tells whether slot cgroups can include a cpuset. */
static int probe_cpuset(struct pool_header *h, struct rg_error *err)
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

	if ((size_t)snprintf(path, sizeof(path), "%s/" DYNMODS_DIR, ns_dir) >=
	    sizeof(path))
		return false;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return false;
	if (mount("runguard_dynmods", path, "cgroup", MS_NOSUID | MS_NODEV |
		  MS_NOEXEC, DYNMODS_OPTIONS) == 0)
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
		rg_log_to(log, RG_LOG_NOTICE, "creating the pool in `%s': %u "
			  "slots, cgroup v%u, under %s", dir, size,
			  h->cgroup_version, h->cgroup_path);
	else
		rg_log_to(log, RG_LOG_NOTICE, "growing the pool in `%s' from "
			  "%u to %u slots", dir, first, size);
}

static int create_locked(int dir_fd, const char *dir,
			 const struct rg_pool_options *o,
			 const struct rg_log_sink *log,
			 struct pool_header *h, struct rg_error *err)
{
	enum rg_cgroup_mode mode;
	struct pool_header old;
	char ns_dir[PATH_MAX];
	unsigned int first = 0;
	int fd;

	/* refused before anything is made, not when the header is written */
	if (rg_pool_check_file(dir_fd, dir, "pool.state.new", S_IFREG,
			       err) < 0 ||
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
		if (probe_cpuset(h, err) < 0)
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
		rg_log_to(log, RG_LOG_NOTICE, "mounted the favordynmods "
			  "hierarchy");
	}
	for (unsigned int i = first; i < o->size; i++) {
		if (create_slot(dir_fd, ns_dir, h, i, err) < 0)
			return -1;
		rg_log_to(log, RG_LOG_NOTICE, "slot %u made: cgroup and "
			  "namespaces (%u of %u)", i, i + 1, o->size);
	}
	h->size = o->size;
	if (save_mount_table(dir_fd, err) < 0 ||
	    write_header(dir_fd, h, err) < 0)
		return -1;
	rg_log_to(log, RG_LOG_NOTICE, "the pool in `%s' is ready", dir);
	return 0;
}

/*
 * A header of at least o->size slots in *h, creating what is missing under
 * the exclusive pool lock. The caller must not hold the pool lock (flock
 * locks of two open files of one process conflict).
 */
int rg_pool_ensure(int dir_fd, const char *dir,
		   const struct rg_pool_options *o,
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
	if (rg_abi_check(options, RG_SIZE_THROUGH(struct rg_pool_options,
						  keepers),
			 "rg_pool_options", err) < 0)
		return -1;
	rg_abi_copy_in(own, sizeof(*own), options);
	if (!own->dir)
		own->dir = RG_POOL_DIR_DEFAULT;
	return 0;
}

int rg_pool_create(const struct rg_pool_options *options,
		   struct rg_error *err)
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
static enum rg_pool_slot_state slot_state(int dir_fd, unsigned int index,
					  const struct slot_record *rec)
{
	char lock[32];
	int fd;

	snprintf(lock, sizeof(lock), "slot-%u.lock", index);
	fd = openat(dir_fd, lock,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 &&
	    errno == EWOULDBLOCK) {
		close(fd);
		return RG_POOL_SLOT_HELD;
	}
	rg_close_fd(&fd);
	return rec->state == SLOT_IN_USE ? RG_POOL_SLOT_DIRTY :
					   RG_POOL_SLOT_FREE;
}

static void fill_slot_info(int dir_fd, unsigned int index,
			   struct rg_pool_slot_info *s)
{
	struct slot_record rec;

	memset(s, 0, sizeof(*s));
	s->struct_size = sizeof(*s);
	s->index = index;
	rg_pool_read_record(dir_fd, index, &rec);
	s->state = slot_state(dir_fd, index, &rec);
	s->holder = s->state == RG_POOL_SLOT_FREE ? 0 : rec.holder;
	s->runs = rec.runs;
	s->last_reset = rec.last_reset;
	s->settings_known = rec.flags & SLOT_SETTINGS_KNOWN;
	s->memory_limit = rec.memory_limit;
	snprintf(s->cpuset, sizeof(s->cpuset), "%s", rec.cpuset);
}

int rg_pool_slot_keeper(const char *dir, unsigned int index, pid_t *pid,
			struct rg_error *err)
{
	char name[32];
	int dir_fd;

	if (rg_pool_open_dir(dir ? dir : RG_POOL_DIR_DEFAULT, false, &dir_fd,
			     err) < 0)
		return -1;
	rg_pool_slot_name(index, name, sizeof(name));
	*pid = rg_keeper_probe(dir_fd, name);
	close(dir_fd);
	return 0;
}

static void fill_pool_info(const struct pool_header *h,
			   struct rg_pool_info *info)
{
	struct rg_pool_info own = { .struct_size = sizeof(own) };

	own.size = h->size;
	own.cgroup_version = (int)h->cgroup_version;
	snprintf(own.cgroup_path, sizeof(own.cgroup_path), "%s",
		 h->cgroup_path);
	own.favordynmods = h->flags & RG_POOL_FAVORDYNMODS;
	own.created = h->created;
	rg_abi_copy_out(info, &own, sizeof(own));
}

/* The caller's array: elements of slot_size bytes, as far as it knows. */
static int fill_slots(int dir_fd, unsigned int count, size_t slot_size,
		      struct rg_pool_slot_info **slots, struct rg_error *err)
{
	char *array = calloc(count, slot_size);

	if (!array)
		return rg_fail(err, errno, "allocating the pool view");
	for (unsigned int i = 0; i < count; i++) {
		struct rg_pool_slot_info own;
		void *element = array + (size_t)i * slot_size;

		fill_slot_info(dir_fd, i, &own);
		memcpy(element, &slot_size, sizeof(slot_size));
		rg_abi_copy_out(element, &own, sizeof(own));
	}
	*slots = (struct rg_pool_slot_info *)(void *)array;
	return 0;
}

int rg_pool_show(const char *dir, struct rg_pool_info *info,
		 struct rg_pool_slot_info **slots, size_t slot_size,
		 struct rg_error *err)
{
	struct pool_header h;
	int dir_fd, rc;

	*slots = NULL;
	if (rg_abi_check(info, RG_SIZE_THROUGH(struct rg_pool_info, created),
			 "rg_pool_info", err) < 0)
		return -1;
	if (slot_size < RG_SIZE_THROUGH(struct rg_pool_slot_info, cpuset))
		return rg_fail(err, EINVAL, "slot_size %zu is too small: pass "
			       "sizeof(struct rg_pool_slot_info)", slot_size);
	if (!dir)
		dir = RG_POOL_DIR_DEFAULT;
	if (rg_pool_open_dir(dir, false, &dir_fd, err) < 0)
		return -1;
	if (rg_pool_read_header(dir_fd, &h) < 0) {
		close(dir_fd);
		return rg_fail(err, ENOENT, "no pool in `%s'", dir);
	}
	fill_pool_info(&h, info);
	rc = fill_slots(dir_fd, h.size, slot_size, slots, err);
	close(dir_fd);
	return rc;
}

/* What a destroy does about a slot a run holds. */
enum held_slot {
	HELD_REFUSE,	/* fail, leaving the pool as it is */
	HELD_END_RUN,	/* SIGTERM its runguard, then wait (force) */
	HELD_WAIT,	/* wait for the run to end by itself */
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

/* lock_fd's flock, waited for until deadline_ms on CLOCK_MONOTONIC (<0: forever). */
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
static int lock_all_slots(int dir_fd, const struct pool_header *h,
			  int *locks, enum held_slot how, int64_t deadline_ms,
			  struct rg_error *err)
{
	for (unsigned int i = 0; i < h->size; i++) {
		struct slot_record rec;
		char lock[32];

		snprintf(lock, sizeof(lock), "slot-%u.lock", i);
		locks[i] = openat(dir_fd, lock, O_RDONLY | O_NOFOLLOW |
				  O_NONBLOCK | O_CLOEXEC);
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
			return rg_fail(err, EBUSY, "slot %u is held by pid %d "
				       "(use force to end its run, or wait)",
				       i, (int)rec.holder);
		if (how == HELD_WAIT) {
			rg_log_to(rg_admin_log(), RG_LOG_NOTICE, "slot %u: "
				  "waiting for the run of pid %d", i,
				  (int)rec.holder);
			if (wait_for_slot(locks[i], deadline_ms) < 0)
				return rg_fail(err, errno, "slot %u is still "
					       "held by pid %d: the pool is "
					       "left as it was", i,
					       (int)rec.holder);
			continue;
		}
		/* its runguard writes the meta file and releases the slot */
		rg_log_to(rg_admin_log(), RG_LOG_NOTICE, "slot %u: ending the "
			  "run of pid %d", i, (int)rec.holder);
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
	snprintf(parent, sizeof(parent), "%.*s",
		 (int)(slash - h->cgroup_path), h->cgroup_path);
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
		rg_log_to(rg_admin_log(), RG_LOG_NOTICE, "slot %u removed "
			  "(%u of %u)", i, i + 1, h->size);
	}
	remove_cgroup_parent(h);
	snprintf(dynmods, sizeof(dynmods), "%s/" DYNMODS_DIR, ns_dir);
	if (umount2(dynmods, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 ||
	    errno == EINVAL ||
	    errno == ENOENT)
		rmdir(dynmods);
	if (umount2(ns_dir, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 &&
	    errno != EINVAL &&
	    errno != ENOENT && rc == 0)
		rc = rg_fail(err, errno, "unmounting `%s'", ns_dir);
	unlinkat(dir_fd, "ns/.ns-prepare.lock", 0);
	rmdir(ns_dir);
	unlinkat(dir_fd, "slots.table", 0);
	unlinkat(dir_fd, MOUNT_TABLE, 0);
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
	/* at least slot 0, which probe_cpuset() opens (and so may create) */
	h->size = count_slot_locks(dir_fd);
	if (h->size == 0)
		h->size = 1;
	if (rg_cgroup_detect(&mode, err) < 0)
		return -1;
	h->cgroup_version = mode == RG_CGROUP_V2 ? 2 : 1;
	if (rg_pool_cgroup_path(dir, o.cgroup_parent, h->cgroup_path,
				sizeof(h->cgroup_path), err) < 0)
		return -1;
	return probe_cpuset(h, err);
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
	rg_log_to(rg_admin_log(), RG_LOG_NOTICE, "destroying the pool in "
		  "`%s': %u slots", dir, h.size);
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
