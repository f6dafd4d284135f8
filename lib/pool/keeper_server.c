/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper process (runguard-keeper), exec'd by keeper.c's
 * rg_keeper_start into its slot's namespaces and cgroup with the slot's
 * socket listening on fd 0, the ready pipe on fd 1 and the pool
 * directory on fd 4. It opens the slot's cgroup once (keeper_slot.h).
 *
 * Runs are its runners' (keeper_runner.h): one at a time, forked into a
 * PID namespace of its own ahead of the slot's next client, which it takes
 * from the socket itself. We wait for the runner to end, reset the slot
 * if a run went out, and fork the next one. So:
 * - no client waits for us: the fork and the reset happen while nobody
 *   holds the slot (a client that comes during a reset waits in the
 *   socket's backlog, as the slot's lock says it must);
 * - we never wait() for a run: what runs did (their CPU time, faults)
 *   would add up in our /proc/<pid>/stat, which every run may read
 *   where /proc is bind-mounted into its chroot (DOMjudge's); the kernel
 *   reaps the runner (SIGCHLD ignored);
 * - the run outlives us: if the keeper dies (an admin's kill), the runner
 *   goes on and its client still gets the run's own result from it; a
 *   runner still waiting for a client ends with us.
 */
#include "pool/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <unistd.h>

#include "base/base.h"
#include "pool/keeper_image.h"
#include "pool/keeper_proto.h"
#include "pool/keeper_runner.h"
#include "pool/keeper_slot.h"
#include "run/run.h"

/* the pool directory, as rg_keeper_start hands it over */
#define POOL_DIR_FD 4
/* the slot's socket, listening */
#define LISTEN_FD 0

struct keeper {
	struct rg_keeper_slot slot;
	/* the runners' news (keeper_runner.h): read end, non-blocking, and
	 * write end. Not a shared page: a keeper's shmem would read as
	 * tmpfs pages a run left (rg_cgroup_needs_recycle). */
	int news[2];
	/* our life: a runner waiting for a client polls the read end, which
	 * hangs up when we are gone; we alone hold the write end */
	int life[2];
	/* the next runner installs the syscall filter: the last run's choice */
	bool filter;
};

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
 * The slot's next runner, waiting for its client: its pidfd. A keeper
 * that cannot fork one cannot serve: it goes, and the slot's next holder
 * starts another (lease_keeper.c).
 */
static int fork_runner(struct keeper *k)
{
	struct rg_runner_args a = { .slot = &k->slot,
				    .listen_fd = LISTEN_FD,
				    .keeper_fd = k->life[0],
				    .news_fd = k->news[1],
				    .filter = k->filter };
	int pidfd = -1;
	long pid = clone_runner(&pidfd);

	if (pid == 0) {
		close(k->life[1]);
		dup2(STDERR_FILENO, STDOUT_FILENO); /* not the ready pipe */
		rg_runner_main(&a);
	}
	if (pid < 0)
		_exit(1);
	return pidfd;
}

/* Until the runner is gone (its pidfd readable). */
static void wait_runner(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	close(pidfd);
}

/*
 * Whether the runner that ended let a run out, and the filter its RUN
 * asked for (keeper_runner.h).
 */
static bool run_went_out(struct keeper *k)
{
	char news[8];
	bool ran = false;
	ssize_t n;

	while ((n = read(k->news[0], news, sizeof(news))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			ran |= news[i] == RG_RUNNER_RAN;
			if (news[i] == RG_RUNNER_FILTER ||
			    news[i] == RG_RUNNER_NO_FILTER)
				k->filter = news[i] == RG_RUNNER_FILTER;
		}
	return ran;
}

/*
 * After a run: the slot reset for the next, before the next runner is
 * forked. A slot we cannot make clean (keeper_slot.h) is left to its next
 * holder: we go, and it finds us gone.
 */
static _Noreturn void serve(struct keeper *k, int runner_pidfd)
{
	struct rg_error err;

	for (;;) {
		wait_runner(runner_pidfd);
		if (run_went_out(k) && rg_keeper_slot_reset(&k->slot, &err) < 0)
			_exit(0);
		runner_pidfd = fork_runner(k);
	}
}

/* What a keeper holds for its life; an errno if it cannot serve. */
static int set_up(struct keeper *k, const char *slot)
{
	const struct sock_fprog *prog;
	struct rg_error err;

	/* once here: each runner inherits it (its own cache would go) */
	(void)rg_seccomp_program(&prog, true, &err);
	k->filter = true; /* the default of every run */
	if (pipe2(k->news, O_CLOEXEC) < 0 ||
	    fcntl(k->news[0], F_SETFL, O_NONBLOCK) < 0 ||
	    pipe2(k->life, O_CLOEXEC) < 0)
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
	int errnum = 0, pidfd = -1;

	if (!started_by_runguard(argc)) {
		fprintf(stderr,
			"%s: the resident process of a runguard pool "
			"slot, started by librunguard (in the slot's "
			"namespaces, with the slot's socket and a ready pipe); "
			"not a command to run by hand\n",
			RG_KEEPER_NAME);
		return 2;
	}
	/* runs are reaped by the kernel, never by us (see the top) */
	if (sigaction(SIGCHLD, &ign, NULL) < 0)
		errnum = errno;
	prctl(PR_SET_NAME, RG_KEEPER_NAME, 0, 0, 0);
	/*
	 * Before the slot's charges are taken as ours (set_up). A keeper
	 * that may not lock serves as well (keeper_image.h).
	 */
	(void)rg_keeper_image_lock();
	if (!errnum)
		errnum = set_up(&k, argv[2]);
	/* ready with the first runner: what the slot holds is then all
	 * charged, before the client writes its limit over it (lease_cgroup.c) */
	if (!errnum)
		pidfd = fork_runner(&k);
	if (write(1, &errnum, sizeof(errnum)) != sizeof(errnum) || errnum)
		return 1;
	/* the ready pipe's end goes: 1 becomes /dev/null as 2 is */
	dup2(2, 1);
	serve(&k, pidfd);
}
