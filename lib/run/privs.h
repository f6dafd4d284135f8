/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RG_PRIVS_H
#define RG_PRIVS_H

#include <stdbool.h>
#include <sys/types.h>

#include <runguard/runguard.h>

struct rg_privs_plan {
	uid_t uid;
	gid_t gid;
	bool set_gid;
	int cap_last; /* highest capability number the kernel knows */
	/*
	 * Emptied before the child (by a resident slot's runner, which
	 * inherits it to every child): the drop has nothing to do. The
	 * check at the end holds all the same.
	 */
	bool bounding_set_empty;
};

/* Parent side: the highest capability number (from libcap). */
int rg_privs_cap_last(struct rg_error *err);

/*
 * The caller's own bounding set emptied (a process that never execs and
 * keeps its effective capabilities: a resident slot's runner, for all the
 * children it will have). 0, or -errno with the set partly dropped.
 */
int rg_privs_drop_bounding_set(int cap_last);

/*
 * Child side, between clone and exec (raw syscalls only: glibc's set*id
 * wrappers would try to signal threads that only exist in the parent).
 * Clears groups, sets gid, empties the bounding and ambient sets, sets
 * no_new_privs, switches uid, empties the remaining capability sets and
 * verifies all of it. Returns 0, or -1 with *step naming what failed and
 * *errnum the errno (0 when it has nothing to add).
 */
int rg_privs_drop(const struct rg_privs_plan *plan, const char **step,
		  int *errnum);

#endif
