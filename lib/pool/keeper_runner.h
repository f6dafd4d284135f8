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
 *
 * The syscall filter: with args.filter the runner installs the run's
 * filter (syscall_filter.h) on itself while it waits, and each child
 * inherits it: the install (a JIT compile, 0.1-0.2 ms) is out of the call.
 * A RUN without the filter (--seccomp=off) cannot be served by such a
 * runner: it is refused with resend set (keeper_proto.h), nothing of it
 * went out, and the keeper forks the next runner without the filter; the
 * client sends the RUN again. The slot keeps the last run's choice.
 */
#ifndef RG_KEEPER_RUNNER_H
#define RG_KEEPER_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "pool/keeper_slot.h"

/* what the runner tells its keeper through news_fd, a byte each */
#define RG_RUNNER_RAN 'r'     /* a run went out: the slot needs a reset */
#define RG_RUNNER_REPLIED 'a' /* its result was sent */
/* the RUN's choice of syscall filter: the next runner's */
#define RG_RUNNER_FILTER 'f'
#define RG_RUNNER_NO_FILTER 'n'

struct rg_runner_args {
	struct rg_keeper_slot *slot; /* the keeper's, copied by the fork */
	int listen_fd;		     /* the slot's socket */
	int keeper_fd;		     /* hangs up when the keeper is gone */
	int news_fd;		     /* RG_RUNNER_* */
	bool filter;		     /* install the run's syscall filter */
};

_Noreturn void rg_runner_main(const struct rg_runner_args *a);

#endif
