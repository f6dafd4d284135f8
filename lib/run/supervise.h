/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Supervising a released child with one event loop: pidfd (exit), timerfd
 * (hard wall limit, kill grace, memory samples where the kernel keeps no
 * peak), signalfd (SIGTERM/SIGINT/SIGHUP to us), a cancel fd, and the
 * output pipes.
 */
#ifndef RG_SUPERVISE_H
#define RG_SUPERVISE_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <time.h>

#include "base/base.h"
#include "run/spawn.h"
#include "run/streams.h"

struct rg_slot;

/* What goes to notify_sock, a uint32 ("NTFY"). */
#define RG_SUPERVISOR_NOTIFY 0x5946544eu

struct rg_supervisor {
	const struct rg_config *cfg;
	struct rg_child *child;
	struct rg_slot *slot;
	struct rg_stream *streams; /* [2] */
	int epoll_fd;
	int wall_timer_fd;
	int grace_timer_fd;
	int sample_timer_fd; /* memory samples; -1 when the kernel keeps a peak */
	/*
	 * -1 when signals are not handled; a resident slot's runner reads
	 * the client's from its socket (keeper_proto.h), signal 0 for a
	 * cancel, and EOF when the client is gone.
	 */
	int signal_fd;
	/*
	 * -1, or where a resident slot's runner tells its client to notify
	 * cfg->timeout_notify_pid, which its PID namespace cannot reach
	 * (RG_SUPERVISOR_NOTIFY)
	 */
	int notify_sock;

	struct timespec start, end;
	/*
	 * This thread's own waits for a CPU (ns, -1 unknown): as it woke for
	 * the run's end (it saw the end late, and the wall time grows by that
	 * much, docs/meta-file.md), and from start to end (in a resident
	 * slot's runner, which shares the run's cgroup and CPUs, they are in
	 * the cgroup's pressure too, keeper_runner.h).
	 */
	int self_stat_fd;
	int64_t self_delay_ns;
	int64_t self_window_delay_ns;
	int64_t self_start_delay, self_wait_delay; /* at start, at epoll */
	bool opened;				   /* rg_supervisor_open() */
	bool exited;
	bool aborting;
	bool wall_hard_hit;
	int received_signal;
	int status;
	struct rusage rusage;
};

/*
 * The event loop's own fds (epoll, the wall and grace timers, this
 * thread's schedstat), which no run decides: a resident slot's runner
 * makes them while it waits for its call, not in it.
 */
int rg_supervisor_open(struct rg_supervisor *sup, struct rg_error *err);

/*
 * Create the fds (before the child exists, outside the timed window),
 * unless sup was opened above; else it must be zeroed. signal_fd: a
 * signalfd for the handled signals (taken over, closed on failure too),
 * or -1.
 */
int rg_supervisor_init(struct rg_supervisor *sup, const struct rg_config *cfg,
		       int signal_fd, struct rg_error *err);

/*
 * Watch the command's streams: before the child exists, so that streams
 * that became readable before we first wait are forwarded in that order.
 */
int rg_supervisor_watch_streams(struct rg_supervisor *sup,
				struct rg_stream streams[2],
				struct rg_error *err);

/* Watch this child, in this slot. */
int rg_supervisor_attach(struct rg_supervisor *sup, struct rg_child *child,
			 struct rg_slot *slot, struct rg_error *err);

/*
 * Start the wall clock (at *start, CLOCK_MONOTONIC, if the child took it;
 * NULL: now) and arm the hard wall timer.
 */
int rg_supervisor_start(struct rg_supervisor *sup,
			const struct timespec *start, struct rg_error *err);

/*
 * Run until the child exits; the wall clock stops at that moment. Then
 * reap it (status and rusage).
 */
int rg_supervisor_run(struct rg_supervisor *sup, struct rg_error *err);

/* Signals that arrived and were not acted on yet count as received. */
void rg_supervisor_collect_signals(struct rg_supervisor *sup);

void rg_supervisor_close(struct rg_supervisor *sup);

#endif
