/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "error.h"
#include "keeper_wire.h"
#include "ns.h"
#include "slot.h"
#include "syscall_filter.h"
#include "util.h"

enum keeper_op {
	KEEPER_SPAWN = 1,
	KEEPER_REAP = 2,
	KEEPER_KILL = 3,
	KEEPER_SCRUB = 4,
};

/* SPAWN's fds, in this order */
enum {
	FD_PLAN,
	FD_STDIN,
	FD_REPORT,
	FD_GO,
	FD_STDOUT,
	FD_STDERR,
	FD_CWD,
	SPAWN_FDS,
};

struct keeper_request {
	uint32_t op;
};

struct keeper_reply {
	int32_t errnum; /* 0: done */
	int32_t status;
	int64_t keeper_cpu_ns;
	struct rusage rusage;
	struct rg_ns_scrub scrub;
	char message[1024]; /* as struct rg_error's */
};

#define KEEPER_BACKLOG 16
#define KEEPER_NAME "runguard-keeper" /* its comm, as ps shows it */
#define KEEPER_STOP_TIMEOUT_MS 5000

/* -- messages with fds ---------------------------------------------- */

static ssize_t send_with_fds(int sock, const void *buf, size_t len,
			     const int *fds, size_t nfds)
{
	char control[CMSG_SPACE(sizeof(int) * SPAWN_FDS)] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (nfds > 0) {
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n;
}

/* Received fds beyond max, or of a message cut short, are closed. */
static ssize_t recv_with_fds(int sock, void *buf, size_t len, int *fds,
			     size_t max, size_t *nfds)
{
	char control[CMSG_SPACE(sizeof(int) * SPAWN_FDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;
	ssize_t n;

	*nfds = 0;
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[SPAWN_FDS];

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		memcpy(got, CMSG_DATA(c), sizeof(int) * (k < SPAWN_FDS ? k :
							  SPAWN_FDS));
		for (size_t i = 0; i < k && i < SPAWN_FDS; i++) {
			if (*nfds < max && !(msg.msg_flags & MSG_CTRUNC))
				fds[(*nfds)++] = got[i];
			else
				close(got[i]);
		}
	}
	return n;
}

static void close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rg_close_fd(&fds[i]);
}

static int socket_path(int dir_fd, const char *name, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* through the trusted directory fd: no path length or walk issue */
	n = snprintf(sa->sun_path, sizeof(sa->sun_path),
		     "/proc/self/fd/%d/%s.sock", dir_fd, name);
	return n > 0 && (size_t)n < sizeof(sa->sun_path) ? 0 : -1;
}

/* -- the keeper ------------------------------------------------------ */

struct keeper {
	int conn;
	int last_pid_fd; /* our PID namespace's ns_last_pid, or -1 */
	pid_t child;      /* unreaped direct child, or 0 */
	struct timespec cpu_at_spawn;
	struct rg_slot slot; /* joined already: the child inherits it all */
};

static int64_t own_cpu_ns_since(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (int64_t)(now.tv_sec - since->tv_sec) * 1000000000 +
	       (now.tv_nsec - since->tv_nsec);
}

static void reply(struct keeper *k, struct keeper_reply *r, const int *fds,
		  size_t nfds)
{
	send_with_fds(k->conn, r, sizeof(*r), fds, nfds);
}

static void reply_error(struct keeper *k, const struct rg_error *err)
{
	struct keeper_reply r = { .errnum = err->errnum ? err->errnum : EIO };

	snprintf(r.message, sizeof(r.message), "%s", err->message);
	reply(k, &r, NULL, 0);
}

/*
 * As PID 1 of the slot: one kill reaches every process but us, forks in
 * flight included (a fork with a fatal signal pending fails). Then the
 * pids start over, so that the next run's pids do not tell how many
 * processes the runs before it made.
 */
static void kill_all_but_keeper(struct keeper *k)
{
	kill(-1, SIGKILL);
	for (;;) {
		pid_t pid = waitpid(-1, NULL, __WALL);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break; /* ECHILD: we are alone */
	}
	k->child = 0;
	if (k->last_pid_fd >= 0 && pwrite(k->last_pid_fd, "1", 1, 0) < 0) {
		/* without CAP_SYS_ADMIN: pids go on counting */
	}
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

static int start_child(struct keeper *k, struct rg_wire_plan *w,
		       const int *fds, int *pidfd, struct rg_error *err)
{
	struct rg_child_fds child_fds = {
		.report_fd = fds[FD_REPORT],
		.go_fd = fds[FD_GO],
		.output_fd = { fds[FD_STDOUT], fds[FD_STDERR] },
		.parent_fd = { -1, -1, -1, -1 },
	};
	long pid;

	w->plan.slot = &k->slot;
	w->plan.stdin_fd = w->stdin_closed ? -1 : fds[FD_STDIN];
	w->caller.cwd_fd = fds[FD_CWD];
	w->plan.parent_pid = getpid();
	if (w->syscall_filter &&
	    rg_seccomp_program(&w->plan.seccomp, true, err) < 0)
		return -1;
	pid = clone_child(pidfd);
	if (pid < 0)
		return rg_fail(err, errno, "cannot fork");
	if (pid == 0)
		rg_child_main(&w->plan, &child_fds);
	k->child = (pid_t)pid;
	return 0;
}

static void do_spawn(struct keeper *k, int *fds, size_t nfds)
{
	struct keeper_reply r = { 0 };
	struct rg_wire_plan w;
	struct rg_error err;
	int pidfd = -1;

	if (nfds != SPAWN_FDS || k->child) {
		rg_fail(&err, EPROTO, "keeper: a spawn out of turn");
		reply_error(k, &err);
		return;
	}
	if (rg_wire_decode(fds[FD_PLAN], &w, &err) < 0 ||
	    start_child(k, &w, fds, &pidfd, &err) < 0) {
		rg_wire_free(&w);
		reply_error(k, &err);
		return;
	}
	rg_wire_free(&w);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &k->cpu_at_spawn);
	reply(k, &r, &pidfd, 1);
	close(pidfd);
}

static void do_reap(struct keeper *k)
{
	struct keeper_reply r = { 0 };
	pid_t pid;

	if (!k->child) {
		r.errnum = ECHILD;
		reply(k, &r, NULL, 0);
		return;
	}
	do {
		pid = wait4(k->child, &r.status, 0, &r.rusage);
	} while (pid < 0 && errno == EINTR);
	if (pid < 0)
		r.errnum = errno;
	k->child = 0;
	reply(k, &r, NULL, 0);
}

static void do_kill(struct keeper *k)
{
	struct keeper_reply r = { 0 };

	kill_all_but_keeper(k);
	r.keeper_cpu_ns = own_cpu_ns_since(&k->cpu_at_spawn);
	reply(k, &r, NULL, 0);
}

/* In the slot's IPC and net namespaces already: no setns. */
static void do_scrub(struct keeper *k)
{
	struct keeper_reply r = { 0 };
	struct rg_error err;

	if (k->child) {
		rg_fail(&err, EPROTO, "keeper: a scrub while a run is alive");
		reply_error(k, &err);
		return;
	}
	if (rg_ns_scrub_here(&r.scrub, &err) < 0) {
		reply_error(k, &err);
		return;
	}
	reply(k, &r, NULL, 0);
}

/* One runguard, until it closes the connection or dies. */
static void serve_client(struct keeper *k)
{
	struct keeper_request req;
	int fds[SPAWN_FDS];
	size_t nfds;
	ssize_t n;

	for (;;) {
		n = recv_with_fds(k->conn, &req, sizeof(req), fds, SPAWN_FDS,
				  &nfds);
		if (n != (ssize_t)sizeof(req)) {
			close_fds(fds, nfds);
			return; /* EOF: the client is gone */
		}
		if (req.op == KEEPER_SPAWN)
			do_spawn(k, fds, nfds);
		else if (req.op == KEEPER_REAP)
			do_reap(k);
		else if (req.op == KEEPER_KILL)
			do_kill(k);
		else if (req.op == KEEPER_SCRUB)
			do_scrub(k);
		close_fds(fds, nfds);
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
	struct keeper k = { .conn = -1 };

	/* the write applies to the writer's PID namespace */
	k.last_pid_fd = open("/proc/sys/kernel/ns_last_pid",
			     O_WRONLY | O_CLOEXEC);
	rg_slot_init(&k.slot, NULL);
	k.slot.namespaces_outlive_run = true;
	kill_all_but_keeper(&k);
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
		kill_all_but_keeper(&k);
		rg_close_fd(&k.conn);
	}
}

/* -- starting one ---------------------------------------------------- */

/*
 * In the keeper, PID 1 of the new PID namespace: into the cgroup (v1;
 * on v2 it was born there), away from the caller's session and signals,
 * and out of the memory cgroup OOM killer's way where we may (without
 * CAP_SYS_RESOURCE it stays a candidate: its death ends the run, and the
 * slot gets a new keeper).
 */
/*
 * Our command line, as ps and /proc/<pid>/cmdline show it to everyone:
 * not the arguments of the call we were forked from, which a later run
 * could read there (another user's -V VAR=..., paths of other judgings).
 * The kernel shows our memory from arg_start to arg_end (fields 48 and
 * 49 of /proc/self/stat): the title goes there, the rest is zeroed.
 */
static void set_cmdline(const char *title)
{
	unsigned long start = 0, end = 0;
	char buf[2048], *p, *save = NULL;
	size_t len;
	FILE *f = fopen("/proc/self/stat", "re");

	if (!f)
		return;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p)
		return;
	/* field 3 (state) is the first after the comm */
	p = strtok_r(p + 1, " ", &save);
	for (int field = 3; p && field < 48; field++)
		p = strtok_r(NULL, " ", &save);
	if (p) {
		start = strtoul(p, NULL, 10);
		p = strtok_r(NULL, " ", &save);
		end = p ? strtoul(p, NULL, 10) : 0;
	}
	if (!start || end <= start)
		return;
	len = end - start;
	memset((void *)start, 0, len);
	memcpy((void *)start, title, strnlen(title, len - 1));
}

static _Noreturn void keeper_main(const struct rg_cgroup *cg, int listen_fd,
				  int ready_fd, const char *title)
{
	int errnum = 0, fd;
	sigset_t all;

	if (rg_cgroup_clone_fd(cg) < 0) {
		int rc = rg_cgroup_attach_self(cg);

		if (rc < 0)
			errnum = -rc;
	}
	setsid();
	prctl(PR_SET_NAME, KEEPER_NAME, 0, 0, 0);
	set_cmdline(title);
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (chdir("/") < 0)
		errnum = errno;
	/* listening here makes us the peer SO_PEERCRED names (our pid) */
	if (!errnum && listen(listen_fd, KEEPER_BACKLOG) < 0)
		errnum = errno;
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "-1000", 5) < 0) {
			/* EACCES without CAP_SYS_RESOURCE: see above */
		}
		close(fd);
	}
	/*
	 * Nothing of the caller's but the socket (not its pipes, locks, meta
	 * file or directory), before we say we are ready: the caller may
	 * return right after, and the judging's mounts go at once. The
	 * socket becomes 0 and the ready pipe 1 until it is told.
	 */
	if (!errnum) {
		int l = dup(listen_fd), r = dup(ready_fd);

		if (l < 0 || r < 0 || dup2(l, 0) < 0 || dup2(r, 1) < 0)
			_exit(1);
		ready_fd = 1;
		syscall(SYS_close_range, 2, ~0U, 0);
		if (open("/dev/null", O_RDWR | O_CLOEXEC) != 2)
			_exit(1);
	}
	if (write(ready_fd, &errnum, sizeof(errnum)) != sizeof(errnum) ||
	    errnum)
		_exit(1);
	dup2(2, 1);
	serve(0);
}

static long clone_keeper(const struct rg_cgroup *cg)
{
	struct clone_args args = {
		.flags = CLONE_NEWPID,
		.exit_signal = SIGCHLD,
	};
	int cgroup_fd = rg_cgroup_clone_fd(cg);

	if (cgroup_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cgroup_fd;
	}
	return syscall(SYS_clone3, &args, sizeof(args));
}

/*
 * The intermediate process: into the slot's namespaces (a PID namespace
 * applies to children only), then the keeper, then gone, so that init
 * adopts the keeper.
 */
static _Noreturn void start_in_slot(const int ns_fd[],
				    const struct rg_cgroup *cg, int listen_fd,
				    int ready_fd, const char *title)
{
	long pid;
	int errnum;

	for (int i = 0; i < RG_NS_COUNT; i++)
		if (ns_fd[i] >= 0 && setns(ns_fd[i], 0) < 0)
			goto fail;
	pid = clone_keeper(cg);
	if (pid == 0)
		keeper_main(cg, listen_fd, ready_fd, title);
	if (pid > 0)
		_exit(0);
fail:
	errnum = errno;
	if (write(ready_fd, &errnum, sizeof(errnum)) < 0)
		_exit(1);
	_exit(1);
}

static int bind_listener(int dir_fd, const char *name, int *out,
			 struct rg_error *err)
{
	struct sockaddr_un sa;
	char file[64];
	int fd;

	snprintf(file, sizeof(file), "%s.sock", name);
	if (socket_path(dir_fd, name, &sa) < 0)
		return rg_fail(err, ENAMETOOLONG, "keeper socket path");
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rg_fail(err, errno, "creating the keeper's socket");
	if ((unlinkat(dir_fd, file, 0) < 0 && errno != ENOENT) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    fchmodat(dir_fd, file, 0600, 0) < 0) {
		int errnum = errno;

		close(fd);
		return rg_fail(err, errnum, "binding %s", file);
	}
	*out = fd;
	return 0;
}

/* The keeper's first word: 0 once it serves, an errno if it failed. */
static int wait_ready(int ready_fd, struct rg_error *err)
{
	int errnum;
	ssize_t n;

	do {
		n = read(ready_fd, &errnum, sizeof(errnum));
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(errnum))
		return rg_fail(err, EIO, "the slot's keeper died starting");
	if (errnum)
		return rg_fail(err, errnum, "starting the slot's keeper");
	return 0;
}

int rg_keeper_start(int dir_fd, const char *name, const int ns_fd[],
		    const struct rg_cgroup *cg, struct rg_error *err)
{
	int listen_fd = -1, ready[2], status, rc;
	char title[256], link[64], pool_dir[PATH_MAX];
	ssize_t n;
	pid_t pid;

	/* what ps shows: what it serves */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
	n = readlink(link, pool_dir, sizeof(pool_dir) - 1);
	pool_dir[n > 0 ? n : 0] = '\0';
	snprintf(title, sizeof(title), "%s %.200s %.24s", KEEPER_NAME,
		 n > 0 ? pool_dir : "?", name);
	if (bind_listener(dir_fd, name, &listen_fd, err) < 0)
		return -1;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(listen_fd);
		return rg_fail(err, errno, "creating a pipe");
	}
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		start_in_slot(ns_fd, cg, listen_fd, ready[1], title);
	}
	close(ready[1]);
	close(listen_fd);
	if (pid < 0) {
		close(ready[0]);
		return rg_fail(err, errno, "cannot fork the slot's keeper");
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rc = wait_ready(ready[0], err);
	close(ready[0]);
	return rc;
}

/* -- the client's side ----------------------------------------------- */

/*
 * A connection to slot name's keeper (extra: SOCK_NONBLOCK or 0) and the
 * keeper's pid: the fd, or -errno (EPERM: the peer is not root's, and a
 * keeper is root's, so it is not ours to trust).
 */
static int dial_keeper(int dir_fd, const char *name, int extra, pid_t *pid)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, errnum;

	if (socket_path(dir_fd, name, &sa) < 0)
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | extra, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		errnum = errno;
		close(fd);
		return -errnum;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    cred.uid != 0) {
		close(fd);
		return -EPERM;
	}
	*pid = cred.pid;
	return fd;
}

int rg_keeper_connect(int dir_fd, const char *name, int *conn, pid_t *pid,
		      struct rg_error *err)
{
	int fd = dial_keeper(dir_fd, name, 0, pid);

	if (fd == -EPERM)
		return rg_fail(err, EPERM, "%s's keeper is not root's", name);
	if (fd < 0)
		return rg_fail(err, -fd, "connecting to %s's keeper", name);
	*conn = fd;
	return 0;
}

pid_t rg_keeper_probe(int dir_fd, const char *name)
{
	pid_t pid = 0;
	int fd = dial_keeper(dir_fd, name, SOCK_NONBLOCK, &pid);

	if (fd == -EAGAIN)
		return -1; /* alive, its backlog full */
	if (fd < 0)
		return 0;
	close(fd);
	return pid;
}

/* Our keeper, not a process that got its pid since (a pidfd is safe). */
static bool is_keeper(pid_t pid)
{
	char path[64], comm[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	return n > 0 && !strcmp(comm, KEEPER_NAME "\n");
}

int rg_keeper_stop(pid_t pid, struct rg_error *err)
{
	struct pollfd p = { .events = POLLIN };
	int rc;

	p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p.fd < 0)
		return errno == ESRCH ? 0 : rg_fail(err, errno, "pidfd_open");
	if (!is_keeper(pid)) {
		close(p.fd);
		return 0; /* gone before the pidfd */
	}
	if (syscall(SYS_pidfd_send_signal, p.fd, SIGKILL, NULL, 0) < 0 &&
	    errno != ESRCH) {
		rc = rg_fail(err, errno, "killing the slot's keeper");
		close(p.fd);
		return rc;
	}
	do {
		rc = poll(&p, 1, KEEPER_STOP_TIMEOUT_MS);
	} while (rc < 0 && errno == EINTR);
	close(p.fd);
	if (rc == 0)
		return rg_fail(err, ETIMEDOUT, "the slot's keeper survives "
			       "SIGKILL after %d ms", KEEPER_STOP_TIMEOUT_MS);
	return rc < 0 ? rg_fail(err, errno, "waiting for the keeper") : 0;
}

/* One request and its reply (and the fd that comes with it, if any). */
static int call(int conn, enum keeper_op op, const int *fds, size_t nfds,
		struct keeper_reply *r, int *reply_fd, struct rg_error *err)
{
	struct keeper_request req = { .op = op };
	int got = -1;
	size_t ngot;

	if (send_with_fds(conn, &req, sizeof(req), fds, nfds) !=
	    (ssize_t)sizeof(req))
		return rg_fail(err, errno ? errno : EPIPE,
			       "the slot's keeper is gone");
	if (recv_with_fds(conn, r, sizeof(*r), &got, reply_fd ? 1 : 0,
			  &ngot) != (ssize_t)sizeof(*r))
		return rg_fail(err, EPIPE, "the slot's keeper died");
	if (r->errnum) {
		r->message[sizeof(r->message) - 1] = '\0';
		if (ngot)
			close(got);
		return rg_fail(err, r->errnum, "%s", r->message[0] ?
			       r->message : "the slot's keeper failed");
	}
	if (reply_fd)
		*reply_fd = ngot ? got : -1;
	return 0;
}

/* The child's pid as we see it (it is not ours: the keeper's). */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid:\t%d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

int rg_keeper_spawn(int conn, const struct rg_child_plan *plan,
		    struct rg_child *child, struct rg_error *err)
{
	struct rg_spawn_pipes p;
	struct keeper_reply r;
	int fds[SPAWN_FDS], memfd, cwd_fd, pidfd;
	pid_t pid = -1;

	if (rg_wire_encode(plan, &memfd, err) < 0)
		return -1;
	cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0) {
		close(memfd);
		return rg_fail(err, errno, "opening the current directory");
	}
	if (rg_spawn_pipes_open(&p, err) < 0) {
		close(memfd);
		close(cwd_fd);
		return -1;
	}
	fds[FD_PLAN] = memfd;
	/* a closed stdin travels as a flag; SCM_RIGHTS needs an open fd */
	fds[FD_STDIN] = plan->stdin_fd >= 0 ? plan->stdin_fd : cwd_fd;
	fds[FD_REPORT] = p.report[1];
	fds[FD_GO] = p.go[0];
	fds[FD_STDOUT] = p.out[0][1];
	fds[FD_STDERR] = p.out[1][1];
	fds[FD_CWD] = cwd_fd;
	pidfd = -1;
	if (call(conn, KEEPER_SPAWN, fds, SPAWN_FDS, &r, &pidfd, err) == 0 &&
	    (pidfd < 0 || (pid = pidfd_pid(pidfd)) <= 0))
		rg_fail(err, EPROTO, "the keeper sent no child");
	close(memfd);
	close(cwd_fd);
	if (pidfd < 0 || pid <= 0) {
		/* a child at the barrier reads EOF and exits */
		rg_close_fd(&pidfd);
		rg_spawn_pipes_close(&p);
		return -1;
	}
	rg_spawn_pipes_hand_over(&p, pid, pidfd, child);
	return 0;
}

int rg_keeper_reap(int conn, int *status, struct rusage *ru,
		   struct rg_error *err)
{
	struct keeper_reply r;

	if (call(conn, KEEPER_REAP, NULL, 0, &r, NULL, err) < 0)
		return -1;
	*status = r.status;
	*ru = r.rusage;
	return 0;
}

int rg_keeper_kill(int conn, int64_t *keeper_cpu_ns, struct rg_error *err)
{
	struct keeper_reply r;

	if (call(conn, KEEPER_KILL, NULL, 0, &r, NULL, err) < 0)
		return -1;
	*keeper_cpu_ns = r.keeper_cpu_ns;
	return 0;
}

int rg_keeper_scrub(int conn, struct rg_ns_scrub *report, struct rg_error *err)
{
	struct keeper_reply r;

	if (call(conn, KEEPER_SCRUB, NULL, 0, &r, NULL, err) < 0)
		return -1;
	*report = r.scrub;
	return 0;
}
