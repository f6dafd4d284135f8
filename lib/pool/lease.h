/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot lease (struct rg_pool_lease, pool.h) is made in several files,
 * one job each; this header is what they share:
 *   lease.c         the lease: acquire, prepare, release, the slot ops
 *   lease_pick.c    the choice of a slot, the wait for one, its lock
 *   lease_cgroup.c  the slot's cgroup: kept, opened, recycled, set up
 *   lease_clean.c   what a previous run left, removed; the namespaces
 *   lease_keeper.c  the slot's keeper, as the lease deals with it
 *   start_keepers.c the keepers started with the pool (an admin call)
 * What they decide from data alone is in slot_choice.h.
 */
#ifndef RG_LEASE_H
#define RG_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "pool/pool.h"
#include "run/run.h"

/* lease.c: how the run is run and the slot given back */
extern const struct rg_slot_ops rg_pooled_slot_ops;
/* the keeper's runner runs it all (keeper.h) */
extern const struct rg_slot_ops rg_resident_slot_ops;

/* A lease of no slot yet, with the pool directory (pool's, or cfg's). */
struct rg_pool_lease *rg_lease_new(const struct rg_config *cfg,
				   struct rg_pool *pool, struct rg_error *err);
/* Closes all; the slot's lock last (unlocks). */
void rg_lease_free(struct rg_pool_lease *l);
/* l->rec read from, and written to, the slot's entry in slots.table */
int rg_lease_read_record(struct rg_pool_lease *l);
int rg_lease_write_record(struct rg_pool_lease *l, struct rg_error *err);
/*
 * The locked slot l->index made ready for cfg's run: its record marked in
 * use, cleaned first if its last holder died, settings written where they
 * differ, a keeper used if wanted.
 */
int rg_lease_prepare(struct rg_pool_lease *l, const struct rg_config *cfg,
		     const struct pool_header *h, struct rg_error *err);

/* lease_pick.c */

/*
 * The pool lock, shared, and the header: 1 when the pool is complete (at
 * least size slots), 0 when it must be created first (also when a destroy
 * removed the pool or its directory meanwhile), -1 on error.
 */
int rg_lease_lock_pool_shared(int dir_fd, unsigned int size, int *pool_lock,
			      struct pool_header *h, struct rg_error *err);
/* The slot's lock fd, locked; -1 when busy, -2 (err set) when refused. */
int rg_lease_try_lock_slot(int dir_fd, unsigned int index,
			   struct rg_error *err);
/*
 * A slot of cfg's pool locked for l (l->lock_fd, l->index), the pool made
 * first if need be; waits while all are busy (wake_fd or cfg's cancel fd
 * readable ends the wait: EINTR). *h: the pool's header.
 */
int rg_lease_lock_a_slot(const struct rg_config *cfg, int wake_fd,
			 struct rg_pool_lease *l, struct pool_header *h,
			 struct rg_error *err);

/* lease_cgroup.c */

/* The slot's cgroup opened: kept by the pool handle, or the slot's. */
int rg_lease_open_cgroup(struct rg_pool_lease *l, const struct pool_header *h,
			 struct rg_error *err);
/* Remove the slot's cgroup: whoever opens it next makes a new one. */
int rg_lease_drop_cgroup(struct rg_pool_lease *l, struct rg_error *err);
/* Kept by the pool handle for the slot's next run here, or closed. */
void rg_lease_put_cgroup(struct rg_pool_lease *l);
/* After a reset: a new cgroup if the run left pages charged to it. */
int rg_lease_recycle_if_charged(struct rg_pool_lease *l, struct rg_error *err);
/* The memory limit to write for cfg's run (rg_slot_memory_limit). */
uint64_t rg_lease_memory_limit(const struct rg_pool_lease *l,
			       const struct rg_config *cfg);
/* cfg's settings written where they differ from those in force. */
int rg_lease_apply_settings(struct rg_pool_lease *l,
			    const struct rg_config *cfg, struct rg_error *err);

/* lease_clean.c */

/* The slot's namespaces opened (once), made again if they were lost. */
int rg_lease_open_namespaces(struct rg_pool_lease *l, struct rg_error *err);
/* Everything a previous run could have left, removed. */
int rg_lease_clean_slot(struct rg_pool_lease *l, struct rg_error *err);

/* lease_keeper.c */

/* The slot without its keeper: served plainly pooled from now on. */
void rg_lease_forget_keeper(struct rg_pool_lease *l);
/* The keeper and all in its PID namespace, killed. */
int rg_lease_stop_keeper(struct rg_pool_lease *l, struct rg_error *err);
/* Before the settings: the slot's keeper kept if it can stay, or not. */
int rg_lease_settle_keeper(struct rg_pool_lease *l, const struct rg_config *cfg,
			   const struct pool_header *h, struct rg_error *err);
/* After the settings: a keeper for the slot, started if it has none. */
int rg_lease_use_keeper(struct rg_pool_lease *l, const struct rg_config *cfg,
			struct rg_error *err);
/* The slot's keeper, connected, if it lives (and is of our build). */
bool rg_lease_reach_keeper(struct rg_pool_lease *l);

#endif
