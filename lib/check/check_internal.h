/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to lib/check: the report being filled and what the item
 * groups share (options, cgroup mode, kernel version).
 */
#ifndef RG_CHECK_INTERNAL_H
#define RG_CHECK_INTERNAL_H

#include <limits.h>
#include <stdbool.h>

#include <runguard/check.h>

#include "cgroup/cgroup.h"

struct rg_check_item {
	char *name;
	enum rg_check_status status;
	char *message;
	char *fix; /* NULL for none */
};

struct rg_check_report {
	struct rg_check_item *items;
	size_t count;
	size_t capacity;
	/* an item could not be added (out of memory): rg_check() fails */
	bool failed;
};

struct rg_check_ctx {
	struct rg_check_options o; /* the caller's, zero-extended */
	struct rg_check_report *report;
	bool mode_known;
	enum rg_cgroup_mode mode;
	unsigned int kernel[2]; /* major, minor; 0.0 when unknown */
	bool cap_sys_resource;
	const char *parent; /* the cgroup parent in use */
	/* v2: a non-root cgroup showing the memory files, -1 if none */
	int probe_fd;
	char probe_label[PATH_MAX];
	/* ... made by the check ("rg-check-PID" in probe_up_fd) */
	int probe_up_fd;
	char probe_name[32];
};

/* Append an item; fix NULL for none. Failures set report->failed. */
void rg_check_add(struct rg_check_report *report, const char *name,
		  enum rg_check_status status, const char *fix,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

struct rg_check_report *rg_check_report_new(void);

/* Kernel at least major.minor (false when unknown). */
bool rg_check_kernel_at_least(const struct rg_check_ctx *c, unsigned int major,
			      unsigned int minor);

/* v2: find or make the probe cgroup; remove what the check made. */
void rg_check_probe_open(struct rg_check_ctx *c);
void rg_check_probe_close(struct rg_check_ctx *c);

/* The item groups, in the order they are reported. */
void rg_check_cgroup(struct rg_check_ctx *c);
void rg_check_kernel(struct rg_check_ctx *c);
void rg_check_privileges(struct rg_check_ctx *c);
void rg_check_accounts(struct rg_check_ctx *c);
void rg_check_pool(struct rg_check_ctx *c);

#endif
