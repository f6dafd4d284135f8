/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pool directory and its files: opened and trusted, the header and
 * the slot records read and written (atomically), the namespace directory,
 * the v1 mount table, the slots' cgroup paths. What creation, the view,
 * destruction and the lease share.
 */
#include "pool/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "cgroup/cgroup.h"
#include "ns/ns.h"
#include "pool/keeper.h"
#include "rg-build-config.h"

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
	"pool.lock",
	"pool.state",
	"slots.table",
	"cgroup.mounts",
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

int rg_pool_write_header(int dir_fd, const struct pool_header *h,
			 struct rg_error *err)
{
	return write_file_atomic(dir_fd, "pool.state", h, sizeof(*h), err);
}

/*
 * The cgroup mounts found when the pool was made, so that a run need not
 * search for them (libcgroup's search costs about a millisecond).
 */
int rg_pool_save_mount_table(int dir_fd, struct rg_error *err)
{
	char table[4096];

	if (rg_cgroup_mount_table(table, sizeof(table), err) < 0)
		return -1;
	return write_file_atomic(dir_fd, RG_POOL_MOUNT_TABLE, table,
				 strlen(table), err);
}

void rg_pool_use_mount_table(int dir_fd, const struct pool_header *h)
{
	char table[4096];
	ssize_t n;
	int fd;

	if (h->cgroup_version != 1)
		return;
	fd = openat(dir_fd, RG_POOL_MOUNT_TABLE,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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

int rg_pool_open_table(int dir_fd)
{
	return openat(dir_fd, "slots.table", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
}

int rg_pool_read_record_at(int table_fd, unsigned int index,
			   struct slot_record *rec)
{
	ssize_t n;

	memset(rec, 0, sizeof(*rec));
	if (table_fd < 0)
		return -1;
	n = pread(table_fd, rec, sizeof(*rec), (off_t)index * sizeof(*rec));
	if (n != (ssize_t)sizeof(*rec) || rec->magic != RG_SLOT_MAGIC) {
		memset(rec, 0, sizeof(*rec));
		return -1;
	}
	rec->cpuset[sizeof(rec->cpuset) - 1] = '\0';
	return 0;
}

int rg_pool_write_record_at(int table_fd, unsigned int index,
			    const struct slot_record *rec, struct rg_error *err)
{
	ssize_t n = pwrite(table_fd, rec, sizeof(*rec),
			   (off_t)index * sizeof(*rec));

	if (n != (ssize_t)sizeof(*rec))
		return rg_fail(err, n < 0 ? errno : EIO,
			       "writing slot %u's record", index);
	return 0;
}

int rg_pool_read_record(int dir_fd, unsigned int index, struct slot_record *rec)
{
	int fd = openat(dir_fd, "slots.table",
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int rc = rg_pool_read_record_at(fd, index, rec);

	if (fd >= 0)
		close(fd);
	return rc;
}

int rg_pool_write_record(int dir_fd, unsigned int index,
			 const struct slot_record *rec, struct rg_error *err)
{
	int fd = openat(dir_fd, "slots.table",
			O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return rg_fail(err, errno, "opening slots.table");
	rc = rg_pool_write_record_at(fd, index, rec, err);
	close(fd);
	return rc;
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
	n = snprintf(buf, len, "%s/pool-%08x",
		     parent ? parent : RG_CGROUP_PARENT, rg_pool_hash(real));
	free(real);
	if (n < 0 || (size_t)n >= len)
		return rg_fail(err, ENAMETOOLONG, "cgroup parent too long");
	return 0;
}

int rg_pool_open_slot_cgroup(const struct pool_header *h, const char *name,
			     struct rg_cgroup **cg, bool *created,
			     struct rg_error *err)
{
	if (rg_cgroup_open(h->cgroup_path, name, h->flags & RG_POOL_HAS_CPUSET,
			   true, cg, err) < 0)
		return -1;
	*created = rg_cgroup_fresh(*cg);
	return 0;
}
