/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A resident slot's keeper, the client's side: the keeper is a process of
 * its own executable (runguard-keeper, keeper_server.c) that lives as
 * long as its pool slot, inside the slot's IPC, network and UTS
 * namespaces and its cgroup, serving one
 * runguard at a time over a unix socket in the pool directory
 * (<slot>.sock, root only; messages in keeper_proto.h). A run is then a
 * fork in the slot: the child inherits the cgroup and the namespaces, so
 * no run joins a namespace (setns) or a cgroup (an attach takes the
 * host's cgroup locks).
 *
 *   runguard (client)                 keeper
 *   HELLO  ------------------------>  its protocol version: another
 *                                     build's keeper is replaced
 *   SPAWN plan memfd + fds  -------->  a runner, PID 1 of a new PID
 *                                     namespace, forks the child;
 *   <--------------------------------  the child's pidfd, the runner's
 *                                     socket and pidfd
 *   READY, baselines, release, supervise (as for any child, spawn.h)
 *   (the runner's socket)  <---------  the child's status and rusage
 *   KILL  ------------------------->  SIGKILL to the runner, wait: only
 *                                     the keeper is left in the slot
 *   SCRUB ------------------------->  SysV objects and unix sockets of
 *                                     its namespaces (rg_ns_scrub_here)
 *   close (or runguard dies) ------>  the same KILL, at once
 */
#ifndef RG_KEEPER_H
#define RG_KEEPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "spawn.h"

struct rg_cgroup;
struct rg_ns_scrub;

/*
 * The keeper executable (O_PATH, close-on-exec): the build tree's when
 * this code runs from it, else next to the running executable, else the
 * installed one; root's and written by root alone. Its path goes to path.
 */
int rg_keeper_open_exe(char *path, size_t len, struct rg_error *err);

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
 * SIGKILL the keeper and wait until it is gone (with no run in flight:
 * a run would outlive it). Not with cgroup.kill: some kernels kill every
 * child later born into a cgroup that had it written (cgroup.h).
 */
int rg_keeper_stop(pid_t pid, struct rg_error *err);

/* A run in flight: its runner, which answers for it also without keeper. */
struct rg_keeper_run {
	int runner_sock;       /* the runner's result comes here */
	int runner_pidfd;      /* SIGKILL: the run's whole PID namespace */
	int64_t runner_cpu_ns; /* the runner's CPU, once reaped */
};

void rg_keeper_run_init(struct rg_keeper_run *run);
void rg_keeper_run_close(struct rg_keeper_run *run);

/* Have the keeper fork the child of plan (rg_spawn's contract). */
int rg_keeper_spawn(int conn, const struct rg_child_plan *plan,
		    struct rg_child *child, struct rg_keeper_run *run,
		    struct rg_error *err);

/*
 * The exited child's status, rusage and wait on a run queue (ns, -1
 * unknown; read by its runner before it reaped it).
 */
int rg_keeper_reap(struct rg_keeper_run *run, int *status, struct rusage *ru,
		   int64_t *run_delay_ns, struct rg_error *err);

/*
 * The run, all of it, killed and gone: by the keeper (conn), or by us when
 * the keeper is gone (*keeper_gone; then the runner is killed by its
 * pidfd, and the slot needs a new keeper). *cpu_ns: the CPU time the keeper
 * and the runner spent since the spawn (it counts in the slot's cgroup).
 */
int rg_keeper_kill(int conn, struct rg_keeper_run *run, int64_t *cpu_ns,
		   bool *keeper_gone, struct rg_error *err);

/*
 * After rg_keeper_kill: the keeper scrubs the slot's IPC and net
 * namespaces, which it lives in (rg_ns_scrub_here), so the client joins
 * none. The message queues are the client's part (rg_ns_scrub_mqueues).
 */
int rg_keeper_scrub(int conn, struct rg_ns_scrub *report, struct rg_error *err);

#endif
