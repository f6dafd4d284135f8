/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Borrowing a pool slot for one run, and giving it back clean. This is the
 * per-run path: a few opens, flocks and preads on small files, no cgroup,
 * namespace or mount created or destroyed (except to repair a slot that
 * lost its namespaces, or to recycle a cgroup whose peak cannot be reset
 * when the exact peak is asked for). Here the lease's life and the slot's
 * ops; its steps are in the files lease.h lists.
 */
#include "pool/lease.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "ns/ns.h"
#include "pool/keeper.h"
#include "pool/prewarm.h"
#include "pool/slot_choice.h"

/*
 * Whether the keeper that was to reset the slot lives. It answers HELLO
 * once its next runner runs. The run's files are prewarmed before we
 * wait for that answer: a runner woken on another CPU answers meanwhile,
 * one woken on ours (a socket's wake-up says that the sender sleeps
 * next, as here) answers while we wait. The slot's prewarm then has
 * nothing left to do.
 */
static bool keeper_lives(struct rg_pool_lease *l, const struct rg_config *cfg)
{
	struct rg_error ignored;

	if (rg_keeper_dial(l->dir_fd, l->name, &l->keeper_conn, &l->keeper_pid,
			   &ignored) < 0)
		return false;
	rg_prewarm_for_run(cfg, l->dir_fd);
	l->prewarmed = true;
	return rg_keeper_greet(&l->keeper_conn, l->keeper_pid, &ignored) == 0;
}

/* The slot's record as found, and marked in use by us. */
static int take_record(struct rg_pool_lease *l, const struct rg_config *cfg,
		       bool *dirty, struct rg_error *err)
{
	bool read_ok = rg_lease_read_record(l) == 0;
	enum rg_slot_found found = rg_slot_found(&l->rec, read_ok);

	/* clean only if the keeper that was to reset it lives */
	*dirty = found == RG_SLOT_FOUND_DIRTY ||
		 (found == RG_SLOT_FOUND_CLEAN_IF_KEEPER &&
		  !keeper_lives(l, cfg));
	/* from here until release, a crash leaves the slot marked dirty */
	rg_slot_record_taken(&l->rec, *dirty, getpid());
	return rg_lease_write_record(l, err);
}

int rg_lease_prepare(struct rg_pool_lease *l, const struct rg_config *cfg,
		     const struct pool_header *h, struct rg_error *err)
{
	bool dirty;

	rg_pool_slot_name(l->index, l->name, sizeof(l->name));
	if (take_record(l, cfg, &dirty, err) < 0)
		return -1;
	if (!dirty && rg_slot_resident_as_is(&l->rec, cfg, l->exact_v2_peak,
					     l->keeper_conn >= 0)) {
		l->slot.ops = &rg_resident_slot_ops;
		return 0;
	}
	if (rg_lease_open_cgroup(l, h, err) < 0)
		return -1;
	/*
	 * The holder died: its watchdog killed the run with cgroup.kill on
	 * v2 (which poisons the cgroup on some kernels, see recycle) or the
	 * freezer, in a state nobody recorded. A new cgroup is certain.
	 */
	if (dirty && (rg_lease_clean_slot(l, err) < 0 ||
		      rg_lease_drop_cgroup(l, err) < 0 ||
		      rg_lease_open_cgroup(l, h, err) < 0))
		return rg_fail_context(err,
				       "cleaning slot %u after its "
				       "holder died",
				       l->index);
	if (cfg->pool_keeper && rg_lease_settle_keeper(l, cfg, h, err) < 0)
		return -1;
	if (rg_lease_apply_settings(l, cfg, err) < 0) {
		/* a limit below what is charged: start over in a new cgroup */
		if (err->errnum != EBUSY)
			return -1;
		if (rg_lease_drop_cgroup(l, err) < 0 ||
		    rg_lease_open_cgroup(l, h, err) < 0 ||
		    rg_lease_apply_settings(l, cfg, err) < 0)
			return -1;
	}
	if (rg_slot_wants_keeper(cfg) ? rg_lease_use_keeper(l, cfg, err) < 0 :
					rg_lease_open_namespaces(l, err) < 0)
		return -1;
	return rg_lease_write_record(l, err);
}

/* the table's fd from the pick, or one open per call (no pick) */
int rg_lease_read_record(struct rg_pool_lease *l)
{
	return l->table_fd >= 0 ?
		       rg_pool_read_record_at(l->table_fd, l->index, &l->rec) :
		       rg_pool_read_record(l->dir_fd, l->index, &l->rec);
}

int rg_lease_write_record(struct rg_pool_lease *l, struct rg_error *err)
{
	return l->table_fd >= 0 ?
		       rg_pool_write_record_at(l->table_fd, l->index, &l->rec,
					       err) :
		       rg_pool_write_record(l->dir_fd, l->index, &l->rec, err);
}

void rg_lease_free(struct rg_pool_lease *l)
{
	rg_close_fd(&l->table_fd);
	rg_close_fd(&l->keeper_conn);
	rg_lease_put_cgroup(l);
	rg_ns_close(l->slot.ns_fd);
	rg_close_fd(&l->lock_fd); /* unlocks */
	rg_close_fd(&l->dir_fd);
	free(l);
}

/* The pool directory as trusted when the pool was opened, or now. */
static int open_pool_dir(struct rg_pool_lease *l, const struct rg_config *cfg,
			 struct rg_pool *pool, struct rg_error *err)
{
	const char *dir = cfg->pool_dir ? cfg->pool_dir : RG_POOL_DIR_DEFAULT;

	if (!pool) {
		if (rg_pool_open_dir(dir, true, &l->dir_fd, err) < 0)
			return -1;
		return rg_pool_ns_dir(l->dir_fd, l->ns_dir, sizeof(l->ns_dir),
				      err);
	}
	l->threads_share_fds = true;
	l->pool = pool;
	l->dir_fd = fcntl(pool->dir_fd, F_DUPFD_CLOEXEC, 3);
	if (l->dir_fd < 0)
		return rg_fail(err, errno, "duplicating the pool's fd");
	memcpy(l->ns_dir, pool->ns_dir, sizeof(l->ns_dir));
	return 0;
}

struct rg_pool_lease *rg_lease_new(const struct rg_config *cfg,
				   struct rg_pool *pool, struct rg_error *err)
{
	struct rg_pool_lease *l = calloc(1, sizeof(*l));

	if (!l) {
		rg_fail(err, errno, "allocating a slot lease");
		return NULL;
	}
	rg_slot_init(&l->slot, &rg_pooled_slot_ops);
	l->slot.namespaces_outlive_run = true;
	l->exact_v2_peak = cfg->pool_v2_exact_peak;
	l->lock_fd = -1;
	l->keeper_conn = -1;
	l->dir_fd = -1;
	l->table_fd = -1;
	if (open_pool_dir(l, cfg, pool, err) < 0) {
		rg_lease_free(l);
		return NULL;
	}
	return l;
}

int rg_slot_acquire_pooled(const struct rg_config *cfg, struct rg_pool *pool,
			   int wake_fd, struct rg_slot **out,
			   struct rg_error *err)
{
	struct rg_pool_lease *l = rg_lease_new(cfg, pool, err);
	struct pool_header h;

	if (!l)
		return -1;
	if (rg_lease_lock_a_slot(cfg, wake_fd, l, &h, err) < 0 ||
	    rg_lease_prepare(l, cfg, &h, err) < 0) {
		/* the record stays "in use": the next holder cleans up */
		rg_lease_free(l);
		return -1;
	}
	l->slot.pool_index = (int)l->index;
	*out = &l->slot;
	return 0;
}

/* Scrub, reset and mark the slot clean: the run's processes are dead. */
static int reset_and_record(struct rg_pool_lease *l, struct rg_error *err)
{
	int rc = rg_lease_clean_slot(l, err);

	if (rc == 0)
		rc = rg_lease_recycle_if_charged(l, err);
	if (rc == 0) {
		rg_slot_record_reset(&l->rec, time(NULL), false);
		rc = rg_lease_write_record(l, err);
	}
	l->cgroup_reusable = rc == 0;
	return rc;
}

/*
 * A reset that must reclaim page cache the run left (files it wrote, for
 * one) took 110-220 ms on v1 whenever a dirty page was among them: the
 * kernel throttles reclaim that cannot reach zero. The caller need not
 * wait: a detached process (rg_detach) finishes the release and holds the
 * slot's lock, an open file it shares, until the slot is clean. Runs
 * meanwhile take other slots or wait for this one. If it fails, the slot
 * stays marked in use and its next holder cleans it. Not for a pool
 * opened by a judge whose threads run at once (rg_pool_open): a process
 * forked from it would hold the other threads' slot locks and pipes as
 * long as it lives, so their slots stay taken and their streams open.
 */
static int reset_detached(void *arg)
{
	struct rg_pool_lease *l = arg;
	struct rg_error ignored;
	int rc = reset_and_record(l, &ignored);

	/*
	 * Unlocked now, not when the process exits: the kernel tears down
	 * the memory map first, and meanwhile the slot would read "held"
	 * by nobody (PoolQueueTest saw that).
	 */
	rg_close_fd(&l->lock_fd);
	return rc < 0;
}

/* Kill leftovers, scrub, reset and give the slot back. */
static int pooled_release(struct rg_slot *slot, struct rg_error *err)
{
	struct rg_pool_lease *l = rg_container_of(slot, struct rg_pool_lease,
						  slot);
	int rc;

	/* nothing of the run outlives the call, whoever resets */
	rc = rg_slot_kill_run(&l->slot, err);
	if (rc == 0 && !l->threads_share_fds &&
	    rg_cgroup_reset_is_slow(l->slot.cgroup) &&
	    rg_detach(reset_detached, l,
		      (const int[]){ l->dir_fd, l->table_fd, l->lock_fd,
				     l->keeper_conn },
		      4)) {
		rg_lease_free(l);
		return 0;
	}
	if (rc == 0)
		rc = reset_and_record(l, err);
	if (rc < 0)
		rg_fail_context(err, "resetting pool slot %u", l->index);
	rg_lease_free(l);
	return rc;
}

/* what all runs read, charged to us (prewarm.c), unless keeper_lives() did */
static void pooled_prewarm(struct rg_slot *slot, const struct rg_config *cfg)
{
	struct rg_pool_lease *l = rg_container_of(slot, struct rg_pool_lease,
						  slot);

	if (!l->prewarmed)
		rg_prewarm_for_run(cfg, l->dir_fd);
}

/* runguard died mid-run: the run dies; the slot's next holder resets it */
static void pooled_abandon(struct rg_slot *slot)
{
	struct rg_error ignored;

	rg_cgroup_kill_all(slot->cgroup, &ignored);
}

const struct rg_slot_ops rg_pooled_slot_ops = {
	.prewarm = pooled_prewarm,
	.release = pooled_release,
	.abandon = pooled_abandon,
};

/* Resident slots: the keeper's runner runs it all (keeper.h). */

static struct rg_pool_lease *to_lease(struct rg_slot *slot)
{
	return rg_container_of(slot, struct rg_pool_lease, slot);
}

static int resident_run(struct rg_slot *slot, const struct rg_config *cfg,
			const struct rg_child_plan *plan, const int dest[2],
			int signal_fd, struct rg_result *result,
			struct rg_error *err)
{
	struct rg_pool_lease *l = to_lease(slot);
	struct rg_keeper_run_request req = {
		.cfg = cfg,
		.plan = plan,
		.dest = dest,
		/* what the runner cannot tell in a cgroup it lives in */
		.peak_unused = slot->cgroup &&
			       rg_cgroup_peak_clean(slot->cgroup),
		.signal_fd = signal_fd,
	};

	bool resend;
	int rc = rg_keeper_run(l->keeper_conn, &req, result, &resend, err);

	/* its runner had the syscall filter, this run has none: the next */
	if (rc < 0 && resend) {
		rg_close_fd(&l->keeper_conn);
		rc = rg_lease_reach_keeper(l) ?
			     rg_keeper_run(l->keeper_conn, &req, result,
					   &resend, err) :
			     rg_fail(err, EPIPE, "the slot's keeper is gone");
	}
	if (rc < 0)
		return -1;
	l->ran = true;
	return 0;
}

/* A slot whose holder died: anything of its run, ended. */
static int resident_kill(struct rg_slot *slot, struct rg_error *err)
{
	struct rg_pool_lease *l = to_lease(slot);
	bool gone;

	if (rg_keeper_kill(l->keeper_conn, &gone, err) < 0)
		return -1;
	if (gone) {
		rg_lease_forget_keeper(l);
		return rg_cgroup_kill_all(slot->cgroup, err);
	}
	return 0;
}

/*
 * The keeper resets the slot after the run, before it serves its next
 * client (keeper_slot.h): the slot is marked clean for as long as the
 * keeper lives, and the next holder, talking to the keeper first, waits
 * for the reset.
 * Without a result the run's end is unknown: the slot stays marked in use,
 * and its next holder cleans it.
 */
static int resident_release(struct rg_slot *slot, struct rg_error *err)
{
	struct rg_pool_lease *l = to_lease(slot);
	int rc = 0;

	if (l->ran) {
		rg_slot_record_reset(&l->rec, time(NULL), true);
		rc = rg_lease_write_record(l, err);
	}
	rg_lease_free(l);
	return rc;
}

const struct rg_slot_ops rg_resident_slot_ops = {
	.prewarm = pooled_prewarm,
	.run = resident_run,
	.kill_run = resident_kill,
	.release = resident_release,
	/* no watchdog: the runner sees its client die and kills the run */
};
