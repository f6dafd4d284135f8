/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper process (runguard-keeper), exec'd by keeper.c's
 * rg_keeper_start into its slot's namespaces and cgroup with the slot's
 * socket listening on fd 0 and the ready pipe on fd 1.
 *
 * A run is forked by a runner: a child of ours, PID 1 of a PID namespace
 * of the run's own, that forks the run's child, reaps it and every
 * orphan of the run, and sends the child's status to the client. So:
 * - we never wait for a run: what runs did (their CPU time, faults)
 *   would add up in our /proc/<pid>/stat, which every run may read where
 *   /proc is bind-mounted into its chroot (DOMjudge's); the kernel reaps
 *   the runner (SIGCHLD ignored);
 * - one SIGKILL to the runner ends the whole run (the kernel kills its
 *   PID namespace), and the run's pids start at 2 every time;
 * - the run outlives us: if the keeper dies (an admin's kill), the runner
 *   goes on and its client still gets the run's own result from it.
 */
#include "keeper_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "keeper_proto.h"
#include "keeper_wire.h"
#include "ns.h"
#include "slot.h"
#include "syscall_filter.h"
#include "util.h"
#include "waits.h"

/* What a runner tells the keeper: that the child started (with its pidfd). */
struct runner_started {
	int32_t errnum;
	char message[512];
};

struct keeper {
	int conn;
	int runner_sock;  /* the run in flight's runner, or -1 */
	int runner_pidfd; /* and its pidfd */
	struct timespec cpu_at_spawn;
	struct rg_slot slot; /* joined already: the child inherits it all */
};

static int64_t cpu_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int64_t cpu_ns_since(const struct timespec *since)
{
	return cpu_ns() - ((int64_t)since->tv_sec * 1000000000 +
			   since->tv_nsec);
}

static void reply(struct keeper *k, struct rg_keeper_reply *r, const int *fds,
		  size_t nfds)
{
	r->version = RG_KEEPER_PROTO_VERSION;
	rg_keeper_send(k->conn, r, sizeof(*r), fds, nfds);
}

static void reply_failure(struct keeper *k, int errnum, const char *message)
{
	struct rg_keeper_reply r = { .errnum = errnum ? errnum : EIO };

	snprintf(r.message, sizeof(r.message), "%s", message);
	reply(k, &r, NULL, 0);
}

/*
 * The run in flight, all of it: SIGKILL to its runner kills the runner's
 * PID namespace, and the runner's exit completes only once that is empty.
 * With SIGCHLD ignored, wait returns ECHILD once every child of ours (the
 * runners) is gone. Never kill(-1): we live in the host's PID namespace.
 */
static void end_run(struct keeper *k)
{
	if (k->runner_pidfd >= 0)
		syscall(SYS_pidfd_send_signal, k->runner_pidfd, SIGKILL, NULL,
			0);
	for (;;) {
		pid_t pid = waitpid(-1, NULL, __WALL);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break; /* ECHILD: no runner left */
	}
	rg_close_fd(&k->runner_sock);
	rg_close_fd(&k->runner_pidfd);
}

/* -- the runner ------------------------------------------------------ */

static long clone_child(int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};

	return syscall(SYS_clone3, &args, sizeof(args));
}

static int start_child(struct keeper *k, struct rg_wire_plan *w,
		       const int *fds, int *pidfd, pid_t *pid,
		       struct rg_error *err)
{
	struct rg_child_fds child_fds = {
		.report_fd = fds[RG_KEEPER_FD_REPORT],
		.go_fd = fds[RG_KEEPER_FD_GO],
		.output_fd = { fds[RG_KEEPER_FD_STDOUT],
			       fds[RG_KEEPER_FD_STDERR] },
		.parent_fd = { -1, -1, -1, -1 },
	};
	long rc;

	w->plan.slot = &k->slot;
	w->plan.stdin_fd = w->stdin_closed ? -1 : fds[RG_KEEPER_FD_STDIN];
	w->caller.cwd_fd = fds[RG_KEEPER_FD_CWD];
	w->plan.parent_pid = getpid();
	if (w->syscall_filter &&
	    rg_seccomp_program(&w->plan.seccomp, true, err) < 0)
		return -1;
	rc = clone_child(pidfd);
	if (rc < 0)
		return rg_fail(err, errno, "cannot fork");
	if (rc == 0)
		rg_child_main(&w->plan, &child_fds);
	*pid = (pid_t)rc;
	return 0;
}

/*
 * Every ended child of ours reaped; the run's child's end kept in *d,
 * and its wait for a CPU (from stat_fd) read before it is reaped.
 */
static bool reap_children(pid_t pid, int stat_fd, struct rg_runner_done *d)
{
	siginfo_t info = { 0 };
	struct rusage ru;
	bool done = false;
	int status;
	pid_t got;

	if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) ==
		    0 &&
	    info.si_pid == pid)
		d->run_delay_ns = rg_task_run_delay(stat_fd);

	while ((got = wait4(-1, &status, WNOHANG | __WALL, &ru)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			/* ECHILD: all reaped; without the child, not ours */
			if (!done)
				d->errnum = errno;
			return true;
		}
		if (got == pid) {
			d->status = status;
			d->rusage = ru;
			done = true;
		}
	}
	return done;
}

/*
 * Until the run's child has ended, reaping the orphans the run leaves
 * (we are their init); then its status to the client, and on reaping
 * until we are killed. The client's end closing (runguard died, and the
 * keeper with it or not) ends the run: kill(-1) reaches our PID
 * namespace only.
 */
static _Noreturn void runner_wait(pid_t pid, int stat_fd, int sock, int sfd)
{
	struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
			       { .fd = sock, .events = 0 } };
	struct rg_runner_done d = { .run_delay_ns = -1 };
	struct signalfd_siginfo info;
	bool done = reap_children(pid, stat_fd, &d), sent = false;

	for (;;) {
		if (done && !sent) {
			d.cpu_ns = cpu_ns();
			rg_keeper_send(sock, &d, sizeof(d), NULL, 0);
			sent = true;
		}
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents & (POLLHUP | POLLERR))
			break;
		if (p[0].revents & POLLIN) {
			while (read(sfd, &info, sizeof(info)) > 0)
				;
			done |= reap_children(pid, stat_fd, &d);
		}
	}
	kill(-1, SIGKILL);
	_exit(1);
}

/*
 * The runner, PID 1 of the run's PID namespace: the run's child is ours,
 * and so are its exit status and rusage.
 */
static _Noreturn void runner_main(struct keeper *k, struct rg_wire_plan *w,
				  const int *fds, int sock)
{
	struct runner_started s = { 0 };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct rg_error err;
	sigset_t chld;
	int pidfd = -1, sfd, stat_fd;
	pid_t pid = -1;

	prctl(PR_SET_NAME, RG_RUNNER_NAME, 0, 0, 0);
	/* we reap (SIGCHLD blocked, read from a signalfd); the child must
	 * not start with SIGCHLD ignored */
	sigaction(SIGCHLD, &dfl, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	close(0); /* the slot's listening socket */
	rg_close_fd(&k->conn);
	if (sfd < 0)
		rg_fail(&err, errno, "runner: signalfd");
	if (sfd < 0 || start_child(k, w, fds, &pidfd, &pid, &err) < 0) {
		s.errnum = err.errnum ? err.errnum : EIO;
		snprintf(s.message, sizeof(s.message), "%.500s", err.message);
		rg_keeper_send(sock, &s, sizeof(s), NULL, 0);
		_exit(1);
	}
	if (rg_keeper_send(sock, &s, sizeof(s), &pidfd, 1) < 0)
		_exit(1); /* our PID namespace, the child in it, dies with us */
	/* its pid in our /proc, the host's (the child's is 2 to us) */
	stat_fd = rg_task_stat_open(rg_pidfd_pid(pidfd));
	close(pidfd);
	/* the caller's fds are the child's: holding them would keep its
	 * output pipes open, and its stdin and directory */
	for (int i = 0; i < RG_KEEPER_SPAWN_FDS; i++)
		close(fds[i]);
	runner_wait(pid, stat_fd, sock, sfd);
}

/* -- requests -------------------------------------------------------- */

static long clone_runner(int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_NEWPID | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};

	return syscall(SYS_clone3, &args, sizeof(args));
}

static int fork_runner(struct keeper *k, struct rg_wire_plan *w,
		       const int *fds, struct rg_error *err)
{
	int sv[2], pidfd = -1;
	long pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return rg_fail(err, errno, "keeper: socketpair");
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &k->cpu_at_spawn);
	pid = clone_runner(&pidfd);
	if (pid == 0) {
		close(sv[0]);
		runner_main(k, w, fds, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return rg_fail(err, errno, "keeper: cannot fork the runner");
	}
	k->runner_sock = sv[0];
	k->runner_pidfd = pidfd;
	return 0;
}

static void do_spawn(struct keeper *k, int *fds, size_t nfds)
{
	struct rg_keeper_reply r = { 0 };
	struct runner_started s = { 0 };
	struct rg_wire_plan w;
	struct rg_error err;
	int pidfd = -1;
	size_t got;

	if (nfds != RG_KEEPER_SPAWN_FDS || k->runner_pidfd >= 0) {
		reply_failure(k, EPROTO, "keeper: a spawn out of turn");
		return;
	}
	if (rg_wire_decode(fds[RG_KEEPER_FD_PLAN], &w, &err) < 0 ||
	    fork_runner(k, &w, fds, &err) < 0) {
		rg_wire_free(&w);
		reply_failure(k, err.errnum, err.message);
		return;
	}
	rg_wire_free(&w);
	if (rg_keeper_recv(k->runner_sock, &s, sizeof(s), &pidfd, 1, &got) !=
		    (ssize_t)sizeof(s) ||
	    s.errnum || !got) {
		if (got)
			close(pidfd);
		s.message[sizeof(s.message) - 1] = '\0';
		end_run(k);
		reply_failure(k, s.errnum ? s.errnum : EIO,
			      s.errnum ? s.message : "keeper: the runner died");
		return;
	}
	/* the client reads the result from the runner itself */
	reply(k, &r, (int[]){ pidfd, k->runner_sock, k->runner_pidfd },
	      RG_KEEPER_REPLY_FDS);
	close(pidfd);
	rg_close_fd(&k->runner_sock);
}

static void do_kill(struct keeper *k)
{
	struct rg_keeper_reply r = { 0 };
	bool ran = k->runner_pidfd >= 0;

	end_run(k);
	/* in the slot's cgroup: not the run's, and measured exactly */
	r.keeper_cpu_ns = ran ? cpu_ns_since(&k->cpu_at_spawn) : 0;
	reply(k, &r, NULL, 0);
}

/* In the slot's IPC and net namespaces already: no setns. */
static void do_scrub(struct keeper *k)
{
	struct rg_keeper_reply r = { 0 };
	struct rg_error err;

	if (k->runner_pidfd >= 0) {
		reply_failure(k, EPROTO, "keeper: a scrub while a run is out");
		return;
	}
	if (rg_ns_scrub_here(&r.scrub, &err) < 0) {
		reply_failure(k, err.errnum, err.message);
		return;
	}
	reply(k, &r, NULL, 0);
}

static void do_hello(struct keeper *k)
{
	struct rg_keeper_reply r = { 0 };

	reply(k, &r, NULL, 0);
}

/* One runguard, until it closes the connection or dies. */
static void serve_client(struct keeper *k)
{
	struct rg_keeper_request req;
	int fds[RG_KEEPER_SPAWN_FDS];
	char message[128];
	size_t nfds;
	ssize_t n;

	for (;;) {
		n = rg_keeper_recv(k->conn, &req, sizeof(req), fds,
				   RG_KEEPER_SPAWN_FDS, &nfds);
		if (n != (ssize_t)sizeof(req)) {
			for (size_t i = 0; i < nfds; i++)
				close(fds[i]);
			return; /* EOF: the client is gone */
		}
		if (req.version != RG_KEEPER_PROTO_VERSION) {
			snprintf(message, sizeof(message), "a keeper of another "
				 "runguard build (protocol %u, this is %u)",
				 RG_KEEPER_PROTO_VERSION, req.version);
			reply_failure(k, EPROTO, message);
		} else if (req.op == RG_KEEPER_HELLO) {
			do_hello(k);
		} else if (req.op == RG_KEEPER_SPAWN) {
			do_spawn(k, fds, nfds);
		} else if (req.op == RG_KEEPER_KILL) {
			do_kill(k);
		} else if (req.op == RG_KEEPER_SCRUB) {
			do_scrub(k);
		} else {
			reply_failure(k, EPROTO, "keeper: an unknown request");
		}
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
	}
}

static bool peer_is_root(int conn)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       cred.uid == 0;
}

static _Noreturn void serve(int listen_fd)
{
	struct keeper k = { .conn = -1, .runner_sock = -1,
			    .runner_pidfd = -1 };
	const struct sock_fprog *prog;
	struct rg_error ignored;

	/* once here: a runner is a new fork each run, its cache would go */
	(void)rg_seccomp_program(&prog, true, &ignored);
	rg_slot_init(&k.slot, NULL);
	k.slot.namespaces_outlive_run = true;
	for (;;) {
		k.conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (k.conn < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				sleep(1); /* EMFILE and the like: try again */
			continue;
		}
		if (peer_is_root(k.conn))
			serve_client(&k);
		/* nothing of a run outlives its client */
		end_run(&k);
		rg_close_fd(&k.conn);
	}
}

/* -- the executable -------------------------------------------------- */

/* What rg_keeper_start hands over: anything else is a person at a shell. */
static bool started_by_runguard(int argc)
{
	int listening = 0;
	socklen_t len = sizeof(listening);
	struct stat st;

	return argc == 3 && geteuid() == 0 &&
	       getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 &&
	       listening && fstat(1, &st) == 0 && S_ISFIFO(st.st_mode);
}

int rg_keeper_main(int argc, char **argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	int errnum = 0;

	(void)argv; /* pool directory and slot: for ps, not for us */
	if (!started_by_runguard(argc)) {
		fprintf(stderr, "%s: the resident process of a runguard pool "
			"slot, started by librunguard (in the slot's "
			"namespaces, with the slot's socket and a ready pipe); "
			"not a command to run by hand\n", RG_KEEPER_NAME);
		return 2;
	}
	/* runs are reaped by the kernel, never by us (see the top) */
	if (sigaction(SIGCHLD, &ign, NULL) < 0)
		errnum = errno;
	prctl(PR_SET_NAME, RG_KEEPER_NAME, 0, 0, 0);
	if (write(1, &errnum, sizeof(errnum)) != sizeof(errnum) || errnum)
		return 1;
	/* the ready pipe's end goes: 1 becomes /dev/null as 2 is */
	dup2(2, 1);
	serve(0);
}
