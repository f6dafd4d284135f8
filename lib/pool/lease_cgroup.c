/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot's cgroup as its lease holds it: kept open by the pool handle
 * between the slot's runs in one process (no file opened per run), else
 * opened by its path; replaced by a new one when a run left memory in it
 * or its peak cannot be reset; its settings written only where they
 * differ from those the slot record says are in force.
 */
#include "pool/lease.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "pool/slot_choice.h"

int rg_lease_drop_cgroup(struct rg_pool_lease *l, struct rg_error *err)
{
	struct rg_cgroup *old = l->slot.cgroup;

	rg_lease_forget_keeper(l);
	l->slot.cgroup = NULL;
	if (rg_cgroup_destroy(old, err) < 0)
		return -1;
	/* a new cgroup gets every setting written */
	l->rec.flags &= ~(SLOT_SETTINGS_KNOWN | SLOT_USED);
	return 0;
}

/* What the run left: its pages (rg_slot_must_recycle), the kernel's word. */
int rg_lease_recycle_if_charged(struct rg_pool_lease *l, struct rg_error *err)
{
	uint64_t pages;

	if (rg_cgroup_user_memory(l->slot.cgroup, &pages, err) < 0)
		return -1;
	if (!rg_slot_must_recycle(pages, l->keeper_pages,
				  rg_cgroup_needs_recycle(l->slot.cgroup)))
		return 0;
	return rg_lease_drop_cgroup(l, err);
}

static bool kept_for_handle(const struct rg_pool_lease *l)
{
	return rg_slot_kept_for_handle(l->pool, l->index, l->exact_v2_peak);
}

/*
 * The slot's cgroup as this process's pool handle kept it after its last
 * run here, if it still is the slot's: another process may have replaced
 * it since (recycled, or the pool made again, maybe elsewhere), and the
 * files of a removed cgroup fail with ENODEV.
 */
static bool take_kept_cgroup(struct rg_pool_lease *l,
			     const struct pool_header *h)
{
	struct rg_error ignored;
	struct rg_cgroup *cg;
	char label[PATH_MAX];
	uint64_t usage;

	if (!kept_for_handle(l))
		return false;
	cg = __atomic_exchange_n(&l->pool->slot_cgroups[l->index], NULL,
				 __ATOMIC_ACQ_REL);
	if (!cg)
		return false;
	__atomic_sub_fetch(&l->pool->kept, 1, __ATOMIC_RELAXED);
	snprintf(label, sizeof(label), "%s/%s", h->cgroup_path, l->name);
	if (strcmp(rg_cgroup_label(cg), label) != 0 ||
	    rg_cgroup_memory_usage(cg, &usage, &ignored) < 0) {
		rg_cgroup_close(cg);
		return false;
	}
	/* as opened: other processes may have run in it since */
	rg_cgroup_expect_tasks(cg);
	rg_cgroup_set_resident(cg, 0);
	l->slot.cgroup = cg;
	return true;
}

void rg_lease_put_cgroup(struct rg_pool_lease *l)
{
	struct rg_cgroup *cg = l->slot.cgroup;
	struct rg_pool *pool = l->pool;

	l->slot.cgroup = NULL;
	if (cg && kept_for_handle(l) && l->cgroup_reusable &&
	    !rg_cgroup_needs_recycle(cg)) {
		/* within the handle's fd budget, or closed */
		if (__atomic_add_fetch(&pool->kept, 1, __ATOMIC_RELAXED) <=
		    pool->kept_max) {
			/* the slot is ours: nobody else put one there */
			cg = __atomic_exchange_n(&pool->slot_cgroups[l->index],
						 cg, __ATOMIC_ACQ_REL);
		} else {
			__atomic_sub_fetch(&pool->kept, 1, __ATOMIC_RELAXED);
		}
	}
	rg_cgroup_close(cg);
}

int rg_lease_open_cgroup(struct rg_pool_lease *l, const struct pool_header *h,
			 struct rg_error *err)
{
	bool created = false;

	if (!take_kept_cgroup(l, h)) {
		/* the mounts saved with the pool spare libcgroup's search */
		rg_pool_use_mount_table(l->dir_fd, h);
		if (rg_pool_open_slot_cgroup(h, l->name, &l->slot.cgroup,
					     &created, err) < 0)
			return -1;
	}
	if (created)
		l->rec.flags &= ~(SLOT_SETTINGS_KNOWN | SLOT_USED);
	/*
	 * A v2 peak that cannot be reset (5.19-6.11) covers every run since
	 * the cgroup was made. By default the run samples memory.current
	 * instead and the slot keeps its cgroup, as on every other kernel;
	 * for the exact peak, a cgroup anything was charged to (the kernel
	 * says so, whatever the slot record says) is replaced by a new one.
	 */
	if (!l->exact_v2_peak)
		rg_cgroup_sample_unresettable_peak(l->slot.cgroup);
	if (!rg_cgroup_peak_clean(l->slot.cgroup)) {
		if (rg_lease_drop_cgroup(l, err) < 0 ||
		    rg_pool_open_slot_cgroup(h, l->name, &l->slot.cgroup,
					     &created, err) < 0)
			return -1;
	}
	return 0;
}

uint64_t rg_lease_memory_limit(const struct rg_pool_lease *l,
			       const struct rg_config *cfg)
{
	return rg_slot_memory_limit(cfg->memory_limit, l->keeper_conn >= 0,
				    l->keeper_bytes);
}

int rg_lease_apply_settings(struct rg_pool_lease *l,
			    const struct rg_config *cfg, struct rg_error *err)
{
	struct rg_cgroup_limits limits = {
		.memory_bytes = rg_lease_memory_limit(l, cfg),
		.cpuset = cfg->cpuset,
		.set = rg_slot_settings_to_write(&l->rec, cfg),
	};

	if (limits.set &&
	    rg_cgroup_apply_limits(l->slot.cgroup, &limits, err) < 0)
		return -1;
	rg_slot_record_settings(&l->rec, cfg);
	return 0;
}
