/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A resident slot's keeper, the client's side: the keeper is a process of
 * its own executable (runguard-keeper, keeper_server.c) that lives as
 * long as its pool slot, PID 1 of the slot's own PID namespace, inside
 * the slot's IPC, network and UTS namespaces and its cgroup, serving one
 * runguard at a time over a unix socket in the pool directory
 * (<slot>.sock, root only; messages in keeper_proto.h). A run is then a
 * fork in the slot: the child inherits the cgroup and the namespaces, so
 * no run joins a namespace (setns) or a cgroup (an attach takes the
 * host's cgroup locks).
 *
 *   runguard (client)                 keeper
 *   HELLO  ------------------------>  its protocol version: another
 *                                     build's keeper is replaced
 *   SPAWN plan memfd + fds  -------->  a runner (pid 2) forks the child;
 *   <--------------------------------  the child's pidfd
 *   READY, baselines, release, supervise (as for any child, spawn.h)
 *   REAP  ------------------------->  the runner's wait4: status, rusage
 *   KILL  ------------------------->  kill(-1, SIGKILL), wait for all:
 *                                     only the keeper is left in the slot
 *   SCRUB ------------------------->  SysV objects and unix sockets of
 *                                     its namespaces (rg_ns_scrub_here)
 *   close (or runguard dies) ------>  the same KILL, at once
 */
#ifndef RG_KEEPER_H
#define RG_KEEPER_H

#include <stdint.h>
#include <sys/resource.h>

#include "spawn.h"

struct rg_cgroup;
struct rg_ns_scrub;

/*
 * Start the keeper of slot name (in dir_fd, the pool directory) in the
 * namespaces ns_fd (see slot.h) and cgroup cg. Returns once it listens.
 */
int rg_keeper_start(int dir_fd, const char *name, const int ns_fd[],
		    const struct rg_cgroup *cg, struct rg_error *err);

/*
 * Connect to slot name's keeper: 0 with *conn and the keeper's pid (as we
 * see it); -1 with ECONNREFUSED or ENOENT in err when it has none (never
 * started, or dead).
 */
int rg_keeper_connect(int dir_fd, const char *name, int *conn, pid_t *pid,
		      struct rg_error *err);

/*
 * Whether slot name has a live keeper, without waiting for it: its pid,
 * 0 when it has none, -1 when it is alive but too busy to tell (its
 * backlog is full). The keeper sees a client that asks for nothing.
 */
pid_t rg_keeper_probe(int dir_fd, const char *name);

/*
 * SIGKILL the keeper (the kernel then kills its whole PID namespace) and
 * wait until it is gone. Not with cgroup.kill: some kernels kill every
 * child later born into a cgroup that had it written (cgroup.h).
 */
int rg_keeper_stop(pid_t pid, struct rg_error *err);

/* Have the keeper fork the child of plan (rg_spawn's contract). */
int rg_keeper_spawn(int conn, const struct rg_child_plan *plan,
		    struct rg_child *child, struct rg_error *err);

/* The exited child's status and rusage. */
int rg_keeper_reap(int conn, int *status, struct rusage *ru,
		   struct rg_error *err);

/*
 * Everything in the slot but the keeper killed and reaped. *keeper_cpu_ns:
 * the CPU time the keeper spent since the spawn (it counts in the slot's
 * cgroup).
 */
int rg_keeper_kill(int conn, int64_t *keeper_cpu_ns, struct rg_error *err);

/*
 * After rg_keeper_kill: the keeper scrubs the slot's IPC and net
 * namespaces, which it lives in (rg_ns_scrub_here), so the client joins
 * none. The message queues are the client's part (rg_ns_scrub_mqueues).
 */
int rg_keeper_scrub(int conn, struct rg_ns_scrub *report, struct rg_error *err);

#endif
