/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RG_SYSCALL_FILTER_H
#define RG_SYSCALL_FILTER_H

#include <linux/filter.h>

#include <runguard/runguard.h>

#include <stdbool.h>

/*
 * The syscall filter as a ready BPF program: the one embedded at build
 * time, or else built once per process with libseccomp (the child only has
 * to hand it to the kernel; it must not allocate). The result is shared and
 * must not be freed. pooled: the variant for runs in a pool slot, which
 * also refuses sockets of families other than AF_UNIX and AF_NETLINK
 * (their counters would outlive the run in the slot's net namespace).
 */
int rg_seccomp_program(const struct sock_fprog **out, bool pooled,
		       struct rg_error *err);

/* Compile the filter with libseccomp into a malloc()ed program. */
int rg_seccomp_build(struct sock_fprog *prog, bool pooled,
		     struct rg_error *err);

/* Install it in the calling (child) process; no_new_privs must be set.
 * Returns 0 or -errno. */
int rg_seccomp_install(const struct sock_fprog *prog);

#endif
