/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/run_user_files.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int rg_open_regular(const char *path)
{
	int pfd = open(path, O_PATH | O_CLOEXEC), fd, saved;
	char proc[64];
	struct stat st;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		saved = fstat(pfd, &st) < 0 ? errno : EINVAL;
		close(pfd);
		errno = saved;
		return -1;
	}
	/* the same inode, with the permission check an open makes */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	saved = errno;
	close(pfd);
	errno = saved;
	return fd;
}

/* setfsuid/setfsgid return the previous id and cannot fail visibly. */
static bool fsuid_is(uid_t uid)
{
	return (uid_t)setfsuid((uid_t)-1) == uid;
}

static bool fsgid_is(gid_t gid)
{
	return (gid_t)setfsgid((gid_t)-1) == gid;
}

static void give_back(struct rg_fs_creds *saved)
{
	setfsuid(saved->fsuid);
	setfsgid(saved->fsgid);
	if (saved->groups)
		syscall(SYS_setgroups, (size_t)saved->ngroups, saved->groups);
	free(saved->groups);
	saved->groups = NULL;
}

int rg_fs_creds_enter(uid_t uid, gid_t gid, struct rg_fs_creds *saved)
{
	int n = getgroups(0, NULL);

	*saved = (struct rg_fs_creds){ 0 };
	if (n < 0)
		return -1;
	/* a caller in no supplementary group has none to drop or give back */
	if (n > 0) {
		saved->groups = calloc((size_t)n, sizeof(gid_t));
		if (!saved->groups)
			return -1;
		saved->ngroups = getgroups(n, saved->groups);
		/* glibc's setgroups would change every thread: the raw call */
		if (saved->ngroups < 0 ||
		    syscall(SYS_setgroups, (size_t)0, NULL) < 0) {
			free(saved->groups);
			saved->groups = NULL;
			return -1;
		}
	}
	/* each returns the id it replaces: ours, to give back */
	saved->fsgid = (gid_t)setfsgid(gid);
	saved->fsuid = (uid_t)setfsuid(uid);
	if (fsuid_is(uid) && fsgid_is(gid))
		return 0;
	give_back(saved);
	return -1;
}

void rg_fs_creds_leave(struct rg_fs_creds *saved)
{
	give_back(saved);
}
