/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A run from the slot on, for a resident slot's runner (keeper_runner.c):
 * the client prepared the plan, opened the files and took the slot; the
 * runner, in the slot already, supervises the command as rg_run() does.
 */
#ifndef RG_RUN_H
#define RG_RUN_H

#include <runguard/runguard.h>

#include "config.h"
#include "spawn.h"

struct rg_slot;

struct rg_planned_run {
	/* plain data (rg_config_plain) with the run's fds set */
	const struct rg_config *cfg;
	const struct rg_child_plan *plan; /* its envp is not freed */
	struct rg_slot *slot;             /* the runner's own */
	int signal_fd;   /* signals the client passes on (supervise.h) */
	int notify_sock; /* supervise.h; -1 */
};

/* Fills result as rg_run() does; the slot's release is the caller's. */
enum rg_outcome rg_run_planned(const struct rg_planned_run *p,
			       struct rg_result *result, struct rg_error *err);

#endif
