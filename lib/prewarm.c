/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page cache ownership: a page is charged to the memory cgroup of the task
 * that first brings it in, and reclaim in a tight slot evicts only pages
 * charged to that slot. Files every run shares (the chroot's binaries and
 * libraries, the submission, the test input) are therefore read in here,
 * by runguard itself, outside every slot, before the run.
 */
#include "prewarm.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "pool.h"

/* a chroot's usual code directories */
static const char *const root_dirs[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr/bin",
	"usr/sbin", "usr/lib", "usr/lib32", "usr/lib64", "usr/libexec",
	"usr/local/bin", "usr/local/lib",
};

/* the walk again after this long: the cache may have been evicted */
#define ROOT_PREWARM_INTERVAL_S 600

/* nftw has no user pointer; per thread, for threaded library callers */
static _Thread_local struct rg_prewarm_stats *walk_stats;

/* Start reading the whole file; the pages are charged to us. */
static void warm_fd(int fd, off_t size, struct rg_prewarm_stats *stats)
{
	if (size <= 0)
		return;
	if (posix_fadvise(fd, 0, size, POSIX_FADV_WILLNEED) == 0) {
		stats->files++;
		stats->bytes += (uint64_t)size;
	}
}

static int warm_path(const char *path, const struct stat *st,
		     struct rg_prewarm_stats *stats)
{
	int fd;

	if (!S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	warm_fd(fd, st->st_size, stats);
	close(fd);
	return 0;
}

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F)
		warm_path(path, st, walk_stats); /* unreadable: skip it */
	return 0;
}

static int prewarm_tree(const char *path, struct rg_prewarm_stats *stats,
			bool missing_ok, struct rg_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (missing_ok && errno == ENOENT)
			return 0;
		return rg_fail(err, errno, "cannot prewarm `%s'", path);
	}
	if (!S_ISDIR(st.st_mode)) {
		if (warm_path(path, &st, stats) < 0)
			return rg_fail(err, errno, "cannot prewarm `%s'", path);
		return 0;
	}
	walk_stats = stats;
	if (nftw(path, walk_one, 16, FTW_PHYS | FTW_MOUNT) < 0)
		return rg_fail(err, errno, "cannot prewarm `%s'", path);
	return 0;
}

int rg_pool_prewarm(const char *const paths[], size_t count,
		    struct rg_prewarm_stats *stats, struct rg_error *err)
{
	struct rg_prewarm_stats local = { 0 };

	for (size_t i = 0; i < count; i++)
		if (prewarm_tree(paths[i], &local, false, err) < 0)
			return -1;
	if (stats)
		*stats = local;
	return 0;
}

/*
 * The chroot once per interval per pool: a stamp file per root, locked
 * while one runguard walks, so that 30 judges starting at once walk once.
 */
static void prewarm_root(const char *root, int pool_dir_fd)
{
	struct rg_prewarm_stats stats = { 0 };
	struct rg_error ignored;
	char stamp[32], path[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(stamp, sizeof(stamp), "prewarm-%08x", rg_pool_hash(root));
	if (fstatat(pool_dir_fd, stamp, &st, 0) == 0 &&
	    time(NULL) - st.st_mtime < ROOT_PREWARM_INTERVAL_S)
		return;
	fd = openat(pool_dir_fd, stamp, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		for (size_t i = 0; i < sizeof(root_dirs) / sizeof(*root_dirs);
		     i++) {
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", root,
					     root_dirs[i]) < sizeof(path))
				prewarm_tree(path, &stats, true, &ignored);
		}
		futimens(fd, NULL);
	}
	close(fd);
}

/* The command's file as the child will find it, if it names a path. */
static void prewarm_command(const struct rg_config *cfg)
{
	struct rg_prewarm_stats stats = { 0 };
	char path[PATH_MAX];
	struct stat st;
	int n;

	if (!strchr(cfg->file, '/'))
		return; /* a PATH search: the chroot's bin dirs cover it */
	if (!cfg->root)
		n = snprintf(path, sizeof(path), "%s", cfg->file);
	else if (cfg->file[0] == '/')
		n = snprintf(path, sizeof(path), "%s%s", cfg->root, cfg->file);
	else
		n = snprintf(path, sizeof(path), "%s/%s/%s", cfg->root,
			     cfg->workdir ? cfg->workdir : "", cfg->file);
	if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) < 0)
		return;
	warm_path(path, &st, &stats);
}

void rg_prewarm_for_run(const struct rg_config *cfg, int pool_dir_fd)
{
	struct rg_prewarm_stats stats = { 0 };
	struct stat st;

	if (cfg->root)
		prewarm_root(cfg->root, pool_dir_fd);
	prewarm_command(cfg);
	/* the test input, given as a file or redirected from one */
	if (cfg->input.path) {
		if (stat(cfg->input.path, &st) == 0)
			warm_path(cfg->input.path, &st, &stats);
	} else if (fstat(cfg->input.fd, &st) == 0 && S_ISREG(st.st_mode)) {
		warm_fd(cfg->input.fd, st.st_size, &stats);
	}
}
