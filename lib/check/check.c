/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rg_check(): the options, the kernel version, the item groups in order. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "check/check_internal.h"
#include "base/base.h"

static void copy_options(struct rg_check_options *dst,
			 const struct rg_check_options *src)
{
	size_t n = src ? src->struct_size : 0;

	memset(dst, 0, sizeof(*dst));
	if (n > sizeof(*dst))
		n = sizeof(*dst);
	if (n)
		memcpy(dst, src, n);
	dst->struct_size = sizeof(*dst);
}

static void read_kernel(struct rg_check_ctx *c)
{
	struct utsname u;

	if (uname(&u) == 0 &&
	    sscanf(u.release, "%u.%u", &c->kernel[0], &c->kernel[1]) == 2)
		return;
	c->kernel[0] = c->kernel[1] = 0;
}

bool rg_check_kernel_at_least(const struct rg_check_ctx *c, unsigned int major,
			      unsigned int minor)
{
	return c->kernel[0] > major ||
	       (c->kernel[0] == major && c->kernel[1] >= minor);
}

int rg_check(const struct rg_check_options *options,
	     struct rg_check_report **report, struct rg_error *err)
{
	struct rg_check_ctx c = { 0 };

	*report = NULL;
	copy_options(&c.o, options);
	c.report = rg_check_report_new();
	if (!c.report)
		return rg_fail(err, ENOMEM, "allocating the check report");
	read_kernel(&c);
	rg_check_cgroup(&c);
	rg_check_kernel(&c);
	rg_check_privileges(&c);
	rg_check_accounts(&c);
	rg_check_pool(&c);
	if (c.report->failed) {
		rg_check_report_free(c.report);
		return rg_fail(err, ENOMEM, "filling the check report");
	}
	*report = c.report;
	return 0;
}
