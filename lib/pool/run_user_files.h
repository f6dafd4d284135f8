/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening files a submission names (an ELF's interpreter, its RUNPATH and
 * DT_NEEDED entries) in root's process without root's rights: only
 * regular files, and only what the run user could open itself. A device
 * or FIFO named there is never opened (a watchdog arms on open; a FIFO
 * blocks or wakes a writer), and a file the run user may not read is
 * neither read nor brought into the page cache.
 */
#ifndef RG_RUN_USER_FILES_H
#define RG_RUN_USER_FILES_H

#include <stddef.h>
#include <sys/types.h>

/*
 * path opened read-only (O_NONBLOCK, close-on-exec) if it is a regular
 * file: resolved with an O_PATH open, which runs no device's or FIFO's
 * open, then the same inode reopened through /proc/self/fd. -1 with errno
 * (EINVAL for anything but a regular file).
 */
int rg_open_regular(const char *path);

/* The calling thread's file system identity, to be given back. */
struct rg_fs_creds {
	uid_t fsuid;
	gid_t fsgid;
	gid_t *groups;
	int ngroups;
};

/*
 * The calling thread (only it: raw system calls, not glibc's broadcast)
 * takes uid and gid as its file system ids and no supplementary groups,
 * so that opens and path walks are checked as the run user's would be
 * (root's file capabilities go with a nonzero fsuid). -1 if that could
 * not be done completely (no CAP_SETUID or CAP_SETGID): then nothing
 * changed, and the caller must not open files for the run user.
 */
int rg_fs_creds_enter(uid_t uid, gid_t gid, struct rg_fs_creds *saved);

/* Back to the identity rg_fs_creds_enter() saved. */
void rg_fs_creds_leave(struct rg_fs_creds *saved);

#endif
