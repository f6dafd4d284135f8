/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot is where one run happens: a cgroup and a set of namespaces. A
 * transient slot is created for one run and destroyed after it (what stock
 * runguard does); a pooled slot (later) is kept and reset between runs.
 * The run code sees only this interface.
 */
#ifndef RG_SLOT_H
#define RG_SLOT_H

#include <stdbool.h>

#include "config.h"

struct rg_cgroup;
struct rg_pool_lease;

enum rg_ns_index {
	RG_NS_IPC,
	RG_NS_NET,
	RG_NS_MNT,
	RG_NS_UTS,
	RG_NS_COUNT,
};

struct rg_slot {
	struct rg_cgroup *cgroup;
	/* namespaces the child creates with clone3 (transient slots) */
	unsigned long clone_flags;
	/* namespaces the child joins with setns (pooled slots), or -1 */
	int ns_fd[RG_NS_COUNT];
	/*
	 * A transient slot's namespaces, held from the child's READY to the
	 * release: otherwise the command's exit would tear them down (the
	 * mount namespace waits for an RCU grace period) inside the timed
	 * window.
	 */
	int held_ns_fd[RG_NS_COUNT];
	bool transient;
	/* pooled slots: the borrowed slot and its number */
	struct rg_pool_lease *lease;
	int pool_index;
};

/* A fresh cgroup (limits applied) and fresh namespaces for one run. */
int rg_slot_open_transient(const struct rg_config *cfg, struct rg_slot **out,
			   struct rg_error *err);

/*
 * A slot borrowed from cfg's pool (cfg->pool_size > 0): kept cgroup and
 * namespaces, settings written only where they differ. Waits while every
 * slot is busy; wake_fd (if >= 0) becoming readable ends the wait.
 */
int rg_slot_acquire_pooled(const struct rg_config *cfg, int wake_fd,
			   struct rg_slot **out, struct rg_error *err);

/* Take references to the namespaces the child created (transient slots). */
int rg_slot_hold_namespaces(struct rg_slot *slot, pid_t child,
			    struct rg_error *err);

/*
 * Give the slot back: a transient slot is destroyed, a pooled one is
 * cleaned and reset for the next run. NULL-safe.
 */
int rg_slot_release(struct rg_slot *slot, struct rg_error *err);

#endif
