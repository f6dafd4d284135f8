/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a client hands a slot's keeper for one run: the child's plan
 * (spawn.h) and the run's configuration (its plain data, rg_config_plain)
 * flattened into a memfd, which travels with the run's fds over the
 * keeper's socket. A memfd has no size limit (argv and environment may be
 * large) and is read by the keeper with one pread.
 *
 * A keeper outlives the runguard that started it (an upgrade leaves the
 * old one serving), so the format is versioned: every version begins with
 * two uint32s, a magic and its RG_WIRE_VERSION, and a keeper refuses any
 * version but its own.
 */
#ifndef RG_KEEPER_WIRE_H
#define RG_KEEPER_WIRE_H

#include <stdbool.h>

#include "base/base.h"
#include "run/run.h"

/*
 * 1: the plan's scalars one by one; 2: struct rg_child_settings whole;
 * 3: and struct rg_config's plain data whole, for the runner; 4: struct
 * rg_privs_plan with bounding_set_empty; 5: the outputs the client relays
 */
#define RG_WIRE_VERSION 5u

/* What goes with the plan. */
struct rg_wire_run {
	const struct rg_config *cfg; /* its plain data travels */
	/* the slot's memory.peak holds nothing but the keeper's charges */
	bool peak_unused;
	/* the command's stdout, stderr: the client's own pipes (keeper_relay.h) */
	bool relayed[2];
};

/* The run as the keeper rebuilds it; every pointer points into blob. */
struct rg_wire_plan {
	struct rg_child_plan plan;
	struct rg_caller_state caller; /* plan.caller; cwd_fd not set */
	struct rg_config cfg;	       /* plain: no pointer, fd or sink */
	bool syscall_filter;
	bool stdin_closed; /* FD_STDIN is a placeholder: start with 0 closed */
	bool peak_unused;
	bool relayed[2]; /* rg_wire_run */
	char *blob;
	char **argv;
	char **envp;
};

/*
 * A sealed memfd holding plan, run and the calling process's umask and
 * rlimits (its cwd goes as an fd). plan->file must be set.
 */
int rg_wire_encode(const struct rg_child_plan *plan,
		   const struct rg_wire_run *run, int *memfd,
		   struct rg_error *err);

/*
 * The keeper's side; out->plan.slot, stdin_fd, seccomp, parent_pid and
 * out->caller.cwd_fd are not set. EPROTO for another version or a
 * malformed memfd; out is then left zeroed (rg_wire_free is harmless).
 */
int rg_wire_decode(int memfd, struct rg_wire_plan *out, struct rg_error *err);

void rg_wire_free(struct rg_wire_plan *w);

#endif
