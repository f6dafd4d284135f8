/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The syscall filter as the child installs it. The program itself is
 * compiled by syscall_filter_build.c with libseccomp, at build time when
 * possible (syscall_filter_bpf.h, written by gen-syscall-filter): building
 * it costs about half a millisecond, on every run otherwise.
 */
#include "run/syscall_filter.h"

#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"
#include "syscall_filter_bpf.h"

static pthread_mutex_t program_lock = PTHREAD_MUTEX_INITIALIZER;
/* [0]: transient slots, [1]: pool slots */
static struct sock_fprog programs[2];

static int load_program(struct sock_fprog *prog, bool pooled,
			struct rg_error *err)
{
#if RG_EMBEDDED_FILTER_LEN > 0
	/* the generator writes both variants */
	(void)err;
	prog->filter =
		(struct sock_filter *)(pooled ? rg_embedded_pooled_filter :
						rg_embedded_filter);
	prog->len = pooled ? RG_EMBEDDED_POOLED_FILTER_LEN :
			     RG_EMBEDDED_FILTER_LEN;
	return 0;
#else
	return rg_seccomp_build(prog, pooled, err);
#endif
}

int rg_seccomp_program(const struct sock_fprog **out, bool pooled,
		       struct rg_error *err)
{
	struct sock_fprog *prog = &programs[pooled];
	int rc = 0;

	pthread_mutex_lock(&program_lock);
	if (!prog->filter)
		rc = load_program(prog, pooled, err);
	pthread_mutex_unlock(&program_lock);
	if (rc == 0)
		*out = prog;
	return rc;
}

int rg_seccomp_install(const struct sock_fprog *prog)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
		return -errno;
	return 0;
}
