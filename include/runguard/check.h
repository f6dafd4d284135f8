/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host check: inspect the host as a configuration would use it (cgroup
 * mode and controllers, kernel features and the code paths they select,
 * capabilities, rlimits, run users, chroot prefix, pool) and say, item by
 * item, ok / warning / error, with the command that fixes each failing
 * item. `runguard --check' prints it; docs/check.md explains every item.
 *
 * Read-only: nothing on the host is created or changed, with one
 * exception: on cgroup v2, when no cgroup along the configured parent can
 * show the memory controller's files, one empty cgroup "rg-check-PID" is
 * made below the deepest existing level of the parent (that level, when
 * the parent itself exists) and removed before rg_check() returns.
 *
 * Not for the run path: a check takes milliseconds (it reads /proc, the
 * cgroup tree, the user database and the pool).
 */
#ifndef RUNGUARD_CHECK_H
#define RUNGUARD_CHECK_H

#include <runguard/runguard.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rg_check_status {
	RG_CHECK_OK = 0,
	RG_CHECK_WARNING = 1,
	RG_CHECK_ERROR = 2,
};

/*
 * What the caller would run with. Set struct_size to sizeof(struct
 * rg_check_options); the library reads no further than that, and fields
 * past it count as zero (NULL, false), so older callers keep working.
 */
struct rg_check_options {
	size_t struct_size;
	const char *cgroup_parent; /* NULL: the build's default */
	bool want_cpuset;	   /* runs pin CPUs: cpuset is needed */
	const char *chroot_prefix; /* NULL: not checked */
	/*
	 * Run users, comma-separated: names, or shell patterns as in
	 * DOMjudge's VALID_USERS ("domjudge-run,domjudge-run-*"). A name
	 * must exist with a group of the same name; a pattern is reported
	 * with the number of accounts it matches. NULL: not checked.
	 */
	const char *run_users;
	const char *pool_dir;	/* NULL: RG_POOL_DIR_DEFAULT */
	unsigned int pool_size; /* 0: runs without a pool */
	bool pool_keepers;	/* resident slots */
	/* where the pool settings came from, quoted in the pool item */
	const char *pool_source;
};

struct rg_check_report;

/*
 * Check the host. Fails (-1, *report NULL) only when the check itself
 * cannot be made (out of memory); what is wrong with the host is in the
 * report's items. Free the report with rg_check_report_free().
 */
RG_EXPORT int rg_check(const struct rg_check_options *options,
		       struct rg_check_report **report, struct rg_error *err);

RG_EXPORT size_t rg_check_report_count(const struct rg_check_report *report);

/* The item's name, e.g. "cgroup.memory"; NULL past the end. */
RG_EXPORT const char *rg_check_item_name(const struct rg_check_report *report,
					 size_t index);
RG_EXPORT enum rg_check_status
rg_check_item_status(const struct rg_check_report *report, size_t index);
RG_EXPORT const char *
rg_check_item_message(const struct rg_check_report *report, size_t index);
/* The shell command that fixes the item; NULL when it is ok. */
RG_EXPORT const char *rg_check_item_fix(const struct rg_check_report *report,
					size_t index);

/* The worst status of all items (RG_CHECK_OK for none). */
RG_EXPORT enum rg_check_status
rg_check_report_status(const struct rg_check_report *report);

/*
 * Add an item of the caller's own (the runguard binary adds VALID_USERS,
 * a build setting of its own). fix may be NULL. 0, or -1 with err.
 */
RG_EXPORT int rg_check_report_add(struct rg_check_report *report,
				  const char *name, enum rg_check_status status,
				  const char *message, const char *fix,
				  struct rg_error *err);

RG_EXPORT void rg_check_report_free(struct rg_check_report *report);

#ifdef __cplusplus
}
#endif

#endif
