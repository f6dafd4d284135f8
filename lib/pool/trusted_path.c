/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory root may trust: the pool directory, and the one holding the
 * keeper executable.
 *
 * root writes files in the pool directory and mounts namespaces there. A
 * user who could write to it, or to a directory above it, could put a
 * symbolic link in it (slots.table, pool.state.new, ns) and have root
 * write or mount through it. So the pool directory must be owned by root
 * and writable by nobody else, and so must every directory above it,
 * except that one may be writable by all if it is sticky (/tmp): nobody
 * else can then rename what root owns in it. The directory is walked from
 * / one component at a time, following no symbolic link but root's, and
 * what runguard opens in it is opened with O_NOFOLLOW relative to the
 * walked descriptor, so what was checked is what is used. The keeper
 * executable's directory is walked the same way: a user who could write
 * there could have root exec a program of theirs in every slot.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool/trusted_path.h"
#include "base/base.h"

static const char *const fix_hint =
	"it and the directories above it must be owned by root and writable "
	"by nobody else (chown root, chmod go-w)";

/* A path being walked: what is left of it, and where the walk is. */
struct walk {
	char rest[PATH_MAX]; /* components still to go */
	char done[PATH_MAX]; /* the directory fd is, for messages */
	int fd;
	int links;
	bool create;
	const char *what; /* "pool directory", for messages */
};

static bool owned_by_us(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

static int refuse(const struct walk *w, const char *path,
		  const struct stat *st, struct rg_error *err)
{
	return rg_fail(err, EPERM,
		       "refusing %s: `%s' is owned by uid %u, "
		       "mode %04o: %s",
		       w->what, path, (unsigned)st->st_uid,
		       (unsigned)(st->st_mode & 07777), fix_hint);
}

/*
 * A directory on the way, or (last) the walked directory itself: a sticky
 * directory writable by all is fine on the way only.
 */
static int check_dir(const struct walk *w, const char *path,
		     const struct stat *st, bool last, struct rg_error *err)
{
	if (!S_ISDIR(st->st_mode))
		return rg_fail(err, ENOTDIR, "%s: `%s'", w->what, path);
	if (!owned_by_us(st) || ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
				 (last || !(st->st_mode & S_ISVTX))))
		return refuse(w, path, st, err);
	return 0;
}

static int walk_restart(struct walk *w, struct rg_error *err)
{
	struct stat st;

	rg_close_fd(&w->fd);
	w->done[0] = '\0';
	w->fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->fd < 0 || fstat(w->fd, &st) < 0)
		return rg_fail(err, errno, "opening /");
	return check_dir(w, "/", &st, false, err);
}

/* Take the first component of w->rest into name. */
static bool next_name(struct walk *w, char *name, size_t size)
{
	char *p = w->rest + strspn(w->rest, "/");
	size_t n = strcspn(p, "/");

	if (!n)
		return false;
	snprintf(name, size, "%.*s", (int)n, p);
	memmove(w->rest, p + n, strlen(p + n) + 1);
	return true;
}

/*
 * A symbolic link on the way: followed only when root made it (the
 * directory it is in is checked), bounded as the kernel bounds it.
 */
static int follow(struct walk *w, const char *name, const struct stat *st,
		  const char *path, struct rg_error *err)
{
	char target[PATH_MAX];
	size_t len;
	ssize_t n;

	if (!owned_by_us(st))
		return refuse(w, path, st, err);
	if (++w->links > 40)
		return rg_fail(err, ELOOP, "%s: `%s'", w->what, path);
	n = readlinkat(w->fd, name, target, sizeof(target));
	if (n < 0)
		return rg_fail(err, errno, "reading the link `%s'", path);
	len = strlen(w->rest);
	if ((size_t)n + len + 2 > sizeof(target))
		return rg_fail(err, ENAMETOOLONG, "%s `%s'", w->what, path);
	target[n] = '/';
	memcpy(target + n + 1, w->rest, len + 1);
	memcpy(w->rest, target, sizeof(w->rest));
	return target[0] == '/' ? walk_restart(w, err) : 0;
}

/* One step of the walk: name in the checked directory w->fd. */
static int walk_step(struct walk *w, const char *name, struct rg_error *err)
{
	char path[PATH_MAX];
	struct stat st;
	int next;

	if (snprintf(path, sizeof(path), "%s/%s", w->done, name) >=
	    (int)sizeof(path))
		return rg_fail(err, ENAMETOOLONG, "%s", w->what);
	next = openat(w->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (next < 0 && errno == ENOENT && w->create) {
		if (mkdirat(w->fd, name, 0755) < 0 && errno != EEXIST)
			return rg_fail(err, errno, "creating `%s'", path);
		next = openat(w->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (next < 0)
		return rg_fail(err, errno, "%s: `%s'", w->what, path);
	if (fstat(next, &st) < 0) {
		close(next);
		return rg_fail(err, errno, "stat `%s'", path);
	}
	if (S_ISLNK(st.st_mode)) {
		close(next);
		return follow(w, name, &st, path, err);
	}
	if (check_dir(w, path, &st, false, err) < 0) {
		close(next);
		return -1;
	}
	close(w->fd);
	w->fd = next;
	if (!strcmp(name, ".."))
		*(strrchr(w->done, '/') ?: w->done) = '\0';
	else if (strcmp(name, "."))
		memcpy(w->done, path, sizeof(w->done));
	return 0;
}

/* For _cleanup_: the walk's directory, unless handed over (fd -1). */
static void walk_release(struct walk *w)
{
	rg_close_fd(&w->fd);
}

int rg_trusted_dir_open(const char *dir, const char *what, bool create,
			int *dir_fd, struct rg_error *err)
{
	_cleanup_(walk_release) struct walk w = {
		.fd = -1,
		.create = create,
		.what = what,
	};
	char name[NAME_MAX + 1], cwd[PATH_MAX];
	struct stat st;

	*dir_fd = -1;
	if (dir[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return rg_fail(err, errno, "%s `%s'", what, dir);
	if (snprintf(w.rest, sizeof(w.rest), "%s/%s", dir[0] == '/' ? "" : cwd,
		     dir) >= (int)sizeof(w.rest))
		return rg_fail(err, ENAMETOOLONG, "%s `%s'", what, dir);
	if (walk_restart(&w, err) < 0)
		return -1;
	while (next_name(&w, name, sizeof(name)))
		if (walk_step(&w, name, err) < 0)
			return -1;
	if (fstat(w.fd, &st) < 0)
		return rg_fail(err, errno, "stat `%s'", dir);
	if (check_dir(&w, w.done[0] ? w.done : "/", &st, true, err) < 0)
		return -1;
	*dir_fd = rg_steal_fd(&w.fd);
	return 0;
}
