/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a directory seen through a bind mount is reachable from outside a
 * set of paths. DOMjudge bind-mounts its chroot's directories into every
 * judging directory and unmounts them right after the judging's last
 * runguard call: anything that still walks or holds a path below the
 * judging then makes that umount fail (EBUSY). Work that outlives a call
 * uses the mount's source instead, read from /proc/self/mountinfo.
 */
#ifndef RG_MOUNT_SOURCE_H
#define RG_MOUNT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One line of mountinfo: the fields this module needs, unescaped. */
struct rg_mount_entry {
	unsigned int major, minor;
	char *root;  /* the mounted directory, within its file system */
	char *point; /* where it is mounted */
};

struct rg_mount_table {
	struct rg_mount_entry *entries; /* in mountinfo order */
	size_t count;
};

/*
 * Parse one mountinfo line into e (strings malloc'd; free with
 * rg_mount_entry_free). -1 on a malformed line or without memory.
 */
int rg_mount_entry_parse(const char *line, struct rg_mount_entry *e);
void rg_mount_entry_free(struct rg_mount_entry *e);

/* Read a whole table (malformed lines skipped); -1 without memory. */
int rg_mount_table_read(FILE *mountinfo, struct rg_mount_table *t);
void rg_mount_table_free(struct rg_mount_table *t);

/* Is path at or below top (whole components)? */
bool rg_path_below(const char *path, const char *top);

/*
 * The candidates for an absolute, resolved path: for the mount that holds
 * it (the longest mount point that is a prefix; the last one stacked), its
 * path within that file system; then, for every mount of the same device
 * whose mounted directory contains that path, where the path appears
 * below that mount's point. Calls accept(candidate, data) for each in
 * mountinfo order until it returns true; returns whether one did. Pure:
 * touches no file (the caller checks the candidate, e.g. by stat).
 */
bool rg_mount_candidates(const struct rg_mount_table *t, const char *path,
			 bool (*accept)(const char *candidate, void *data),
			 void *data);

/*
 * The path through which dir (any path; resolved here) can be reached
 * from outside every path of exclude[] (resolved, absolute): the
 * candidate above that is not below any of them and is the same
 * directory (device and inode). False when there is none, e.g. dir is a
 * plain directory below an excluded path.
 */
bool rg_mount_source(const struct rg_mount_table *t, const char *dir,
		     const char *const exclude[], size_t nexclude, char *out,
		     size_t len);

#endif
