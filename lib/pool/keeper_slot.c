/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_slot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "ns/ns.h"
#include "pool/pool.h"

int rg_keeper_slot_open(struct rg_keeper_slot *ks, int dir_fd,
			const char *name, struct rg_error *err)
{
	struct pool_header h;
	bool created = false;
	uint64_t bytes;

	memset(ks, 0, sizeof(*ks));
	if (strncmp(name, "slot-", 5) != 0 || strlen(name) >= sizeof(ks->name))
		return rg_fail(err, EINVAL, "keeper: no slot `%s'", name);
	snprintf(ks->name, sizeof(ks->name), "%s", name);
	if (rg_pool_read_header(dir_fd, &h) < 0)
		return rg_fail(err, EINVAL, "keeper: no pool here");
	rg_pool_use_mount_table(dir_fd, &h);
	if (rg_pool_open_slot_cgroup(&h, name, &ks->cgroup, &created, err) < 0)
		return -1;
	if (created) {
		/* not the one we live in: it was removed meanwhile */
		rg_cgroup_destroy(ks->cgroup, err);
		ks->cgroup = NULL;
		return rg_fail(err, ENOENT, "keeper: %s's cgroup is gone",
			       name);
	}
	if (rg_pool_ns_dir(dir_fd, ks->ns_dir, sizeof(ks->ns_dir), err) < 0 ||
	    rg_cgroup_memory_usage(ks->cgroup, &bytes, err) < 0 ||
	    rg_cgroup_user_memory(ks->cgroup, &ks->own_pages, err) < 0) {
		rg_cgroup_close(ks->cgroup);
		ks->cgroup = NULL;
		return -1;
	}
	/* what is charged now is ours: never a run's leftover to reclaim */
	rg_cgroup_set_resident(ks->cgroup, bytes);
	return 0;
}

int rg_keeper_slot_ready(struct rg_keeper_slot *ks, struct rg_error *err)
{
	return rg_cgroup_keep_private(ks->cgroup, err);
}

uint64_t rg_keeper_slot_held(struct rg_cgroup *cg)
{
	struct rg_error ignored;
	uint64_t held;

	if (rg_cgroup_memory_usage(cg, &held, &ignored) < 0)
		return 0;
	/*
	 * Not the page cache the last reset may have left: its owner may
	 * free it during the run, and the peak would read below the run's
	 * (memory.stat is too late to tell a page or two).
	 */
	return held > RG_CACHE_LEFT_MAX ? held - RG_CACHE_LEFT_MAX : 0;
}

int rg_keeper_slot_reset(struct rg_keeper_slot *ks, struct rg_error *err)
{
	struct rg_ns_scrub report;
	uint64_t pages, bytes;

	if (rg_ns_scrub_here(&report, err) < 0 ||
	    rg_ns_scrub_mqueues(ks->ns_dir, ks->name, &report, err) < 0)
		return -1;
	if (report.ipc_used || report.unix_sockets_left)
		return rg_fail(err, EAGAIN, "%s needs new namespaces",
			       ks->name);
	if (rg_cgroup_reset(ks->cgroup, err) < 0 ||
	    rg_cgroup_user_memory(ks->cgroup, &pages, err) < 0 ||
	    rg_cgroup_memory_usage(ks->cgroup, &bytes, err) < 0)
		return -1;
	/*
	 * What is charged after the reset is ours (our stack and kernel
	 * objects grow with the first runs): the next reset reclaims only
	 * what a run leaves beyond it, as the client's did (lease_cgroup.c).
	 */
	rg_cgroup_set_resident(ks->cgroup, bytes);
	if (pages > RG_RECYCLE_ABOVE_BYTES + ks->own_pages ||
	    rg_cgroup_needs_recycle(ks->cgroup))
		return rg_fail(err, EAGAIN, "%s needs a new cgroup", ks->name);
	return 0;
}
