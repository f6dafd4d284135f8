/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a client hands a slot's keeper for one run: the child's plan
 * (spawn.h) flattened into a memfd, which travels with the run's fds over
 * the keeper's socket. A memfd has no size limit (argv and environment
 * may be large) and is read by the keeper with one pread.
 */
#ifndef RG_KEEPER_WIRE_H
#define RG_KEEPER_WIRE_H

#include "config.h"
#include "spawn.h"

/* The plan as the keeper rebuilds it; every pointer points into blob. */
struct rg_wire_plan {
	struct rg_config cfg;
	struct rg_child_plan plan;
	struct rg_caller_state caller; /* plan.caller; cwd_fd not set */
	bool syscall_filter;
	bool stdin_closed; /* FD_STDIN is a placeholder: start with 0 closed */
	char *blob;
	char **argv;
	char **envp;
};

/*
 * A sealed memfd holding plan, what of its cfg the child reads, and the
 * calling process's umask and rlimits (its cwd goes as an fd).
 */
int rg_wire_encode(const struct rg_child_plan *plan, int *memfd,
		   struct rg_error *err);

/*
 * The keeper's side; out->plan.slot, stdin_fd, seccomp and
 * out->caller.cwd_fd are not set.
 */
int rg_wire_decode(int memfd, struct rg_wire_plan *out, struct rg_error *err);

void rg_wire_free(struct rg_wire_plan *w);

#endif
