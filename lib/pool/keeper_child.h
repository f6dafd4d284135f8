/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A resident slot's waiting child: forked by the slot's runner
 * (keeper_runner.h) before its client calls, it does what of the child's
 * set-up needs no run (rg_child_prepare: a session, the OOM score, the
 * bounding and ambient sets, no_new_privs, the slot's syscall filter) and
 * waits. The run's release carries the client's plan (keeper_wire.h), its
 * stdin and its directory; the child decodes the plan itself, ends its
 * set-up and execs without waiting again (a prepared child, spawn.h).
 *
 * So the run waits for no fork, no filter being compiled into the kernel
 * and no READY round trip. The child dies with its runner before a run
 * comes (parent-death signal, EOF on its socket).
 */
#ifndef RG_KEEPER_CHILD_H
#define RG_KEEPER_CHILD_H

#include <linux/filter.h>
#include <stdbool.h>

#include "spawn.h"

struct rg_waiting_child {
	pid_t pid; /* 0: none */
	int pidfd;
	struct rg_spawn_pipes pipes; /* our ends open, the child's closed */
	int go_sock; /* ours; the release is one message on it */
	int stat_fd; /* its schedstat (waits.h), or -1 */
	bool filtered; /* it installed the syscall filter */
};

/*
 * Fork it (seccomp: the filter, or NULL for none). On failure there is
 * none (w->pid 0), and a run forks its child as rg_spawn() does.
 */
int rg_waiting_child_fork(struct rg_waiting_child *w,
			  const struct sock_fprog *seccomp, int cap_last,
			  struct rg_error *err);

/* Alive and waiting, with the filter a run asks for (or none). */
bool rg_waiting_child_fits(const struct rg_waiting_child *w,
			   bool syscall_filter);

/*
 * It becomes the run's child (its pipes and go socket move into child,
 * which is released by rg_waiting_child_release); w is left empty.
 */
void rg_waiting_child_take(struct rg_waiting_child *w, struct rg_child *child);

/*
 * Release a taken child with the run: the plan's memfd, its stdin (a
 * placeholder if closed) and its directory (keeper_proto.h's RUN fds).
 */
int rg_waiting_child_release(struct rg_child *child, const int fds[3],
			     struct rg_error *err);

/* Kill, reap and close it; harmless when there is none. */
void rg_waiting_child_discard(struct rg_waiting_child *w);

#endif
