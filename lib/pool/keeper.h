/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A resident slot's keeper, the client's side: the keeper is a process of
 * its own executable (runguard-keeper, keeper_server.c) that lives as
 * long as its pool slot, inside the slot's IPC, network and UTS
 * namespaces and its cgroup, with the slot's cgroup files open, serving
 * one runguard at a time over a unix socket in the pool directory
 * (<slot>.sock, root only; messages in keeper_proto.h). A run is one
 * request and one reply: no run joins a namespace (setns) or a cgroup (an
 * attach takes the host's cgroup locks), and the client opens no cgroup
 * file when the slot's settings are those in force.
 *
 *   runguard (client)                 the slot's runner (keeper_runner.h),
 *                                     forked by the keeper before the
 *                                     call, PID 1 of a new PID namespace
 *   connect ----------------------->  it takes the connection itself
 *   HELLO  ------------------------>  its protocol version: another
 *                                     build's keeper is replaced
 *   RUN plan memfd, fds ----------->  supervises the command as rg_run()
 *   (signals passed on) ----------->  does
 *   <--------------------------------  the result; the runner exits, the
 *                                     keeper resets the slot and forks
 *                                     the next runner
 *   close (or runguard dies) ------>  the run, if still out, is killed
 *
 * KILL and SCRUB serve a slot whose holder died (lease.c, lease_clean.c).
 */
#ifndef RG_KEEPER_H
#define RG_KEEPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "run/run.h"

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
 * rg_keeper_connect in two halves, for a caller with work to do before it
 * waits for the keeper's answer (its runner has to wake). rg_keeper_dial connects
 * and sends HELLO; rg_keeper_greet reads the answer, or closes *conn and
 * fails as rg_keeper_connect does (a keeper of another build stopped).
 * Nothing else goes over *conn in between.
 */
int rg_keeper_dial(int dir_fd, const char *name, int *conn, pid_t *pid,
		   struct rg_error *err);
int rg_keeper_greet(int *conn, pid_t pid, struct rg_error *err);

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

/* What one run hands the keeper (RUN). */
struct rg_keeper_run_request {
	const struct rg_config *cfg;
	const struct rg_child_plan *plan;
	const int *dest;  /* [2]: the command's stdout and stderr */
	bool peak_unused; /* rg_wire_run */
	int signal_fd;	  /* passed on to the runner; -1: none */
};

/*
 * The run of req, start to end, by the slot's keeper: 0 with its result
 * (errors of the run itself in err, as rg_run() gives them, and what the
 * runner logged replayed into cfg's sink); -1 when no result came (the
 * keeper refused or died first, or this runguard is of another build).
 * -1 with *resend: nothing went out, and the slot's next runner takes the
 * run (keeper_runner.h: the syscall filter): connect again, call again.
 */
int rg_keeper_run(int conn, const struct rg_keeper_run_request *req,
		  struct rg_result *result, bool *resend, struct rg_error *err);

/*
 * Anything of a run still in flight, killed and gone: by the keeper
 * (conn), or, with *keeper_gone, by nobody (the keeper is dead, and its
 * runner with the run's PID namespace died with its client).
 */
int rg_keeper_kill(int conn, bool *keeper_gone, struct rg_error *err);

/*
 * After rg_keeper_kill: the keeper scrubs the slot's IPC and net
 * namespaces, which it lives in (rg_ns_scrub_here), so the client joins
 * none. The message queues are the client's part (rg_ns_scrub_mqueues).
 */
int rg_keeper_scrub(int conn, struct rg_ns_scrub *report, struct rg_error *err);

#endif
