/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pool's files, each checked against what runguard makes there: a
 * run checks the files it uses as it opens them (pool_files.c,
 * lease_pick.c); the audit walks all of them at once, for --check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "pool/pool.h"

bool rg_pool_file_ok(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type &&
	       (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH)) &&
	       (type == S_IFDIR || st->st_nlink == 1);
}

static const char *type_name(mode_t type)
{
	switch (type) {
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a socket";
	default:
		return "a regular file";
	}
}

int rg_pool_check_file(int dir_fd, const char *dir, const char *name,
		       mode_t type, struct rg_error *err)
{
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return rg_fail(err, errno, "stat `%s/%s'", dir, name);
	}
	if (S_ISLNK(st.st_mode))
		return rg_fail(err, ELOOP,
			       "refusing pool directory: `%s/%s' "
			       "is a symbolic link, which runguard never "
			       "makes",
			       dir, name);
	if (rg_pool_file_ok(&st, type))
		return 0;
	return rg_fail(err, EPERM,
		       "refusing pool directory: `%s/%s' (uid "
		       "%u, mode %04o, %u links) is not %s of root's that "
		       "only root may write, as runguard makes it",
		       dir, name, (unsigned)st.st_uid,
		       (unsigned)(st.st_mode & 07777), (unsigned)st.st_nlink,
		       type_name(type));
}

static int audit_slot(int dir_fd, const char *dir, unsigned int i,
		      struct rg_error *err)
{
	static const struct {
		const char *format;
		mode_t type;
	} files[] = {
		{ "slot-%u.lock", S_IFREG },   { "slot-%u.sock", S_IFSOCK },
		{ "ns/slot-%u.ipc", S_IFREG }, { "ns/slot-%u.net", S_IFREG },
		{ "ns/slot-%u.uts", S_IFREG },
	};
	char name[64];

	for (size_t f = 0; f < sizeof(files) / sizeof(*files); f++) {
		snprintf(name, sizeof(name), files[f].format, i);
		if (rg_pool_check_file(dir_fd, dir, name, files[f].type, err) <
		    0)
			return -1;
	}
	return 0;
}

int rg_pool_audit(const char *dir, struct rg_error *err)
{
	struct pool_header h;
	int dir_fd, rc = 0;

	/* the directory, the way to it and its shared files */
	if (rg_pool_open_dir(dir, false, &dir_fd, err) < 0)
		return -1;
	if (rg_pool_read_header(dir_fd, &h) < 0) {
		close(dir_fd);
		return rg_fail(err, ENOENT, "no pool in `%s'", dir);
	}
	if (rg_pool_check_file(dir_fd, dir, "ns/.ns-prepare.lock", S_IFREG,
			       err) < 0)
		rc = -1;
	for (unsigned int i = 0; rc == 0 && i < h.size; i++)
		rc = audit_slot(dir_fd, dir, i, err);
	close(dir_fd);
	return rc;
}
