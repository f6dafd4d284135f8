/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pool opened once by a judge that links the library (rg_pool_open):
 * the pool is created or completed then, its directory checked and kept
 * open, so that a run (rg_pool_run, in pool_run.c) neither walks the
 * directory's path to trust it again nor looks up where its namespaces
 * are.
 */
#include "pool/pool.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "base/base.h"
/*
 * A kept slot cgroup holds about 30 fds on v1 (fewer on v2). A judge at
 * the usual soft limit of 1024 open files must not run out because of
 * us: kept cgroups may use a quarter of it, the other slots reopen theirs
 * per run as without a handle.
 */
#define KEPT_FDS_PER_SLOT 32

static unsigned int kept_budget(unsigned int size)
{
	struct rlimit nofile;
	rlim_t slots;

	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
		return 0;
	slots = nofile.rlim_cur == RLIM_INFINITY ?
			size :
			nofile.rlim_cur / 4 / KEPT_FDS_PER_SLOT;
	return slots < size ? (unsigned int)slots : size;
}

static int copy_string(char **to, const char *from, struct rg_error *err)
{
	*to = NULL;
	if (!from)
		return 0;
	*to = strdup(from);
	return *to ? 0 : rg_fail(err, errno, "allocating the pool handle");
}

struct rg_pool *rg_pool_open(const struct rg_pool_options *options,
			     struct rg_error *err)
{
	struct rg_pool *pool;
	struct rg_pool_options o;

	if (rg_pool_options_in(&o, options, err) < 0)
		return NULL;
	pool = calloc(1, sizeof(*pool));
	if (!pool) {
		rg_fail(err, errno, "allocating the pool handle");
		return NULL;
	}
	pool->dir_fd = -1;
	pool->size = o.size;
	pool->favordynmods = o.favordynmods;
	pool->kept_max = kept_budget(o.size);
	pool->slot_cgroups = calloc(o.size, sizeof(*pool->slot_cgroups));
	if (!pool->slot_cgroups) {
		rg_fail(err, errno, "allocating the pool handle");
		rg_pool_close(pool);
		return NULL;
	}
	if (copy_string(&pool->dir, o.dir, err) < 0 ||
	    copy_string(&pool->cgroup_parent, o.cgroup_parent, err) < 0 ||
	    rg_pool_create(&o, err) < 0 ||
	    rg_pool_open_dir(o.dir, false, &pool->dir_fd, err) < 0 ||
	    rg_pool_ns_dir(pool->dir_fd, pool->ns_dir, sizeof(pool->ns_dir),
			   err) < 0) {
		rg_fail_context(err, "opening the pool in `%s'", o.dir);
		rg_pool_close(pool);
		return NULL;
	}
	return pool;
}

void rg_pool_close(struct rg_pool *pool)
{
	if (!pool)
		return;
	/* no run holds a slot now: the caller ended them all */
	for (unsigned int i = 0; pool->slot_cgroups && i < pool->size; i++)
		rg_cgroup_close(pool->slot_cgroups[i]);
	free(pool->slot_cgroups);
	rg_close_fd(&pool->dir_fd);
	free(pool->dir);
	free(pool->cgroup_parent);
	free(pool);
}
