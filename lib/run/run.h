/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One run, from the configuration to the result (docs/design.md walks it).
 * The public calls, rg_run() and rg_pool_run(), are in pool/pool_run.c:
 * a run with pool settings takes its slot from the pool, which sits on
 * top of this folder.
 */
#ifndef RG_RUN_H
#define RG_RUN_H

#include <runguard/runguard.h>

#include "base/base.h"
/* the parts of a run a resident slot's keeper (lib/pool) drives itself */
#include "run/slot.h"
#include "run/spawn.h"
#include "run/supervise.h"
#include "run/syscall_filter.h"
#include "run/waits.h"

struct rg_slot;

/* Where a run takes its slot from (a pool's lease). */
struct rg_slot_source {
	int (*acquire)(void *ctx, const struct rg_config *cfg, int wake_fd,
		       struct rg_slot **slot, struct rg_error *err);
	void *ctx;
};

/*
 * rg_run() with the slot from source, or a transient one made for this
 * run and destroyed after it when source is NULL.
 */
enum rg_outcome rg_run_with(const struct rg_config *cfg,
			    const struct rg_slot_source *source,
			    struct rg_result *result, struct rg_error *err);

/*
 * A run from the slot on, for a resident slot's runner (keeper_runner.c):
 * the client prepared the plan, opened the files and took the slot; the
 * runner, in the slot already, supervises the command as rg_run() does.
 */
struct rg_planned_run {
	/* plain data (rg_config_plain) with the run's fds set */
	const struct rg_config *cfg;
	const struct rg_child_plan *plan; /* its envp is not freed */
	struct rg_slot *slot;		  /* the runner's own */
	int signal_fd;	 /* signals the client passes on (supervise.h) */
	int notify_sock; /* supervise.h; -1 */
	struct rg_run_prep *prep; /* taken over (emptied); NULL: none */
	/*
	 * The caller _exit()s once it has replied: the supervisor's own fds
	 * (event loop, timers, pressure files, the child's pipes) are left
	 * to the exit, not closed in the reply's time. The run's files are
	 * closed as ever.
	 */
	bool exits_after;
	/* out: bytes written into cfg's stdout and stderr fds */
	uint64_t forwarded[2];
};

/*
 * What a run's supervisor needs that no call decides (the event loop, the
 * host's pressure files), made by a runner while it waits for its call,
 * not in it. rg_run_planned() takes it over; else it dies with the runner.
 */
struct rg_run_prep {
	struct rg_supervisor sup;
	struct rg_host_waits host;
	bool ready;
};

void rg_run_prepare(struct rg_run_prep *prep);

/* Fills result as rg_run() does; the slot's release is the caller's. */
enum rg_outcome rg_run_planned(struct rg_planned_run *p,
			       struct rg_result *result, struct rg_error *err);

#endif
