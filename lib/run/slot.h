/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot is where one run happens: a cgroup and a set of namespaces. One
 * interface, several implementations: a transient slot is created for one
 * run and destroyed after it (what stock runguard does, slot.c); a pooled
 * one is borrowed from the pool and reset after it, and a resident one is
 * a pooled slot whose keeper runs the run (pool/lease.c); the keeper's
 * runner has a slot of its own (pool/keeper_runner.c). The run code sees
 * only this interface.
 */
#ifndef RG_SLOT_H
#define RG_SLOT_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/base.h"
#include "ns/ns.h"

struct rg_cgroup;
struct rg_cgroup_stats;
struct rg_pool;
struct rg_child;
struct rg_child_plan;
struct rg_child_place;
struct rg_slot;
struct rg_result;
struct rusage;

struct rg_slot_ops {
	/*
	 * Before the child exists: bring in from outside the slot what the
	 * run will read, so that the slot is not charged for it. Optional.
	 */
	void (*prewarm)(struct rg_slot *slot, const struct rg_config *cfg);
	/*
	 * After the child's READY: take what its exit must not tear down
	 * inside the timed window. Optional.
	 */
	int (*hold)(struct rg_slot *slot, pid_t child, struct rg_error *err);
	/*
	 * Run the command of plan start to end, the slot's own process
	 * supervising it (a resident slot's runner, keeper.h), and fill
	 * result; dest: the command's stdout and stderr; signal_fd (or -1):
	 * signals to pass on; cfg's cancel fd ends the run. Optional: with
	 * it, the run uses none of spawn, hold, reap and correct_stats, and
	 * the slot's cgroup may be NULL. -1 only when no result came.
	 */
	int (*run)(struct rg_slot *slot, const struct rg_config *cfg,
		   const struct rg_child_plan *plan, const int dest[2],
		   int signal_fd, struct rg_result *result,
		   struct rg_error *err);
	/* Start the child. Optional: clone3 here (rg_spawn). */
	int (*spawn)(struct rg_slot *slot, const struct rg_child_plan *plan,
		     struct rg_child *child, struct rg_error *err);
	/* Reap the exited child. Optional: wait4. */
	int (*reap)(struct rg_slot *slot, struct rg_child *child, int *status,
		    struct rusage *ru, struct rg_error *err);
	/*
	 * Kill everything of the run and wait until it is gone. Optional:
	 * every task in the slot's cgroup.
	 */
	int (*kill_run)(struct rg_slot *slot, struct rg_error *err);
	/* Take out of the cgroup's numbers what is not the run's. Optional. */
	void (*correct_stats)(struct rg_slot *slot,
			      struct rg_cgroup_stats *stats);
	/* Give the slot back (destroyed or reset) and free it. */
	int (*release)(struct rg_slot *slot, struct rg_error *err);
	/*
	 * runguard died mid-run (called by the watchdog, a task sharing our
	 * memory): kill the run, clean what the next runguard cannot. It
	 * must not allocate or free: runguard may have died holding the
	 * allocator's lock. Optional: NULL when the slot sees to that
	 * itself (no watchdog).
	 */
	void (*abandon)(struct rg_slot *slot);
};

struct rg_slot {
	const struct rg_slot_ops *ops;
	struct rg_cgroup *cgroup;
	/* namespaces the child creates with clone3 */
	unsigned long clone_flags;
	/* namespaces the child joins with setns, or -1 */
	int ns_fd[RG_NS_COUNT];
	/* the namespaces serve later runs: no POSIX message queues */
	bool namespaces_outlive_run;
	int pool_index; /* -1: not pooled */
};

/* For implementations: no cgroup, no namespaces, not pooled. */
void rg_slot_init(struct rg_slot *slot, const struct rg_slot_ops *ops);

/* The part of slot its child needs (spawn.h). */
void rg_slot_place(const struct rg_slot *slot, struct rg_child_place *place);

/* A fresh cgroup (limits applied) and fresh namespaces for one run. */
int rg_slot_open_transient(const struct rg_config *cfg, struct rg_slot **out,
			   struct rg_error *err);

/* See rg_slot_ops.prewarm. */
void rg_slot_prewarm(struct rg_slot *slot, const struct rg_config *cfg);

/* See rg_slot_ops.spawn, .reap, .kill_run and .correct_stats. */
int rg_slot_spawn(struct rg_slot *slot, const struct rg_child_plan *plan,
		  struct rg_child *child, struct rg_error *err);
int rg_slot_reap(struct rg_slot *slot, struct rg_child *child, int *status,
		 struct rusage *ru, struct rg_error *err);
int rg_slot_kill_run(struct rg_slot *slot, struct rg_error *err);
/* The default of rg_slot_ops.reap: wait4 for our own child. */
int rg_slot_reap_own(struct rg_child *child, int *status, struct rusage *ru,
		     struct rg_error *err);
void rg_slot_correct_stats(struct rg_slot *slot, struct rg_cgroup_stats *stats);

/* See rg_slot_ops.run; whether the slot has it. */
bool rg_slot_runs_itself(const struct rg_slot *slot);
int rg_slot_run(struct rg_slot *slot, const struct rg_config *cfg,
		const struct rg_child_plan *plan, const int dest[2],
		int signal_fd, struct rg_result *result, struct rg_error *err);

/* See rg_slot_ops.hold. */
int rg_slot_hold(struct rg_slot *slot, pid_t child, struct rg_error *err);

/*
 * Give the slot back: a transient slot is destroyed, a pooled one is
 * cleaned and reset for the next run. NULL-safe.
 */
int rg_slot_release(struct rg_slot *slot, struct rg_error *err);

/* See rg_slot_ops.abandon; false when the slot has none. */
bool rg_slot_can_abandon(const struct rg_slot *slot);
void rg_slot_abandon(struct rg_slot *slot);

#endif
