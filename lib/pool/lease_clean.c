/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a previous run could have left in a slot, removed: its processes,
 * what it put in the slot's namespaces (scrubbed, by the keeper when the
 * slot has one, or made new when scrubbing cannot do), the cgroup's
 * counters. And the namespaces' fds, opened only when a run joins them,
 * with new namespaces for a slot that lost its own.
 */
#include "pool/lease.h"

#include "cgroup/cgroup.h"
#include "ns/ns.h"
#include "pool/keeper.h"

/*
 * Opened only when needed: a slot whose keeper forks the run and scrubs
 * its namespaces never needs their fds.
 */
int rg_lease_open_namespaces(struct rg_pool_lease *l, struct rg_error *err)
{
	if (l->slot.ns_fd[RG_NS_IPC] >= 0)
		return 0;
	if (rg_ns_open(l->ns_dir, l->name, l->slot.ns_fd, err) == 0)
		return 0;
	if (err->errnum != ESTALE && err->errnum != ENOENT)
		return -1;
	/* lost (unmounted, rebooted): this slot gets new ones */
	if (rg_ns_prepare_dir(l->ns_dir, err) < 0 ||
	    rg_ns_remove(l->ns_dir, l->name, err) < 0 ||
	    rg_ns_create(l->ns_dir, l->name, err) < 0)
		return -1;
	return rg_ns_open(l->ns_dir, l->name, l->slot.ns_fd, err);
}

/* A keeper lives in the slot's namespaces: it scrubs them without setns. */
static int scrub_namespaces(struct rg_pool_lease *l,
			    struct rg_ns_scrub *report, struct rg_error *err)
{
	if (l->keeper_conn >= 0) {
		if (rg_keeper_scrub(l->keeper_conn, report, err) < 0)
			return -1;
		if (rg_ns_scrub_mqueues(l->ns_dir, l->name, report, err) == 0)
			return 0;
		if (err->errnum != ESTALE && err->errnum != ENOENT)
			return -1;
		/*
		 * The slot's namespace files are gone (unmounted, the pool
		 * directory made again): the keeper lives in namespaces no
		 * one else can reach. It goes with them, and the slot gets
		 * new ones, scrubbed as without a keeper.
		 */
		if (rg_lease_stop_keeper(l, err) < 0)
			return -1;
	}
	if (rg_lease_open_namespaces(l, err) < 0)
		return -1;
	return rg_ns_scrub(l->slot.ns_fd, l->ns_dir, l->name, report, err);
}

int rg_lease_clean_slot(struct rg_pool_lease *l, struct rg_error *err)
{
	struct rg_ns_scrub report;

	if (rg_slot_kill_run(&l->slot, err) < 0)
		return -1;
	if (scrub_namespaces(l, &report, err) < 0)
		return -1;
	/* a keeper lives in the namespaces being replaced: it goes too */
	if ((report.ipc_used || report.unix_sockets_left) &&
	    l->keeper_conn >= 0 && rg_lease_stop_keeper(l, err) < 0)
		return -1;
	/*
	 * Sockets stuck in flight, or SysV ids the run moved on: the next
	 * run gets a new net or IPC namespace.
	 */
	if (rg_ns_refresh(l->ns_dir, l->name, &report, l->slot.ns_fd, err) < 0)
		return -1;
	return rg_cgroup_reset(l->slot.cgroup, err);
}
