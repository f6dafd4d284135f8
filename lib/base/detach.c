/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/detach.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
#ifndef ANON_INODE_FS_MAGIC
#define ANON_INODE_FS_MAGIC 0x09041934
#endif

/*
 * In the middle process, which the caller waits for: nothing of the
 * caller's may be held once the call returns (the judgedaemon unmounts
 * the judging's directories at once), so it is dropped here, before the
 * detached process exists, not in it (CI saw a detached process still
 * holding a judging's stdio, meta file and directory after the call).
 */
static int drop_callers_files(const int keep[], size_t nkeep)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || chdir("/") < 0)
		return -1;
	rg_detach_close_foreign(keep, nkeep);
	return 0;
}

/* A file of the kernel's own (cgroup, namespace, ...): no path of anyone's. */
static bool kernel_object(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return false;
	switch ((unsigned long)sfs.f_type) {
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case NSFS_MAGIC:
	case MQUEUE_MAGIC:
	case PROC_SUPER_MAGIC:
	case ANON_INODE_FS_MAGIC:
		return true;
	default:
		return false;
	}
}

static bool kept(int fd, const int keep[], size_t nkeep)
{
	for (size_t i = 0; i < nkeep; i++)
		if (keep[i] == fd)
			return true;
	return fd <= 2 || kernel_object(fd);
}

/* Raw getdents64: no malloc after a fork from a threaded caller. */
struct linux_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static void close_unless_kept(const char *name, int dir_fd, const int keep[],
			      size_t nkeep)
{
	char *end;
	long fd = strtol(name, &end, 10);

	if (*end || end == name || fd == dir_fd || kept((int)fd, keep, nkeep))
		return;
	close((int)fd);
}

void rg_detach_close_foreign(const int keep[], size_t nkeep)
{
	int dir_fd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096] __attribute__((aligned(8)));
	long n;

	if (dir_fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, dir_fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);

			close_unless_kept(d->d_name, dir_fd, keep, nkeep);
			off += d->d_reclen;
		}
	close(dir_fd);
}

bool rg_detach(int (*fn)(void *arg), void *arg, const int keep[], size_t nkeep)
{
	pid_t mid = fork(), pid;
	int status;

	if (mid < 0)
		return false;
	if (mid == 0) {
		if (drop_callers_files(keep, nkeep) < 0)
			_exit(1);
		pid = fork();
		if (pid == 0)
			_exit(fn(arg));
		_exit(pid < 0);
	}
	while ((pid = waitpid(mid, &status, 0)) < 0 && errno == EINTR)
		;
	return pid == mid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
