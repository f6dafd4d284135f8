/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "rg-build-config.h"
#include "base/base.h"
#include "pool/keeper_image.h"
#include "pool/keeper_proto.h"
#include "pool/keeper_relay.h"
#include "pool/keeper_wire.h"
#include "ns/ns.h"
#include "run/run.h"
#include "pool/trusted_path.h"
#define KEEPER_BACKLOG 16
#define KEEPER_STOP_TIMEOUT_MS 5000

/* -- starting one ---------------------------------------------------- */

/* Whether path (resolved) lies in the build tree this code was built in. */
static bool in_build_tree(const char *path)
{
	char real[PATH_MAX], root[PATH_MAX];
	size_t n;

	if (!path || path[0] != '/' || !realpath(path, real) ||
	    !realpath(RG_BUILD_ROOT, root))
		return false;
	n = strlen(root);
	return !strncmp(real, root, n) && real[n] == '/';
}

/*
 * Root's and written by root alone, as the runguard binary must be, and
 * so is every directory on its way (trusted_path.c): root execs it in
 * every slot. No link is followed at the file itself. errno on failure,
 * the reason in err.
 */
static int open_trusted_exe(const char *path, struct rg_error *err)
{
	char dir[PATH_MAX];
	const char *base = strrchr(path, '/');
	struct stat st;
	int dir_fd, fd;

	if (!base || base == path ||
	    (size_t)snprintf(dir, sizeof(dir), "%.*s", (int)(base - path),
			     path) >= sizeof(dir)) {
		errno = EINVAL;
		return rg_fail(err, EINVAL, "the keeper executable %s", path);
	}
	if (rg_trusted_dir_open(dir, "keeper directory", false, &dir_fd, err) <
	    0)
		return -1;
	fd = openat(dir_fd, base + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	close(dir_fd);
	if (fd < 0)
		return rg_fail(err, errno, "the keeper executable %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		errno = EPERM;
		return rg_fail(err, EPERM,
			       "the keeper executable %s (installed "
			       "with runguard; root's, written by root alone)",
			       path);
	}
	return fd;
}

/*
 * The keeper executable: the build tree's when this code runs from it
 * (the tests, the kernel lab); else next to the running executable (an
 * admin who copies runguard over DOMjudge's copies runguard-keeper with
 * it); else the installed one. Never a path from the environment:
 * runguard runs as root under sudo. Its path goes to *path.
 */
int rg_keeper_open_exe(char *path, size_t len, struct rg_error *err)
{
	char self[PATH_MAX];
	Dl_info info;
	ssize_t n;
	int fd;

	if (in_build_tree("/proc/self/exe") ||
	    (dladdr((void *)rg_keeper_open_exe, &info) &&
	     in_build_tree(info.dli_fname))) {
		snprintf(path, len, "%s", RG_KEEPER_BUILD_PATH);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		if (n > 0 && strrchr(self, '/')) {
			strrchr(self, '/')[1] = '\0';
			snprintf(path, len, "%s%s", self, RG_KEEPER_NAME);
			fd = open_trusted_exe(path, err);
			if (fd >= 0)
				return fd;
		}
		snprintf(path, len, "%s", RG_KEEPER_PATH);
	}
	return open_trusted_exe(path, err);
}

/* fd onto lowest, close-on-exec as asked; fd itself stays as it was. */
static int move_fd(int fd, int lowest, bool cloexec)
{
	return dup3(fd, lowest, cloexec ? O_CLOEXEC : 0) < 0 ? -1 : 0;
}

/*
 * Nothing of the caller's but what the keeper needs, each at its place:
 * the socket on 0, the ready pipe on 1, /dev/null on 2, the executable
 * on 3 (close-on-exec) and the pool directory on 4. Not its pipes, locks,
 * meta file or directory: the caller may return right after the keeper
 * is ready, and the judging's mounts go at once.
 */
static int keeper_fds(int listen_fd, int ready_fd, int exe_fd, int dir_fd)
{
	int l = fcntl(listen_fd, F_DUPFD_CLOEXEC, 10);
	int r = fcntl(ready_fd, F_DUPFD_CLOEXEC, 10);
	int e = fcntl(exe_fd, F_DUPFD_CLOEXEC, 10);
	int d = fcntl(dir_fd, F_DUPFD_CLOEXEC, 10);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (l < 0 || r < 0 || e < 0 || d < 0 || null < 0 ||
	    move_fd(l, 0, false) < 0 || move_fd(r, 1, false) < 0 ||
	    move_fd(null, 2, false) < 0 || move_fd(e, 3, true) < 0 ||
	    move_fd(d, 4, false) < 0)
		return -1;
	return (int)syscall(SYS_close_range, 5, ~0U, 0);
}

/*
 * In the keeper: into the cgroup (v1;
 * on v2 it was born there), away from the caller's session and signals,
 * out of the memory cgroup OOM killer's way where we may (without
 * CAP_SYS_RESOURCE the runs' tasks take the highest score instead, see
 * child.c), then the keeper's own image, with a fixed command line and
 * no environment: nothing of the call that started it is left for a
 * later run to read in /proc/<keeper>.
 */
static _Noreturn void keeper_main(const struct rg_cgroup *cg, const int fds[4],
				  char *const argv[])
{
	char *const envp[] = { NULL };
	int listen_fd = fds[0], ready_fd = fds[1], errnum = 0, fd;
	sigset_t all;

	if (rg_cgroup_clone_fd(cg) < 0) {
		int rc = rg_cgroup_attach_self(cg);

		if (rc < 0)
			errnum = -rc;
	}
	setsid();
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (!errnum && chdir("/") < 0)
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
	if (!errnum && keeper_fds(listen_fd, ready_fd, fds[2], fds[3]) < 0)
		_exit(1);
	if (!errnum) {
		ready_fd = 1;
		/*
		 * The new image says it is ready (keeper_server.c). By the
		 * opened file, not its path: execveat (fexecve), or where that
		 * fails (ENOENT on Debian 11's 5.10 in the kernel lab) the
		 * same file through /proc.
		 */
		fexecve(3, argv, envp);
		execve("/proc/self/fd/3", argv, envp);
		errnum = errno;
	}
	if (write(ready_fd, &errnum, sizeof(errnum)) < 0)
		_exit(1);
	_exit(1);
}

static long clone_keeper(const struct rg_cgroup *cg)
{
	struct clone_args args = {
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
 * The intermediate process: into the slot's namespaces, then the keeper,
 * then gone, so that init adopts the keeper.
 */
/* fds: the listening socket, the ready pipe, the executable, the pool */
static _Noreturn void start_in_slot(const int ns_fd[],
				    const struct rg_cgroup *cg,
				    const int fds[4], char *const argv[])
{
	long pid;
	int errnum;

	for (int i = 0; i < RG_NS_COUNT; i++)
		if (ns_fd[i] >= 0 && setns(ns_fd[i], 0) < 0)
			goto fail;
	pid = clone_keeper(cg);
	if (pid == 0)
		keeper_main(cg, fds, argv);
	if (pid > 0)
		_exit(0);
fail:
	errnum = errno;
	if (write(fds[1], &errnum, sizeof(errnum)) < 0)
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
	if (rg_keeper_socket_path(dir_fd, name, &sa) < 0)
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
	int listen_fd = -1, exe_fd, ready[2], status, rc;
	char link[64], pool_dir[PATH_MAX], slot[32], exe[PATH_MAX];
	char *argv[] = { RG_KEEPER_NAME, pool_dir, slot, NULL };
	ssize_t n;
	pid_t pid;

	/* what ps shows: what it serves */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
	n = readlink(link, pool_dir, sizeof(pool_dir) - 1);
	pool_dir[n > 0 ? n : 0] = '\0';
	snprintf(slot, sizeof(slot), "%s", name);
	/* opened before we enter the slot's mount namespace */
	exe_fd = rg_keeper_open_exe(exe, sizeof(exe), err);
	if (exe_fd < 0)
		return -1;
	/* its code charged to us, not to the slot (keeper_image.h) */
	rg_keeper_image_preload(exe_fd);
	if (bind_listener(dir_fd, name, &listen_fd, err) < 0) {
		close(exe_fd);
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(listen_fd);
		close(exe_fd);
		return rg_fail(err, errno, "creating a pipe");
	}
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		start_in_slot(ns_fd, cg,
			      (const int[]){ listen_fd, ready[1], exe_fd,
					     dir_fd },
			      argv);
	}
	close(ready[1]);
	close(listen_fd);
	close(exe_fd);
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

	if (rg_keeper_socket_path(dir_fd, name, &sa) < 0)
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

static int send_request(int conn, enum rg_keeper_op op, struct rg_error *err);
static int take_reply(int conn, struct rg_keeper_reply *r,
		      struct rg_error *err);
static bool is_keeper(pid_t pid);

int rg_keeper_dial(int dir_fd, const char *name, int *conn, pid_t *pid,
		   struct rg_error *err)
{
	int fd = dial_keeper(dir_fd, name, 0, pid);

	if (fd == -EPERM)
		return rg_fail(err, EPERM, "%s's keeper is not root's", name);
	if (fd < 0)
		return rg_fail(err, -fd, "connecting to %s's keeper", name);
	/* a failed send shows as no answer: rg_keeper_greet says so */
	(void)send_request(fd, RG_KEEPER_HELLO, &(struct rg_error){ 0 });
	*conn = fd;
	return 0;
}

/*
 * A keeper of another build (a runguard upgraded while its pool lived)
 * answers HELLO with another version, or not at all: it is stopped, and
 * the slot gets one of ours.
 */
int rg_keeper_greet(int *conn, pid_t pid, struct rg_error *err)
{
	struct rg_keeper_reply r;
	struct rg_error ignored;

	if (take_reply(*conn, &r, &ignored) == 0 &&
	    r.version == RG_KEEPER_PROTO_VERSION)
		return 0;
	rg_close_fd(conn);
	if (rg_keeper_stop(pid, err) < 0)
		return -1;
	return rg_fail(err, ECONNREFUSED,
		       "a keeper of another build was "
		       "stopped");
}

int rg_keeper_connect(int dir_fd, const char *name, int *conn, pid_t *pid,
		      struct rg_error *err)
{
	int fd;

	if (rg_keeper_dial(dir_fd, name, &fd, pid, err) < 0 ||
	    rg_keeper_greet(&fd, *pid, err) < 0)
		return -1;
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
	return n > 0 && !strcmp(comm, RG_KEEPER_NAME "\n");
}

/* SIGKILL to the process behind pidfd, then wait until it is gone. */
static int kill_by_pidfd(int pidfd, const char *who, struct rg_error *err)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int rc;

	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 &&
	    errno != ESRCH)
		return rg_fail(err, errno, "killing %s", who);
	do {
		rc = poll(&p, 1, KEEPER_STOP_TIMEOUT_MS);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return rg_fail(err, ETIMEDOUT,
			       "%s survives SIGKILL after "
			       "%d ms",
			       who, KEEPER_STOP_TIMEOUT_MS);
	return rc < 0 ? rg_fail(err, errno, "waiting for %s", who) : 0;
}

int rg_keeper_stop(pid_t pid, struct rg_error *err)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), rc = 0;

	if (pidfd < 0)
		return errno == ESRCH ? 0 : rg_fail(err, errno, "pidfd_open");
	/* not a keeper: gone before the pidfd, and the pid taken again */
	if (is_keeper(pid))
		rc = kill_by_pidfd(pidfd, "the slot's keeper", err);
	close(pidfd);
	return rc;
}

static int send_request(int conn, enum rg_keeper_op op, struct rg_error *err)
{
	struct rg_keeper_request req = {
		.op = op,
		.version = RG_KEEPER_PROTO_VERSION,
	};

	if (rg_keeper_send(conn, &req, sizeof(req), NULL, 0) !=
	    (ssize_t)sizeof(req))
		return rg_fail(err, errno ? errno : EPIPE,
			       "the slot's keeper is gone");
	return 0;
}

/* A request's reply; its errnum as a failure. */
static int take_reply(int conn, struct rg_keeper_reply *r, struct rg_error *err)
{
	size_t n;

	if (rg_keeper_recv(conn, r, sizeof(*r), NULL, 0, &n) !=
	    (ssize_t)sizeof(*r))
		return rg_fail(err, EPIPE, "the slot's keeper died");
	if (r->errnum) {
		r->message[sizeof(r->message) - 1] = '\0';
		return rg_fail(err, r->errnum, "%s",
			       r->message[0] ? r->message :
					       "the slot's keeper failed");
	}
	return 0;
}

/* One request and its reply. */
static int call(int conn, enum rg_keeper_op op, struct rg_keeper_reply *r,
		struct rg_error *err)
{
	if (send_request(conn, op, err) < 0)
		return -1;
	return take_reply(conn, r, err);
}

/* RUN's fds; a closed stdin travels as a flag. */
static int run_fds(const struct rg_keeper_run_request *req, const int dest[2],
		   int memfd, int fds[RG_KEEPER_RUN_FDS], struct rg_error *err)
{
	int cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (cwd_fd < 0)
		return rg_fail(err, errno, "opening the current directory");
	fds[RG_KEEPER_FD_PLAN] = memfd;
	fds[RG_KEEPER_FD_STDIN] = req->plan->stdin_fd >= 0 ?
					  req->plan->stdin_fd :
					  cwd_fd;
	fds[RG_KEEPER_FD_STDOUT] = dest[0];
	fds[RG_KEEPER_FD_STDERR] = dest[1];
	fds[RG_KEEPER_FD_CWD] = cwd_fd;
	return 0;
}

/* The runner forwards the command's output into rl's (keeper_relay.h). */
static int send_run(int conn, const struct rg_keeper_run_request *req,
		    const struct rg_relay *rl, struct rg_error *err)
{
	struct rg_keeper_request r = { .op = RG_KEEPER_RUN,
				       .version = RG_KEEPER_PROTO_VERSION };
	struct rg_wire_run run = {
		.cfg = req->cfg,
		.peak_unused = req->peak_unused,
		.relayed = { rg_relay_is_ours(rl, 0), rg_relay_is_ours(rl, 1) },
	};
	int fds[RG_KEEPER_RUN_FDS], memfd, rc = 0;

	if (rg_wire_encode(req->plan, &run, &memfd, err) < 0)
		return -1;
	if (run_fds(req, rl->runner_fd, memfd, fds, err) < 0) {
		close(memfd);
		return -1;
	}
	if (rg_keeper_send(conn, &r, sizeof(r), fds, RG_KEEPER_RUN_FDS) !=
	    (ssize_t)sizeof(r))
		rc = rg_fail(err, errno ? errno : EPIPE,
			     "the slot's keeper is gone");
	close(memfd);
	close(fds[RG_KEEPER_FD_CWD]);
	return rc;
}

/* A signal of ours, or a cancel (signal 0), for the runner. */
static void pass_on(int conn, int signal_fd)
{
	struct signalfd_siginfo si = { 0 };

	if (signal_fd >= 0 &&
	    read(signal_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	rg_keeper_send(conn, &si, sizeof(si), NULL, 0);
}

/*
 * Until the result comes, passing on signals and a cancel, and copying
 * the output the runner forwards (a failed copy in *relay_err, once).
 */
static ssize_t await_result(int conn, const struct rg_keeper_run_request *req,
			    struct rg_relay *rl, struct rg_keeper_result *r,
			    int *relay_rc, struct rg_error *relay_err)
{
	struct pollfd p[5] = {
		{ .fd = conn, .events = POLLIN },
		{ .fd = req->signal_fd, .events = POLLIN },
		{ .fd = req->cfg->cancel_fd, .events = POLLIN },
	};
	struct rg_error pump_err;
	size_t nfds;

	for (;;) {
		rg_relay_poll_fds(rl, p + 3);
		if (poll(p, 5, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < 2; i++)
			if (p[3 + i].revents &&
			    rg_relay_pump(rl, i, &pump_err) < 0 && !*relay_rc) {
				*relay_err = pump_err;
				*relay_rc = -1;
			}
		if (p[0].revents) {
			ssize_t n = rg_keeper_recv(conn, r, sizeof(*r), NULL,
						   0, &nfds);
			uint32_t word;

			if (n != (ssize_t)sizeof(word))
				return n;
			/* the runner's hard wall limit (supervise.h) */
			memcpy(&word, r, sizeof(word));
			if (word == RG_SUPERVISOR_NOTIFY &&
			    req->cfg->timeout_notify_pid > 0)
				kill(req->cfg->timeout_notify_pid, SIGUSR1);
			continue;
		}
		if (p[1].revents & POLLIN)
			pass_on(conn, req->signal_fd);
		if (p[2].revents) {
			pass_on(conn, -1);
			p[2].fd = -1; /* once */
		}
	}
}

/* The runner's log lines, into our sink (keeper_proto.h). */
static void replay_log(const struct rg_config *cfg,
		       const struct rg_keeper_result *r, size_t len)
{
	size_t pos = 0;

	while (pos + 2 <= len) {
		const char *text = r->log + pos + 1;
		const char *nul = memchr(text, '\0', len - pos - 1);

		if (!nul)
			return;
		rg_log(cfg, (enum rg_log_level)r->log[pos], "%s", text);
		pos += (size_t)(nul - r->log) + 1 - pos;
	}
}

/* The reply as it came (n bytes), checked: the result and what was logged. */
static int take_result(const struct rg_keeper_run_request *req,
		       struct rg_keeper_result *r, ssize_t n,
		       struct rg_result *result, bool *resend,
		       struct rg_error *err)
{
	const size_t head = offsetof(struct rg_keeper_result, log);

	if (n < (ssize_t)head)
		return rg_fail(err, EPIPE, "the slot's keeper died");
	if (r->version != RG_KEEPER_PROTO_VERSION ||
	    r->result_size != sizeof(r->result) ||
	    (size_t)n != head + r->log_len || r->log_len > sizeof(r->log))
		return rg_fail(err, EPROTO,
			       "a run's result of another "
			       "runguard build");
	replay_log(req->cfg, r, r->log_len);
	if (!r->from_runner) {
		*resend = r->resend;
		r->message[sizeof(r->message) - 1] = '\0';
		return rg_fail(err, r->errnum ? r->errnum : EIO, "%s",
			       r->message);
	}
	*result = r->result;
	if (r->errnum) {
		r->message[sizeof(r->message) - 1] = '\0';
		rg_fail(err, r->errnum, "%s",
			r->message[0] ? r->message :
					"the slot's keeper failed");
		if (result->outcome != RG_OUTCOME_ERROR &&
		    result->outcome != RG_OUTCOME_CLEANUP_FAILED)
			result->outcome = RG_OUTCOME_ERROR;
	}
	return 0;
}

/* A run that got its result fails all the same if its output was lost. */
static void fail_for_output(struct rg_result *result, struct rg_error *err,
			    const struct rg_error *relay_err)
{
	*err = *relay_err;
	if (result->outcome != RG_OUTCOME_CLEANUP_FAILED)
		result->outcome = RG_OUTCOME_ERROR;
}

int rg_keeper_run(int conn, const struct rg_keeper_run_request *req,
		  struct rg_result *result, bool *resend, struct rg_error *err)
{
	/* large (its log), and a library judge's threads run at once */
	struct rg_keeper_result *r = calloc(1, sizeof(*r));
	struct rg_error relay_err = { 0 };
	struct rg_relay rl;
	int rc, relay_rc = 0;
	ssize_t n;

	*resend = false;
	if (!r)
		return rg_fail(err, errno, "a run's result");
	if (rg_relay_open(&rl, req->dest, err) < 0) {
		free(r);
		return -1;
	}
	rc = send_run(conn, req, &rl, err);
	rg_relay_sent(&rl);
	if (rc == 0) {
		n = await_result(conn, req, &rl, r, &relay_rc, &relay_err);
		rc = take_result(req, r, n, result, resend, err);
		/* DOMjudge reads the file once we return: all of it */
		if (rg_relay_finish(&rl, rc == 0 ? r->forwarded : NULL,
				    relay_rc ? &(struct rg_error){ 0 } :
					       &relay_err) < 0)
			relay_rc = -1;
		if (rc == 0 && relay_rc < 0 &&
		    result->outcome != RG_OUTCOME_ERROR)
			fail_for_output(result, err, &relay_err);
	}
	rg_relay_close(&rl);
	free(r);
	return rc;
}

int rg_keeper_kill(int conn, bool *keeper_gone, struct rg_error *err)
{
	struct rg_keeper_reply r;
	struct rg_error ignored;

	(void)err;
	*keeper_gone = conn < 0 || call(conn, RG_KEEPER_KILL, &r, &ignored) < 0;
	return 0;
}

int rg_keeper_scrub(int conn, struct rg_ns_scrub *report, struct rg_error *err)
{
	struct rg_keeper_reply r;

	if (call(conn, RG_KEEPER_SCRUB, &r, err) < 0)
		return -1;
	*report = r.scrub;
	return 0;
}
