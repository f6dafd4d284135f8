/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "run/root.h"
#include "base/base.h"

static int resolve_prefix(const char *path, char *prefix, size_t len,
			  struct rg_error *err)
{
	char *real = realpath(path, NULL);
	size_t n;

	if (!real)
		return rg_fail(err, errno, "invalid chroot prefix `%s'", path);
	n = strlen(real);
	if (n + 2 > len) {
		free(real);
		return rg_fail(err, ENAMETOOLONG, "chroot prefix too long");
	}
	memcpy(prefix, real, n + 1);
	free(real);
	if (n == 0 || prefix[n - 1] != '/')
		memcpy(prefix + n, "/", 2);
	return 0;
}

/* As the child compares: the root's real path with a '/' added. */
static int check_within(const char *root, const char *prefix,
			struct rg_error *err)
{
	char real[PATH_MAX + 1];
	struct stat st;
	size_t n;

	if (!realpath(root, real) || stat(real, &st) < 0)
		return rg_fail(err, errno, "cannot chdir to `%s'", root);
	if (!S_ISDIR(st.st_mode))
		return rg_fail(err, ENOTDIR, "cannot chdir to `%s'", root);
	n = strlen(real);
	if (n == 0 || real[n - 1] != '/')
		memcpy(real + n, "/", 2);
	if (*prefix && strncmp(real, prefix, strlen(prefix)))
		return rg_fail(err, 0, "invalid root: must be within `%s'",
			       prefix);
	return 0;
}

/*
 * The working directory as the child will reach it: from the new root,
 * with ".." and absolute links kept inside it. Kernels without openat2
 * (before 5.6) leave this to the child.
 */
static int check_workdir(const char *root, const char *dir,
			 struct rg_error *err)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int root_fd, fd, errnum;

	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return rg_fail(err, errno, "cannot chdir to `%s'", root);
	fd = (int)syscall(SYS_openat2, root_fd, dir, &how, sizeof(how));
	errnum = errno;
	close(root_fd);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errnum == ENOSYS)
		return 0;
	return rg_fail(err, errnum, "cannot chdir to `%s' in chroot", dir);
}

int rg_root_prefix(const struct rg_config *cfg, char *prefix, size_t len,
		   struct rg_error *err)
{
	prefix[0] = '\0';
	if (!cfg->root || !cfg->root_prefix)
		return 0;
	return resolve_prefix(cfg->root_prefix, prefix, len, err);
}

int rg_root_check(const struct rg_config *cfg, const char *prefix,
		  struct rg_error *err)
{
	/* without -r, -d is ignored, as DOMjudge's runguard does */
	if (!cfg->root)
		return 0;
	if (check_within(cfg->root, prefix, err) < 0)
		return -1;
	if (cfg->workdir && *cfg->workdir)
		return check_workdir(cfg->root, cfg->workdir, err);
	return 0;
}
