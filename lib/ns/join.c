/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per run: the slot's namespaces opened for the child to join (setns).
 */
#include "ns/ns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/base.h"
#include "ns/kinds.h"

/* ---- per run: open ---- */

static int open_ns(const char *path, const struct rg_ns_kind *k,
		   struct rg_error *err)
{
	_cleanup_close_ int fd = -1;
	struct statfs sfs;
	int type;

	/* the bind mount itself, never a link put there */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rg_fail(err, errno, "opening %s", path);
	if (fstatfs(fd, &sfs) < 0)
		return rg_fail(err, errno, "fstatfs %s", path);
	/* the empty file under the mount: after a reboot or an unmount */
	if (sfs.f_type != NSFS_MAGIC)
		return rg_fail(err, ESTALE, "%s is not a mounted namespace",
			       path);
	type = ioctl(fd, NS_GET_NSTYPE);
	/* ENOTTY: before 4.11, the type cannot be asked */
	if (type < 0 && errno != ENOTTY)
		return rg_fail(err, errno, "NS_GET_NSTYPE on %s", path);
	if (type >= 0 && type != k->type)
		return rg_fail(err, ESTALE, "%s is not a %s namespace", path,
			       k->name);
	return rg_steal_fd(&fd);
}

void rg_ns_close(int fds[RG_NS_COUNT])
{
	int i;

	for (i = 0; i < RG_NS_COUNT; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int rg_ns_open(const char *dir, const char *name, int fds[RG_NS_COUNT],
	       struct rg_error *err)
{
	char path[PATH_MAX];
	int i, fd;

	for (i = 0; i < RG_NS_COUNT; i++)
		fds[i] = -1;
	if (rg_ns_check_name(name, err) < 0)
		goto fail;
	for (i = 0; i < NR_KINDS; i++) {
		if (rg_ns_slot_path(path, dir, name, rg_ns_kinds[i].name,
				    err) < 0)
			goto fail;
		fd = open_ns(path, &rg_ns_kinds[i], err);
		if (fd < 0)
			goto fail;
		fds[rg_ns_kinds[i].index] = fd;
	}
	return 0;
fail:
	rg_ns_close(fds);
	return rg_fail_context(err, "opening the namespaces of slot %s", name);
}
