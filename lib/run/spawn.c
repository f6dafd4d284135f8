/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "run/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "base/base.h"

extern char **environ;

void rg_child_plan_from_config(struct rg_child_plan *plan,
			       const struct rg_config *cfg)
{
	struct rg_child_settings *s = &plan->settings;

	/* padding too: the settings travel and are compared as bytes */
	memset(s, 0, sizeof(*s));
	s->has_cpu_limit = cfg->has_cpu_limit;
	s->cpu_hard = cfg->cpu_hard;
	s->file_limit = cfg->file_limit;
	s->process_limit = cfg->process_limit;
	s->core_dumps = cfg->core_dumps;
	s->has_cpuset = cfg->cpuset != NULL;
	if (s->has_cpuset)
		s->cpuset_mask = cfg->cpuset_mask;
	plan->file = cfg->file;
	plan->argv = cfg->argv;
	plan->root = cfg->root;
	plan->workdir = cfg->workdir;
}

/* Keep pipe ends off 0-2, so that dup2() onto stdio cannot clobber one. */
static int above_stdio(int fd)
{
	int moved;

	if (fd > STDERR_FILENO)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return moved;
}

static int keep_above_stdio(int fds[2], struct rg_error *err)
{
	fds[0] = above_stdio(fds[0]);
	fds[1] = above_stdio(fds[1]);
	if (fds[0] < 0 || fds[1] < 0) {
		rg_close_fd(&fds[0]);
		rg_close_fd(&fds[1]);
		return rg_fail(err, EMFILE, "creating a pipe");
	}
	return 0;
}

static int make_pipe(int fds[2], struct rg_error *err)
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return rg_fail(err, errno, "creating a pipe");
	return keep_above_stdio(fds, err);
}

/*
 * The barrier: a socket pair, so that releasing a child the OOM killer
 * took after its READY is EPIPE (send with MSG_NOSIGNAL), never a SIGPIPE
 * that kills us before the meta file is written. [0] is the child's end.
 */
static int make_barrier(int fds[2], struct rg_error *err)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
		return rg_fail(err, errno, "creating the barrier");
	return keep_above_stdio(fds, err);
}

static void spawn_pipes_close(struct rg_spawn_pipes *p)
{
	for (int i = 0; i < 2; i++) {
		rg_close_fd(&p->report[i]);
		rg_close_fd(&p->go[i]);
		rg_close_fd(&p->out[0][i]);
		rg_close_fd(&p->out[1][i]);
	}
}

static int spawn_pipes_open(struct rg_spawn_pipes *p, bool barrier,
			    struct rg_error *err)
{
	memset(p, -1, sizeof(*p));
	if (make_pipe(p->report, err) < 0 ||
	    (barrier && make_barrier(p->go, err) < 0) ||
	    make_pipe(p->out[0], err) < 0 || make_pipe(p->out[1], err) < 0) {
		spawn_pipes_close(p);
		return -1;
	}
	/* the supervisor never blocks on the command's output */
	for (int i = 0; i < 2; i++)
		if (fcntl(p->out[i][0], F_SETFL, O_NONBLOCK) < 0) {
			spawn_pipes_close(p);
			return rg_fail(err, errno, "setting O_NONBLOCK");
		}
	return 0;
}

static long clone3_child(const struct rg_child_plan *plan, int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD | plan->place.clone_flags,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};
	int cgroup_fd = rg_cgroup_clone_fd(plan->place.cgroup);

	if (cgroup_fd >= 0) {
		/* born in its cgroup: no migration, no cgroup lock */
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cgroup_fd;
	}
	return syscall(SYS_clone3, &args, sizeof(args));
}

/* The child's ends of the pipes, and ours to close in it. */
static struct rg_child_fds child_fds(const struct rg_spawn_pipes *p)
{
	return (struct rg_child_fds){
		.report_fd = p->report[1],
		.go_fd = p->go[0],
		.output_fd = { p->out[0][1], p->out[1][1] },
		.parent_fd = { p->report[0], p->go[1], p->out[0][0],
			       p->out[1][0] },
	};
}

/*
 * The child shares our memory and stack (vfork) and we sleep until its
 * execve or exit (spawn.h): every signal stays blocked meanwhile, environ
 * (which it set for execvp) is put back, and errno (which it wrote) is
 * not ours to read after a successful vfork.
 */
static long vfork_child(const struct rg_child_plan *plan,
			const struct rg_spawn_pipes *p, int *pidfd)
{
	const struct rg_child_fds fds = child_fds(p);
	char **saved_environ = environ;
	sigset_t all, saved_mask;
	pid_t pid;
	int errnum;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved_mask);
	pid = vfork();
	if (pid == 0)
		rg_child_main(plan, &fds);
	errnum = errno;
	environ = saved_environ;
	pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
	if (pid < 0) {
		errno = errnum;
		return -1;
	}
	/* exec'd or exited by now: it is a zombie at worst, still ours */
	*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (*pidfd < 0) {
		errnum = errno;
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = errnum;
		return -1;
	}
	return pid;
}

static long clone_child(const struct rg_child_plan *plan,
			const struct rg_spawn_pipes *p, int *pidfd)
{
	struct rg_child_fds fds;
	long pid;

	if (plan->open_window) {
		/* it cannot be told where to go: born there, or not at all */
		if (plan->place.clone_flags ||
		    rg_cgroup_clone_fd(plan->place.cgroup) >= 0) {
			errno = EINVAL;
			return -1;
		}
		return vfork_child(plan, p, pidfd);
	}
	pid = clone3_child(plan, pidfd);
	if (pid == 0) {
		fds = child_fds(p);
		rg_child_main(plan, &fds);
	}
	return pid;
}

/*
 * The child exists: our ends move into child, its ends are closed, and
 * none stays in p (the output read ends went to the streams before).
 */
static void spawn_pipes_hand_over(struct rg_spawn_pipes *p, pid_t pid,
				  int pidfd, struct rg_child *child)
{
	child->pid = pid;
	child->pidfd = pidfd;
	child->report_fd = rg_steal_fd(&p->report[0]);
	child->go_fd = rg_steal_fd(&p->go[1]);
	spawn_pipes_close(p);
}

int rg_spawn_prepare(struct rg_child *child, bool barrier, struct rg_error *err)
{
	child->pid = 0;
	child->pidfd = child->report_fd = child->go_fd = -1;
	child->stat_fd = -1;
	child->run_delay_base = child->run_delay_end = -1;
	child->setup_maxrss_kib = -1;
	return spawn_pipes_open(&child->pipes, barrier, err);
}

int rg_spawn(const struct rg_child_plan *plan, struct rg_child *child,
	     struct rg_error *err)
{
	int pidfd = -1;
	long pid;

	pid = clone_child(plan, &child->pipes, &pidfd);
	if (pid < 0) {
		int errnum = errno;

		spawn_pipes_close(&child->pipes);
		return rg_fail(err, errnum, "cannot fork");
	}
	spawn_pipes_hand_over(&child->pipes, (pid_t)pid, pidfd, child);
	return 0;
}

static ssize_t read_report(int fd, struct rg_report *r)
{
	ssize_t n;

	do {
		n = read(fd, r, sizeof(*r));
	} while (n < 0 && errno == EINTR);
	return n;
}

int rg_spawn_wait_ready(const struct rg_config *cfg, struct rg_child *child,
			bool *setup_failed, struct rg_error *err)
{
	struct rg_report r;
	ssize_t n;

	*setup_failed = false;
	for (;;) {
		n = read_report(child->report_fd, &r);
		if (n != (ssize_t)sizeof(r) || r.kind != RG_REPORT_WARNING)
			break;
		r.message[sizeof(r.message) - 1] = '\0';
		rg_log(cfg, RG_LOG_WARNING, "%s", r.message);
	}
	if (n == (ssize_t)sizeof(r) && r.kind == RG_REPORT_READY) {
		child->setup_maxrss_kib = r.maxrss_kib;
		return 0;
	}
	*setup_failed = true;
	if (n == (ssize_t)sizeof(r) && r.kind == RG_REPORT_SETUP_FAILED) {
		r.message[sizeof(r.message) - 1] = '\0';
		return rg_fail(err, r.errnum, "%s", r.message);
	}
	if (n < 0)
		return rg_fail(err, errno, "reading the child's report");
	return rg_fail(err, 0, "child died during set-up");
}

int rg_spawn_release(struct rg_child *child, bool *setup_failed,
		     struct rg_error *err)
{
	ssize_t n;

	do {
		n = send(child->go_fd, "g", 1, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	rg_close_fd(&child->go_fd);
	if (n == 1)
		return 0;
	/* its end is closed: it died after its READY, before its execve */
	*setup_failed = n < 0 && errno == EPIPE;
	return rg_fail(err, errno, "releasing the child");
}

int rg_spawn_exec_failed(struct rg_child *child, int *errnum)
{
	struct rg_report r;
	int flags = fcntl(child->report_fd, F_GETFL);

	/* the child is gone: never block here */
	if (flags >= 0)
		fcntl(child->report_fd, F_SETFL, flags | O_NONBLOCK);
	if (read_report(child->report_fd, &r) == (ssize_t)sizeof(r) &&
	    r.kind == RG_REPORT_EXEC_FAILED) {
		*errnum = r.errnum;
		return 1;
	}
	return 0;
}

void rg_child_close(struct rg_child *child)
{
	spawn_pipes_close(&child->pipes);
	rg_close_fd(&child->pidfd);
	rg_close_fd(&child->report_fd);
	rg_close_fd(&child->go_fd);
	rg_close_fd(&child->stat_fd);
}
