/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "run/supervise.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "base/base.h"
#include "run/slot.h"
#include "run/waits.h"

enum watch_tag {
	TAG_PIDFD = 1,
	TAG_WALL_TIMER,
	TAG_GRACE_TIMER,
	TAG_SAMPLE_TIMER,
	TAG_SIGNAL,
	TAG_CANCEL,
	TAG_STREAM0, /* + stream index */
};

static int watch(struct rg_supervisor *sup, int fd, uint64_t tag,
		 struct rg_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	if (epoll_ctl(sup->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return rg_fail(err, errno, "epoll_ctl");
	return 0;
}

static void unwatch(struct rg_supervisor *sup, int fd)
{
	epoll_ctl(sup->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

int rg_supervisor_open(struct rg_supervisor *sup, struct rg_error *err)
{
	memset(sup, 0, sizeof(*sup));
	sup->signal_fd = sup->notify_sock = sup->sample_timer_fd = -1;
	sup->self_stat_fd = rg_task_stat_open_self();
	sup->self_delay_ns = sup->self_window_delay_ns = -1;
	sup->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	sup->wall_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sup->grace_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (sup->epoll_fd < 0 || sup->wall_timer_fd < 0 ||
	    sup->grace_timer_fd < 0) {
		int errnum = errno;

		rg_supervisor_close(sup);
		return rg_fail(err, errnum, "creating the event loop");
	}
	if (watch(sup, sup->wall_timer_fd, TAG_WALL_TIMER, err) < 0 ||
	    watch(sup, sup->grace_timer_fd, TAG_GRACE_TIMER, err) < 0) {
		rg_supervisor_close(sup);
		return -1;
	}
	sup->opened = true;
	return 0;
}

int rg_supervisor_init(struct rg_supervisor *sup, const struct rg_config *cfg,
		       int signal_fd, struct rg_error *err)
{
	if (!sup->opened && rg_supervisor_open(sup, err) < 0) {
		if (signal_fd >= 0)
			close(signal_fd);
		return -1;
	}
	sup->cfg = cfg;
	sup->signal_fd = signal_fd;
	if ((signal_fd >= 0 && watch(sup, signal_fd, TAG_SIGNAL, err) < 0) ||
	    (cfg->cancel_fd >= 0 &&
	     watch(sup, cfg->cancel_fd, TAG_CANCEL, err) < 0)) {
		rg_supervisor_close(sup);
		return -1;
	}
	return 0;
}

int rg_supervisor_watch_streams(struct rg_supervisor *sup,
				struct rg_stream streams[2],
				struct rg_error *err)
{
	sup->streams = streams;
	for (int i = 0; i < 2; i++)
		if (watch(sup, streams[i].pipe_fd, TAG_STREAM0 + i, err) < 0)
			return -1;
	return 0;
}

int rg_supervisor_attach(struct rg_supervisor *sup, struct rg_child *child,
			 struct rg_slot *slot, struct rg_error *err)
{
	sup->child = child;
	sup->slot = slot;
	if (watch(sup, child->pidfd, TAG_PIDFD, err) < 0)
		return -1;
	if (rg_cgroup_sample_interval_ms(slot->cgroup)) {
		sup->sample_timer_fd = timerfd_create(CLOCK_MONOTONIC,
						      TFD_CLOEXEC);
		if (sup->sample_timer_fd < 0)
			return rg_fail(err, errno, "creating the sample timer");
		if (watch(sup, sup->sample_timer_fd, TAG_SAMPLE_TIMER, err) < 0)
			return -1;
	}
	return 0;
}

static struct timespec seconds_to_timespec(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	if (ts.tv_sec == 0 && ts.tv_nsec == 0)
		ts.tv_nsec = 1; /* zero would disarm the timer */
	return ts;
}

static int arm_timer(int fd, const struct timespec *base, double seconds,
		     struct rg_error *err)
{
	struct timespec d = seconds_to_timespec(seconds);
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = base->tv_sec + d.tv_sec;
	its.it_value.tv_nsec = base->tv_nsec + d.tv_nsec;
	if (its.it_value.tv_nsec >= 1000000000L) {
		its.it_value.tv_sec++;
		its.it_value.tv_nsec -= 1000000000L;
	}
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return rg_fail(err, errno, "arming a timer");
	return 0;
}

/* Periodic, first expiry one interval from now. */
static int arm_sampling(struct rg_supervisor *sup, struct rg_error *err)
{
	unsigned int ms = rg_cgroup_sample_interval_ms(sup->slot->cgroup);
	struct itimerspec its;

	its.it_interval = seconds_to_timespec(ms / 1000.0);
	its.it_value = its.it_interval;
	if (timerfd_settime(sup->sample_timer_fd, 0, &its, NULL) < 0)
		return rg_fail(err, errno, "arming the sample timer");
	return 0;
}

int rg_supervisor_start(struct rg_supervisor *sup,
			const struct timespec *start, struct rg_error *err)
{
	sup->self_start_delay = rg_task_run_delay(sup->self_stat_fd);
	if (start)
		sup->start = *start;
	else
		clock_gettime(CLOCK_MONOTONIC, &sup->start);
	if (sup->sample_timer_fd >= 0 && arm_sampling(sup, err) < 0)
		return -1;
	if (sup->cfg->has_wall_limit)
		return arm_timer(sup->wall_timer_fd, &sup->start,
				 sup->cfg->wall_hard, err);
	return 0;
}

/* Everything in the run's cgroup, escaped process groups included. */
static int kill_everything(struct rg_supervisor *sup, struct rg_error *err)
{
	rg_log(sup->cfg, RG_LOG_DEBUG, "sending SIGKILL");
	kill(-sup->child->pid, SIGKILL);
	return rg_slot_kill_run(sup->slot, err);
}

static int begin_abort(struct rg_supervisor *sup, int sig, struct rg_error *err)
{
	struct timespec now;

	if (sup->aborting)
		return kill_everything(sup, err); /* asked twice: no grace */
	sup->aborting = true;
	if (!sup->received_signal)
		sup->received_signal = sig;
	rg_log(sup->cfg, RG_LOG_DEBUG, "sending SIGTERM");
	/* the process group, as DOMjudge; SIGCONT so stopped ones see it */
	if (kill(-sup->child->pid, SIGTERM) < 0 && errno != ESRCH)
		return rg_fail(err, errno, "sending SIGTERM");
	kill(-sup->child->pid, SIGCONT);
	if (sup->cfg->kill_grace <= 0)
		return kill_everything(sup, err);
	clock_gettime(CLOCK_MONOTONIC, &now);
	return arm_timer(sup->grace_timer_fd, &now, sup->cfg->kill_grace, err);
}

static int on_wall_timeout(struct rg_supervisor *sup, struct rg_error *err)
{
	pid_t notify = sup->cfg->timeout_notify_pid;
	uint64_t expirations;

	if (read(sup->wall_timer_fd, &expirations, sizeof(expirations)) < 0)
		return 0; /* spurious */
	sup->wall_hard_hit = true;
	if (notify > 0 && sup->notify_sock >= 0) {
		uint32_t word = RG_SUPERVISOR_NOTIFY;

		rg_log(sup->cfg, RG_LOG_DEBUG,
		       "SIGUSR1 to pid %d by the client", (int)notify);
		send(sup->notify_sock, &word, sizeof(word),
		     MSG_NOSIGNAL | MSG_DONTWAIT);
	} else if (notify > 0) {
		rg_log(sup->cfg, RG_LOG_DEBUG, "sending SIGUSR1 to pid %d",
		       (int)notify);
		kill(notify, SIGUSR1);
	}
	rg_log(sup->cfg, RG_LOG_WARNING,
	       "timelimit exceeded (hard wall time): aborting command");
	return begin_abort(sup, SIGALRM, err);
}

static int on_grace_expired(struct rg_supervisor *sup, struct rg_error *err)
{
	uint64_t expirations;

	if (read(sup->grace_timer_fd, &expirations, sizeof(expirations)) < 0)
		return 0;
	return kill_everything(sup, err);
}

static int on_sample(struct rg_supervisor *sup)
{
	uint64_t expirations;

	if (read(sup->sample_timer_fd, &expirations, sizeof(expirations)) < 0)
		return 0;
	rg_cgroup_sample(sup->slot->cgroup);
	return 0;
}

static int cancel(struct rg_supervisor *sup, struct rg_error *err)
{
	rg_log(sup->cfg, RG_LOG_WARNING, "run cancelled: aborting command");
	return begin_abort(sup, SIGTERM, err);
}

/*
 * A resident slot's runner hears from its client here (supervise.h): a
 * client gone (EOF) leaves nobody to wait for the run, which dies at once.
 */
static int on_signal(struct rg_supervisor *sup, struct rg_error *err)
{
	struct signalfd_siginfo si;
	ssize_t n = read(sup->signal_fd, &si, sizeof(si));

	if (n == 0) {
		unwatch(sup, sup->signal_fd);
		rg_log(sup->cfg, RG_LOG_WARNING,
		       "runguard is gone: killing "
		       "the command");
		sup->aborting = true;
		return kill_everything(sup, err);
	}
	if (n != (ssize_t)sizeof(si))
		return 0;
	if (si.ssi_signo == 0)
		return cancel(sup, err);
	rg_log(sup->cfg, RG_LOG_WARNING,
	       "received signal %u: aborting command", si.ssi_signo);
	return begin_abort(sup, (int)si.ssi_signo, err);
}

static int on_cancel(struct rg_supervisor *sup, struct rg_error *err)
{
	unwatch(sup, sup->cfg->cancel_fd);
	return cancel(sup, err);
}

/*
 * At EOF the stream closes its pipe, which leaves the epoll set with it:
 * its read end is ours alone (the child's copy is gone with its exec, or
 * closed first), so no open file of it stays registered.
 */
static int on_stream(struct rg_supervisor *sup, int i, struct rg_error *err)
{
	return rg_stream_pump(&sup->streams[i], err) < 0 ? -1 : 0;
}

static int dispatch(struct rg_supervisor *sup, uint64_t tag,
		    struct rg_error *err)
{
	/* once the command has exited, a timer firing late means nothing */
	if (sup->exited && (tag == TAG_WALL_TIMER || tag == TAG_GRACE_TIMER ||
			    tag == TAG_SAMPLE_TIMER))
		return 0;
	switch (tag) {
	case TAG_PIDFD:
		return 0;
	case TAG_WALL_TIMER:
		return on_wall_timeout(sup, err);
	case TAG_GRACE_TIMER:
		return on_grace_expired(sup, err);
	case TAG_SAMPLE_TIMER:
		return on_sample(sup);
	case TAG_SIGNAL:
		return on_signal(sup, err);
	case TAG_CANCEL:
		return on_cancel(sup, err);
	default:
		return on_stream(sup, (int)(tag - TAG_STREAM0), err);
	}
}

static int reap_child(struct rg_supervisor *sup, struct rg_error *err)
{
	return rg_slot_reap(sup->slot, sup->child, &sup->status, &sup->rusage,
			    err);
}

static int64_t delay_since(int64_t then, int64_t now)
{
	return then < 0 || now < then ? -1 : now - then;
}

/* Our waits to run: the wake-up for the run's end, and the window's. */
static void own_delay_end(struct rg_supervisor *sup)
{
	int64_t now = rg_task_run_delay(sup->self_stat_fd);

	sup->self_delay_ns = delay_since(sup->self_wait_delay, now);
	sup->self_window_delay_ns = delay_since(sup->self_start_delay, now);
}

int rg_supervisor_run(struct rg_supervisor *sup, struct rg_error *err)
{
	struct epoll_event events[8];

	while (!sup->exited) {
		int n;

		/* what we wait from here on is the wake-up's, not the run's */
		sup->self_wait_delay = rg_task_run_delay(sup->self_stat_fd);
		n = epoll_wait(sup->epoll_fd, events, 8, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return rg_fail(err, errno, "epoll_wait");
		for (int i = 0; i < n; i++)
			if (events[i].data.u64 == TAG_PIDFD && !sup->exited) {
				/* the wall clock stops here, before anything else */
				clock_gettime(CLOCK_MONOTONIC, &sup->end);
				sup->exited = true;
				own_delay_end(sup);
				rg_cgroup_stop(sup->slot->cgroup);
			}
		for (int i = 0; i < n; i++)
			if (dispatch(sup, events[i].data.u64, err) < 0)
				return -1;
	}
	/* the timers may fire still: nobody waits on them any more */
	return reap_child(sup, err);
}

void rg_supervisor_collect_signals(struct rg_supervisor *sup)
{
	struct signalfd_siginfo si;

	if (sup->signal_fd < 0)
		return;
	while (read(sup->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (!sup->received_signal)
			sup->received_signal = (int)si.ssi_signo;
}

void rg_supervisor_close(struct rg_supervisor *sup)
{
	rg_close_fd(&sup->epoll_fd);
	rg_close_fd(&sup->wall_timer_fd);
	rg_close_fd(&sup->grace_timer_fd);
	rg_close_fd(&sup->sample_timer_fd);
	rg_close_fd(&sup->signal_fd);
	rg_close_fd(&sup->self_stat_fd);
	sup->opened = false;
}
