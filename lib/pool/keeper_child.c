/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "keeper_child.h"

#include <errno.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "keeper_proto.h"
#include "keeper_wire.h"
#include "slot.h"
#include "util.h"
#include "waits.h"

/* The release's fds, in this order (rg_waiting_child_release). */
enum { GO_PLAN, GO_STDIN, GO_CWD, GO_FDS };

/* -- the child's side ------------------------------------------------ */

static _Noreturn void refuse(int report_fd, const struct rg_error *err)
{
	struct rg_report r = { .kind = RG_REPORT_SETUP_FAILED,
			       .errnum = err->errnum };

	/* cut to the record's size, as the child's own messages are */
	memcpy(r.message, err->message, sizeof(r.message) - 1);
	while (write(report_fd, &r, sizeof(r)) < 0 && errno == EINTR)
		;
	_exit(255);
}

/* The run's plan as the runner has it (keeper_runner.c: run). */
static _Noreturn void run(const struct rg_spawn_pipes *p, const int *fds,
			  size_t nfds, pid_t parent, int64_t released_cpu_ns,
			  const struct rlimit *rlimits)
{
	static const struct rg_slot_ops no_ops = { 0 };
	struct rg_error err = { 0 };
	struct rg_wire_plan w;
	struct rg_slot slot;
	struct rg_child_fds cf = {
		.report_fd = p->report[1],
		.go_fd = -1,
		.output_fd = { p->out[0][1], p->out[1][1] },
		.parent_fd = { -1, -1, -1, -1 },
		.prepared = true,
		.released_cpu_ns = released_cpu_ns,
	};

	memcpy(cf.rlimits, rlimits, sizeof(cf.rlimits));
	if (nfds != GO_FDS) {
		rg_fail(&err, EPROTO, "runner: a release without its files");
		refuse(p->report[1], &err);
	}
	if (rg_wire_decode(fds[GO_PLAN], &w, &err) < 0)
		refuse(p->report[1], &err);
	close(fds[GO_PLAN]);
	/* in the slot's cgroup and namespaces already: it joins none */
	rg_slot_init(&slot, &no_ops);
	slot.namespaces_outlive_run = true;
	w.plan.slot = &slot;
	w.plan.stdin_fd = w.stdin_closed ? -1 : fds[GO_STDIN];
	w.caller.cwd_fd = fds[GO_CWD];
	w.plan.caller = &w.caller;
	w.plan.parent_pid = parent;
	w.plan.seccomp = NULL; /* installed already, or none asked */
	rg_child_main(&w.plan, &cf);
}

static _Noreturn void wait_for_run(const struct rg_spawn_pipes *p, int sock,
				   const struct sock_fprog *seccomp,
				   int cap_last, pid_t parent)
{
	struct rlimit rlimits[RLIM_NLIMITS];
	int fds[GO_FDS];
	size_t nfds = 0;
	const char *step;
	int errnum;
	char go;

	/* fd 0 is the slot's socket until the runner has its client */
	dup2(STDOUT_FILENO, STDIN_FILENO);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    getppid() != parent)
		_exit(255);
	/* a failure shows as a child gone: the run forks one anew */
	if (rg_child_prepare(seccomp, cap_last, rlimits, &step, &errnum) < 0)
		_exit(255);
	if (rg_keeper_recv(sock, &go, 1, fds, GO_FDS, &nfds) != 1)
		_exit(0); /* the runner is gone, or took another child */
	run(p, fds, nfds, parent, rg_thread_cpu_ns(), rlimits);
}

/* -- the runner's side ----------------------------------------------- */

static void close_ends(struct rg_spawn_pipes *p, int end)
{
	rg_close_fd(&p->report[end]);
	rg_close_fd(&p->go[0]);
	rg_close_fd(&p->go[1]);
	rg_close_fd(&p->out[0][end]);
	rg_close_fd(&p->out[1][end]);
}

static long clone_child(int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};

	return syscall(SYS_clone3, &args, sizeof(args));
}

int rg_waiting_child_fork(struct rg_waiting_child *w,
			  const struct sock_fprog *seccomp, int cap_last,
			  struct rg_error *err)
{
	pid_t parent = getpid();
	int sv[2];
	long pid;

	memset(w, 0, sizeof(*w));
	w->pidfd = w->go_sock = w->stat_fd = -1;
	if (rg_spawn_pipes_open(&w->pipes, err) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		rg_spawn_pipes_close(&w->pipes);
		return rg_fail(err, errno, "runner: a socket for the child");
	}
	pid = clone_child(&w->pidfd);
	if (pid == 0) {
		close(sv[0]);
		close_ends(&w->pipes, 0);
		wait_for_run(&w->pipes, sv[1], seccomp, cap_last, parent);
	}
	close(sv[1]);
	close_ends(&w->pipes, 1);
	if (pid < 0) {
		int errnum = errno;

		close(sv[0]);
		rg_spawn_pipes_close(&w->pipes);
		w->pidfd = -1;
		return rg_fail(err, errnum, "runner: cannot fork the child");
	}
	w->pid = (pid_t)pid;
	w->go_sock = sv[0];
	w->filtered = seccomp != NULL;
	w->stat_fd = rg_task_stat_open_pidfd(w->pidfd);
	return 0;
}

bool rg_waiting_child_fits(const struct rg_waiting_child *w,
			   bool syscall_filter)
{
	struct pollfd p = { .fd = w->pidfd, .events = POLLIN };

	/* a pidfd becomes readable when its process has exited */
	return w->pid > 0 && w->filtered == syscall_filter &&
	       poll(&p, 1, 0) == 0;
}

void rg_waiting_child_take(struct rg_waiting_child *w, struct rg_child *child)
{
	w->pipes.go[1] = w->go_sock;
	rg_spawn_pipes_hand_over(&w->pipes, w->pid, w->pidfd, child);
	child->ready_after_release = true;
	child->stat_fd = w->stat_fd;
	memset(w, 0, sizeof(*w));
	w->pidfd = w->go_sock = w->stat_fd = -1;
}

int rg_waiting_child_release(struct rg_child *child, const int fds[3],
			     struct rg_error *err)
{
	ssize_t n = rg_keeper_send(child->go_fd, "g", 1, fds, GO_FDS);

	rg_close_fd(&child->go_fd);
	if (n != 1)
		return rg_fail(err, errno ? errno : EPIPE,
			       "releasing the child");
	return 0;
}

void rg_waiting_child_discard(struct rg_waiting_child *w)
{
	if (w->pid > 0) {
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
		while (waitpid(w->pid, NULL, __WALL) < 0 && errno == EINTR)
			;
		w->pid = 0;
	}
	rg_close_fd(&w->pidfd);
	rg_close_fd(&w->go_sock);
	rg_close_fd(&w->stat_fd);
	rg_spawn_pipes_close(&w->pipes);
}
