/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's two calls that run a command. Both are here, with the
 * pool, because a run with pool settings takes its slot from a lease
 * (lease.c); the run itself is lib/run/'s (rg_run_with).
 */
#include <errno.h>

#include <runguard/pool.h>
#include <runguard/runguard.h>

#include "base/base.h"
#include "pool/pool.h"
#include "run/run.h"

static int acquire(void *ctx, const struct rg_config *cfg, int wake_fd,
		   struct rg_slot **slot, struct rg_error *err)
{
	return rg_slot_acquire_pooled(cfg, ctx, wake_fd, slot, err);
}

enum rg_outcome rg_run(const struct rg_config *cfg, struct rg_result *result,
		       struct rg_error *err)
{
	/* cfg's own pool, opened for this run */
	const struct rg_slot_source pooled = { acquire, NULL };

	return rg_run_with(cfg, cfg && cfg->pool_size > 0 ? &pooled : NULL,
			   result, err);
}

/* The run's own pool settings give way to the opened pool's. */
enum rg_outcome rg_pool_run(struct rg_pool *pool, const struct rg_config *cfg,
			    struct rg_result *result, struct rg_error *err)
{
	const struct rg_slot_source source = { acquire, pool };
	struct rg_config in_pool;

	if (!pool || !cfg) {
		rg_fail(err, EINVAL, "no pool or no run configuration");
		return RG_OUTCOME_ERROR;
	}
	in_pool = *cfg;
	in_pool.pool_dir = pool->dir;
	in_pool.pool_size = pool->size;
	in_pool.cgroup_parent = pool->cgroup_parent;
	in_pool.pool_favordynmods = pool->favordynmods;
	return rg_run_with(&in_pool, &source, result, err);
}
