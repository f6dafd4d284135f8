/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pool's namespace directory: a private mount point that the slots'
 * nsfs bind mounts live in (rg_ns_prepare_dir).
 */
#include "ns/ns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "ns/kinds.h"

#define PREPARE_LOCK ".ns-prepare.lock"

/* ---- the pool directory ---- */

static int mkdir_p(const char *dir, struct rg_error *err)
{
	char buf[PATH_MAX];
	struct stat st;
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return rg_fail(err, ENAMETOOLONG, "%s", dir);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return rg_fail(err, errno, "creating %s", buf);
		*p = '/';
	}
	/*
	 * root's alone: the slots' mqueue mounts below it are mode 1777 (the
	 * kernel's), and a local user planted a queue there for a run
	 */
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return rg_fail(err, errno, "creating %s", buf);
	if (stat(buf, &st) < 0)
		return rg_fail(err, errno, "stat %s", buf);
	if (!S_ISDIR(st.st_mode))
		return rg_fail(err, ENOTDIR, "%s", buf);
	return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

struct mount_entry {
	int id;
	int parent;
	bool private;
};

/*
 * Parse one mountinfo line ("id parent maj:min root mountpoint opts
 * [optional fields] - fstype ..."). Returns 1 if it is a mount on path.
 */
static int parse_mountinfo(char *line, const char *path, struct mount_entry *m)
{
	char *save = NULL, *tok;
	int i;

	m->private = true;
	for (i = 0, tok = strtok_r(line, " \n", &save); tok;
	     i++, tok = strtok_r(NULL, " \n", &save)) {
		if (i == 0) {
			m->id = atoi(tok);
		} else if (i == 1) {
			m->parent = atoi(tok);
		} else if (i == 4) {
			unescape(tok);
			if (strcmp(tok, path))
				return 0;
		} else if (i >= 6 && !strcmp(tok, "-")) {
			return 1;
		} else if (i >= 6 && (!strncmp(tok, "shared:", 7) ||
				      !strncmp(tok, "master:", 7))) {
			m->private = false;
		}
	}
	return 0;
}

/*
 * Is the topmost mount on path private? 1 yes, 0 no (or no mount on
 * path). The topmost is the one no other mount on path is stacked on.
 */
static int top_mount_private(const char *path, struct rg_error *err)
{
	struct mount_entry m[MAX_STACKED], cur;
	size_t cap = 0, n = 0, i, j;
	char *line = NULL;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return rg_fail(err, errno, "opening /proc/self/mountinfo");
	while (getline(&line, &cap, f) > 0)
		if (parse_mountinfo(line, path, &cur) && n < MAX_STACKED)
			m[n++] = cur;
	free(line);
	fclose(f);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n && m[j].parent != m[i].id; j++)
			;
		if (j == n)
			return m[i].private;
	}
	return 0;
}

static int lock_dir(const char *dir, struct rg_error *err)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, PREPARE_LOCK) >=
	    (int)sizeof(path))
		return rg_fail(err, ENAMETOOLONG, "%s/%s", dir, PREPARE_LOCK);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return rg_fail(err, errno, "opening %s", path);
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			rg_fail(err, errno, "locking %s", path);
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int make_private_mount(const char *dir, struct rg_error *err)
{
	int ret = top_mount_private(dir, err);

	if (ret)
		return ret < 0 ? -1 : 0;
	/*
	 * A bind of dir onto itself is a mount of our own, whatever dir's
	 * file system is; its propagation can then be changed without
	 * touching anyone else's mount.
	 */
	if (mount(dir, dir, NULL, MS_BIND, NULL) < 0)
		return rg_fail(err, errno, "bind-mounting %s onto itself", dir);
	if (mount(NULL, dir, NULL, MS_PRIVATE, NULL) < 0) {
		rg_fail(err, errno, "making %s a private mount", dir);
		umount2(dir, MNT_DETACH);
		return -1;
	}
	return 0;
}

int rg_ns_prepare_dir(const char *dir, struct rg_error *err)
{
	char real[PATH_MAX];
	int lock, ret;

	if (mkdir_p(dir, err) < 0)
		goto fail;
	/* mountinfo shows canonical paths */
	if (!realpath(dir, real)) {
		rg_fail(err, errno, "resolving %s", dir);
		goto fail;
	}
	lock = lock_dir(real, err);
	if (lock < 0)
		goto fail;
	ret = make_private_mount(real, err);
	close(lock);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	return rg_fail_context(err, "preparing the namespace directory %s",
			       dir);
}
