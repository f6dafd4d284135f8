/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot's runner: forked by the slot's keeper ahead of its next client,
 * PID 1 of a PID namespace of its own, in the slot's cgroup and
 * namespaces already. It takes the slot's next connection itself, answers
 * its requests (keeper_proto.h) and supervises its RUN as rg_run() does
 * (run.h) on the keeper's open cgroup, sends the result over the client's
 * connection, and exits: the kernel ends whatever of the run is left with
 * it, and the keeper resets the slot and forks the next runner.
 *
 * So a run costs the keeper no wake-up and no fork while the client
 * waits, its result reaches the client also when the keeper is killed
 * meanwhile, and the keeper waits for no run: what runs did (CPU time,
 * faults) never adds up in /proc/<keeper>/stat, which a run may read.
 */
#ifndef RG_KEEPER_RUNNER_H
#define RG_KEEPER_RUNNER_H

#include <stdint.h>

#include "pool/keeper_slot.h"

/* what the runner tells its keeper through news_fd, a byte each */
#define RG_RUNNER_RAN 'r'     /* a run went out: the slot needs a reset */
#define RG_RUNNER_REPLIED 'a' /* its result was sent */

struct rg_runner_args {
	struct rg_keeper_slot *slot; /* the keeper's, copied by the fork */
	int listen_fd;		     /* the slot's socket */
	int keeper_fd;		     /* hangs up when the keeper is gone */
	int news_fd;		     /* RG_RUNNER_* */
};

_Noreturn void rg_runner_main(const struct rg_runner_args *a);

#endif
