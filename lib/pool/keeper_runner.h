/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A resident run's runner: forked by the slot's keeper for one RUN
 * (keeper_proto.h), PID 1 of a PID namespace of the run's own, in the
 * slot's cgroup and namespaces already. It supervises the command as
 * rg_run() does (run.h) on the keeper's open cgroup, sends the result to
 * the client over the client's own connection, and exits: the kernel ends
 * whatever of the run is left with it, and the keeper resets the slot.
 *
 * So the run's result reaches the client also when the keeper is killed
 * meanwhile, and the keeper waits for no run: what runs did (CPU time,
 * faults) never adds up in /proc/<keeper>/stat, which a run may read.
 */
#ifndef RG_KEEPER_RUNNER_H
#define RG_KEEPER_RUNNER_H

#include <stdint.h>

#include "keeper_slot.h"
#include "keeper_wire.h"

struct rg_runner_args {
	const struct rg_keeper_slot *slot;
	struct rg_wire_plan *wire;
	const int *fds; /* RUN's (keeper_proto.h) */
	int conn;       /* the client's connection */
	/* charged to the slot before the runner: the keeper's own */
	uint64_t held;
	int replied_fd; /* a byte once the result is sent */
};

_Noreturn void rg_runner_main(const struct rg_runner_args *a);

#endif
