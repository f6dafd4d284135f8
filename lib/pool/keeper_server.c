/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper process (runguard-keeper), exec'd by keeper.c's
 * rg_keeper_start into its slot's namespaces and cgroup with the slot's
 * socket listening on fd 0, the ready pipe on fd 1 and the pool
 * directory on fd 4. It opens the slot's cgroup once (keeper_slot.h).
 *
 * A run is one RUN request: a runner (keeper_runner.h), forked into a PID
 * namespace of the run's own, supervises it and answers the client; we
 * wait for the runner to end, then reset the slot before we take the next
 * request. So:
 * - we never wait() for a run: what runs did (their CPU time, faults)
 *   would add up in our /proc/<pid>/stat, which every run may read where
 *   /proc is bind-mounted into its chroot (DOMjudge's); the kernel reaps
 *   the runner (SIGCHLD ignored);
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <unistd.h>

#include "error.h"
#include "keeper_proto.h"
#include "keeper_runner.h"
#include "keeper_slot.h"
#include "keeper_wire.h"
#include "ns.h"
#include "result.h"
#include "syscall_filter.h"
#include "util.h"

/* the pool directory, as rg_keeper_start hands it over */
#define POOL_DIR_FD 4

struct keeper {
	int conn;
	int runner_pidfd; /* the run in flight's runner, or -1 */
	struct rg_keeper_slot slot;
	/*
	 * Each runner writes a byte once it has sent the result: read end
	 * (non-blocking) and write end. Not a shared page: a keeper's shmem
	 * would read as tmpfs pages a run left (rg_cgroup_needs_recycle).
	 */
	int replied[2];
};

static void reply(struct keeper *k, struct rg_keeper_reply *r)
{
	r->version = RG_KEEPER_PROTO_VERSION;
	rg_keeper_send(k->conn, r, sizeof(*r), NULL, 0);
}

static void reply_failure(struct keeper *k, int errnum, const char *message)
{
	struct rg_keeper_reply r = { .errnum = errnum ? errnum : EIO };

	snprintf(r.message, sizeof(r.message), "%s", message);
	reply(k, &r);
}

/* RUN's reply when no runner answers it (keeper_proto.h). */
static void run_failure(struct keeper *k, int errnum, const char *message)
{
	static struct rg_keeper_result r;

	memset(&r, 0, sizeof(r));
	r.errnum = errnum ? errnum : EIO;
	r.version = RG_KEEPER_PROTO_VERSION;
	r.result_size = sizeof(r.result);
	rg_result_init(&r.result);
	snprintf(r.message, sizeof(r.message), "%s", message);
	rg_keeper_send(k->conn, &r, offsetof(struct rg_keeper_result, log),
		       NULL, 0);
}

/*
 * The run in flight, all of it: SIGKILL to its runner kills the runner's
 * PID namespace, whose end the runner's exit waits for.
 */
static void end_run(struct keeper *k)
{
	struct pollfd p = { .fd = k->runner_pidfd, .events = POLLIN };

	if (k->runner_pidfd < 0)
		return;
	syscall(SYS_pidfd_send_signal, k->runner_pidfd, SIGKILL, NULL, 0);
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	rg_close_fd(&k->runner_pidfd);
}

/* Until the runner is gone (its pidfd readable): we read nothing else. */
static void wait_runner(struct keeper *k)
{
	struct pollfd p = { .fd = k->runner_pidfd, .events = POLLIN };

	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	rg_close_fd(&k->runner_pidfd);
}

static long clone_runner(int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_NEWPID | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};

	return syscall(SYS_clone3, &args, sizeof(args));
}

/*
 * After the run: the slot reset for the next, before we take the next
 * request (every holder of a slot we reset talks to us first, lease.c). A
 * slot we cannot make clean (keeper_slot.h) is left to its next holder: we
 * go, and it finds us gone.
 */
static void after_run(struct keeper *k)
{
	int flags = fcntl(k->conn, F_GETFL);
	struct rg_error err;

	char byte;

	if (read(k->replied[0], &byte, 1) != 1)
		run_failure(k, EIO, "the run's runner died");
	/* the runner read it non-blocking (keeper_runner.c) */
	if (flags >= 0 && (flags & O_NONBLOCK))
		fcntl(k->conn, F_SETFL, flags & ~O_NONBLOCK);
	if (rg_keeper_slot_reset(&k->slot, &err) < 0)
		_exit(0);
}

/* The run's files and directories are the runner's: we hold none of them. */
static void drop_run_fds(int *fds)
{
	for (int i = 0; i < RG_KEEPER_RUN_FDS; i++)
		rg_close_fd(&fds[i]);
}

static void do_run(struct keeper *k, int *fds, size_t nfds)
{
	struct rg_runner_args a = { .slot = &k->slot, .fds = fds,
				    .conn = k->conn,
				    .replied_fd = k->replied[1] };
	struct rg_wire_plan w;
	struct rg_error err;
	int pidfd = -1;
	long pid;

	if (nfds != RG_KEEPER_RUN_FDS || k->runner_pidfd >= 0) {
		run_failure(k, EPROTO, "keeper: a run out of turn");
		return;
	}
	if (rg_wire_decode(fds[RG_KEEPER_FD_PLAN], &w, &err) < 0) {
		run_failure(k, err.errnum, err.message);
		return;
	}
	a.wire = &w;
	if (rg_keeper_slot_ready(&k->slot, &a.held, &err) < 0) {
		rg_wire_free(&w);
		drop_run_fds(fds);
		run_failure(k, err.errnum, err.message);
		return;
	}
	pid = clone_runner(&pidfd);
	if (pid == 0)
		rg_runner_main(&a);
	rg_wire_free(&w);
	drop_run_fds(fds);
	if (pid < 0) {
		run_failure(k, errno, "keeper: cannot fork the runner");
		return;
	}
	k->runner_pidfd = pidfd;
	wait_runner(k);
	after_run(k);
}

/* Nothing of a run left in flight (a slot its holder left dirty). */
static void do_kill(struct keeper *k)
{
	struct rg_keeper_reply r = { 0 };

	end_run(k);
	reply(k, &r);
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
	reply(k, &r);
}

static void do_hello(struct keeper *k)
{
	struct rg_keeper_reply r = { 0 };

	reply(k, &r);
}

/* One runguard, until it closes the connection or dies. */
static void serve_client(struct keeper *k)
{
	struct rg_keeper_request req;
	int fds[RG_KEEPER_RUN_FDS];
	char message[128];
	size_t nfds;
	ssize_t n;

	for (;;) {
		n = rg_keeper_recv(k->conn, &req, sizeof(req), fds,
				   RG_KEEPER_RUN_FDS, &nfds);
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
		} else if (req.op == RG_KEEPER_RUN) {
			do_run(k, fds, nfds);
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

static _Noreturn void serve(int listen_fd, struct keeper *k)
{
	for (;;) {
		k->conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (k->conn < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				sleep(1); /* EMFILE and the like: try again */
			continue;
		}
		if (peer_is_root(k->conn))
			serve_client(k);
		/* nothing of a run outlives its client */
		end_run(k);
		rg_close_fd(&k->conn);
	}
}

/* What a keeper holds for its life; an errno if it cannot serve. */
static int set_up(struct keeper *k, const char *slot)
{
	const struct sock_fprog *prog;
	struct rg_error err;

	k->conn = k->runner_pidfd = -1;
	/* once here: a runner is a new fork each run, its cache would go */
	(void)rg_seccomp_program(&prog, true, &err);
	if (pipe2(k->replied, O_CLOEXEC) < 0 ||
	    fcntl(k->replied[0], F_SETFL, O_NONBLOCK) < 0)
		return errno;
	if (rg_keeper_slot_open(&k->slot, POOL_DIR_FD, slot, &err) < 0)
		return err.errnum ? err.errnum : EIO;
	close(POOL_DIR_FD); /* a destroyed pool's directory goes */
	return 0;
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
	       listening && fstat(1, &st) == 0 && S_ISFIFO(st.st_mode) &&
	       fstat(POOL_DIR_FD, &st) == 0 && S_ISDIR(st.st_mode);
}

/* argv: runguard-keeper POOL-DIR SLOT (the pool is fd 4's, see above). */
int rg_keeper_main(int argc, char **argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct keeper k;
	int errnum = 0;

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
	if (!errnum)
		errnum = set_up(&k, argv[2]);
	if (write(1, &errnum, sizeof(errnum)) != sizeof(errnum) || errnum)
		return 1;
	/* the ready pipe's end goes: 1 becomes /dev/null as 2 is */
	dup2(2, 1);
	serve(0, &k);
}
