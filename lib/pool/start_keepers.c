/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keepers started with the pool (rg_pool_create, an admin call): each
 * free slot without a live keeper is leased and prepared as its first run
 * with keepers would prepare it, so that the first runs find their keepers
 * up. A slot held by a run is left to it.
 */
#include "pool/lease.h"

#include "pool/keeper.h"

/*
 * Slot `index`, if it is free and has no live keeper, prepared as its
 * first run with keepers would prepare it (no memory limit, no cpuset:
 * the next run writes its own over the keeper), then marked clean without
 * counting a run. A held slot is left to its holder.
 */
static int start_keeper_in(const struct rg_config *cfg, unsigned int index,
			   struct rg_error *err)
{
	struct rg_pool_lease *l = rg_lease_new(cfg, NULL, err);
	struct pool_header h;
	int pool_lock, rc;

	if (!l)
		return -1;
	rc = rg_lease_lock_pool_shared(l->dir_fd, index + 1, &pool_lock, &h,
				       err);
	if (rc > 0)
		l->lock_fd = rg_lease_try_lock_slot(l->dir_fd, index, err);
	rg_close_fd(&pool_lock);
	if (l->lock_fd == -2) {
		l->lock_fd = -1;
		rc = -1;
	}
	if (rc == 0)
		rc = rg_fail(err, ENOENT, "the pool was destroyed meanwhile");
	rg_pool_slot_name(index, l->name, sizeof(l->name));
	if (rc > 0 && l->lock_fd >= 0 &&
	    rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
			      &l->keeper_pid, err) < 0) {
		l->index = index;
		rc = rg_lease_prepare(l, cfg, &h, err);
		l->rec.state = SLOT_CLEAN;
		l->rec.holder = 0;
		if (rc == 0)
			rc = rg_lease_write_record(l, err);
		if (rc == 0)
			rg_log(cfg, RG_LOG_NOTICE, "slot %u: keeper started",
			       index);
	} else if (rc > 0) {
		rg_log(cfg, RG_LOG_NOTICE, "slot %u: %s", index,
		       l->lock_fd < 0 ? "held by a run, left to it" :
					"its keeper is alive");
	}
	rg_lease_free(l);
	if (rc < 0)
		return rg_fail_context(err, "starting the keeper of slot %u",
				       index);
	return 0;
}

int rg_pool_start_keepers(const struct rg_pool_options *o, struct rg_error *err)
{
	struct rg_config *cfg = rg_config_new(err);
	int rc = 0;

	if (!cfg)
		return -1;
	if (rg_config_set_pool(cfg, o->dir, o->size, err) < 0 ||
	    (o->cgroup_parent &&
	     rg_config_set_cgroup_parent(cfg, o->cgroup_parent, err) < 0))
		rc = -1;
	cfg->pool_keeper = true;
	cfg->pool_favordynmods = o->favordynmods;
	cfg->log = *rg_admin_log();
	for (unsigned int i = 0; rc == 0 && i < o->size; i++)
		rc = start_keeper_in(cfg, i, err);
	rg_config_free(cfg);
	return rc;
}
