/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot's keeper (keeper.h) as the slot's lease deals with it: reached if
 * it lives, kept through a run's settings when it can stay (it holds
 * memory below the slot's limit, and a cpuset is written with the slot
 * empty), stopped when it cannot, started when the run wants one and the
 * slot has none. A slot whose keeper cannot start serves plainly pooled.
 */
#include "pool/lease.h"

#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "pool/keeper.h"
#include "pool/slot_choice.h"

/* how long a stopped keeper's namespace may take to empty its cgroup */
#define KEEPER_GONE_TIMEOUT_MS 5000

/*
 * The slot without its keeper (stopped, dead, or about to die with the
 * cgroup): served plainly pooled until a new one starts. The limit in
 * force has the keeper's share: written again by the next run.
 */
void rg_lease_forget_keeper(struct rg_pool_lease *l)
{
	rg_close_fd(&l->keeper_conn);
	l->slot.ops = &rg_pooled_slot_ops;
	l->keeper_bytes = l->keeper_pages = 0;
	if (l->slot.cgroup)
		rg_cgroup_set_resident(l->slot.cgroup, 0);
	l->rec.flags &= ~SLOT_SETTINGS_KNOWN;
}

/*
 * The keeper and all in its PID namespace (the slot's cgroup holds nothing
 * else), killed by pid. The next holder starts a new one.
 */
int rg_lease_stop_keeper(struct rg_pool_lease *l, struct rg_error *err)
{
	int rc;

	rg_lease_forget_keeper(l);
	if (rg_keeper_stop(l->keeper_pid, err) < 0)
		return -1;
	/* the namespace's last tasks may still be on their way out */
	for (int waited_ms = 0;
	     (rc = rg_cgroup_populated(l->slot.cgroup, err)) > 0; waited_ms++) {
		if (waited_ms >= KEEPER_GONE_TIMEOUT_MS)
			return rg_fail(err, EBUSY,
				       "the tasks of slot %u's "
				       "keeper outlive it",
				       l->index);
		usleep(1000);
	}
	return rc;
}

/*
 * Whether the slot's live keeper can stay through this run's settings
 * (rg_slot_keeper_fate); the slot's usage is read when that depends on
 * it, and kept for the limit written over the keeper.
 */
static int keeper_can_stay(struct rg_pool_lease *l, const struct rg_config *cfg,
			   bool *stay, struct rg_error *err)
{
	enum rg_keeper_fate fate = rg_slot_keeper_fate(&l->rec, cfg);
	uint64_t usage;

	*stay = fate != RG_KEEPER_GOES;
	if (fate != RG_KEEPER_STAYS_IF_ROOM)
		return 0;
	if (rg_cgroup_memory_usage(l->slot.cgroup, &usage, err) < 0)
		return -1;
	*stay = rg_slot_keeper_fits(usage, cfg->memory_limit);
	l->keeper_bytes = usage; /* for the limit written over it */
	return 0;
}

/*
 * Before the settings are written: the slot's keeper if it is alive and
 * can stay (keeper_can_stay), none otherwise. A keeper nobody can reach
 * (the pool directory was made again) is killed with the cgroup, which is
 * then replaced (cgroup.h: rg_cgroup_needs_recycle).
 */
int rg_lease_settle_keeper(struct rg_pool_lease *l, const struct rg_config *cfg,
			   const struct pool_header *h, struct rg_error *err)
{
	bool stay;

	if (l->keeper_conn >= 0 ||
	    rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
			      &l->keeper_pid, err) == 0) {
		l->slot.ops = &rg_resident_slot_ops;
		if (keeper_can_stay(l, cfg, &stay, err) < 0)
			return -1;
		return stay ? 0 : rg_lease_stop_keeper(l, err);
	}
	if (err->errnum != ECONNREFUSED && err->errnum != ENOENT)
		return -1;
	if (rg_cgroup_kill_all(l->slot.cgroup, err) < 0)
		return -1;
	if (rg_cgroup_needs_recycle(l->slot.cgroup) &&
	    (rg_lease_drop_cgroup(l, err) < 0 ||
	     rg_lease_open_cgroup(l, h, err) < 0))
		return -1;
	return 0;
}

/*
 * A slot whose keeper cannot start (its executable missing, say) serves
 * this run as a pooled slot without one: a warning, never an internal
 * error, on which DOMjudge would disable the judgehost.
 */
static int go_without_keeper(struct rg_pool_lease *l,
			     const struct rg_config *cfg, struct rg_error *err)
{
	rg_log(cfg, RG_LOG_WARNING,
	       "slot %u: no keeper (%s: %s): this run "
	       "is pooled without one",
	       l->index, err->message, strerror(err->errnum));
	rg_close_fd(&l->keeper_conn);
	return rg_cgroup_kill_all(l->slot.cgroup, err);
}

int rg_lease_use_keeper(struct rg_pool_lease *l, const struct rg_config *cfg,
			struct rg_error *err)
{
	bool started = l->keeper_conn < 0;

	if (started) {
		if (rg_lease_open_namespaces(l, err) < 0)
			return rg_fail_context(err, "slot %u", l->index);
		if (rg_keeper_start(l->dir_fd, l->name, l->slot.ns_fd,
				    l->slot.cgroup, err) < 0 ||
		    rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
				      &l->keeper_pid, err) < 0)
			return go_without_keeper(l, cfg, err);
	}
	rg_cgroup_expect_tasks(l->slot.cgroup);
	l->slot.ops = &rg_resident_slot_ops;
	/* the slot is reset: what is charged now is the keeper's */
	if (rg_cgroup_memory_usage(l->slot.cgroup, &l->keeper_bytes, err) < 0 ||
	    rg_cgroup_user_memory(l->slot.cgroup, &l->keeper_pages, err) < 0)
		return -1;
	rg_cgroup_set_resident(l->slot.cgroup, l->keeper_bytes);
	/* the limit was written without it: once per keeper */
	if (started && cfg->memory_limit != RG_UNLIMITED) {
		struct rg_cgroup_limits limits = {
			.memory_bytes = rg_lease_memory_limit(l, cfg),
			.set = RG_CG_SET_MEMORY,
		};

		return rg_cgroup_apply_limits(l->slot.cgroup, &limits, err);
	}
	return 0;
}

bool rg_lease_reach_keeper(struct rg_pool_lease *l)
{
	struct rg_error ignored;

	return rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
				 &l->keeper_pid, &ignored) == 0;
}
