/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A run's processes must not outlive the runguard that supervises them,
 * even one that is SIGKILLed (no handler runs then). The watchdog is a
 * tiny task that shares runguard's memory and fd table and waits for
 * runguard's process to exit: if that happens before runguard dismissed
 * it, it abandons the slot (rg_slot_abandon: kills everything in the
 * run's cgroup at once, and removes a transient cgroup).
 */
#ifndef RG_WATCHDOG_H
#define RG_WATCHDOG_H

#include <stdbool.h>
#include <sys/types.h>

#include <runguard/runguard.h>

struct rg_slot;

struct rg_watchdog {
	pid_t pid; /* 0 when not running */
	int pidfd; /* of runguard's own process */
	void *stack;
	struct rg_slot *slot; /* read only once runguard is dead */
};

/*
 * Start watching slot, before anything runs in it. The fd table is
 * shared, so a pooled slot's lock stays held until the leftovers of a
 * dead runguard are dead too.
 */
int rg_watchdog_start(struct rg_watchdog *w, struct rg_slot *slot,
		      struct rg_error *err);

/* The run is over and collected: dismiss the watchdog and reap it. */
void rg_watchdog_stop(struct rg_watchdog *w);

#endif
