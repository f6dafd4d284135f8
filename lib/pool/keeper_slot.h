/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The slot as its keeper holds it (keeper_server.c): its cgroup, opened
 * once for the keeper's life (its runners inherit the fds, keeper_runner.c),
 * and the reset after each run, done by the keeper once the client has its
 * result and before it serves the next.
 */
#ifndef RG_KEEPER_SLOT_H
#define RG_KEEPER_SLOT_H

#include <limits.h>
#include <stdint.h>

#include "base/base.h"

struct rg_cgroup;

struct rg_keeper_slot {
	struct rg_cgroup *cgroup;
	char name[24];	       /* slot-K */
	char ns_dir[PATH_MAX]; /* <pool>/ns: the message queues' mount */
	uint64_t own_pages;    /* the keeper's pages on the LRU lists */
};

/*
 * Slot name of the pool in dir_fd, in whose cgroup and namespaces we
 * are. The cgroup must exist (we live in it).
 */
int rg_keeper_slot_open(struct rg_keeper_slot *ks, int dir_fd,
			const char *name, struct rg_error *err);

/*
 * Before a run, in its runner as it waits for the call: the cgroup root's
 * alone again if it was chmod'ed since (rg_cgroup_keep_private: no run
 * reads another's counters).
 */
int rg_keeper_slot_ready(struct rg_keeper_slot *ks, struct rg_error *err);

/*
 * Just before the run's child is spawned: what is charged to the cgroup
 * now, the keeper's and the runner's own (its pipes, event loop and
 * files for the run included), less the page cache a reset may leave (a
 * peak never reads below the run's, and up to RG_CACHE_LEFT_MAX above).
 * 0 if unknown.
 */
uint64_t rg_keeper_slot_held(struct rg_cgroup *cg);

/*
 * After a run (its runner and with it every process of the run gone): the
 * namespaces scrubbed, the cgroup's counters reset. -1 when the slot needs
 * more than a keeper can do in it (new namespaces for SysV ids the run
 * moved on or sockets stuck in flight, a new cgroup for memory it left):
 * the keeper then goes, and the slot's next holder, finding it gone,
 * cleans the slot as after a holder that died.
 */
int rg_keeper_slot_reset(struct rg_keeper_slot *ks, struct rg_error *err);

#endif
