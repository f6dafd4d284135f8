/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child between clone3 and execve. It may be the child of a
 * multi-threaded process, or share its parent's memory (spawn.h), so it
 * only makes system calls and touches memory the parent prepared: no
 * malloc, no stdio, no glibc set*id wrappers. Every failure is reported
 * to the parent as one record, then _exit(255).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "run/syscall_filter.h"
#include "run/spawn.h"
#include "base/base.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

struct msg {
	char buf[sizeof(((struct rg_report *)0)->message)];
	size_t len;
};

static void msg_add(struct msg *m, const char *s)
{
	while (*s && m->len + 1 < sizeof(m->buf))
		m->buf[m->len++] = *s++;
	m->buf[m->len] = '\0';
}

static void msg_add_uint(struct msg *m, unsigned long v)
{
	char digits[24];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && m->len + 1 < sizeof(m->buf))
		m->buf[m->len++] = digits[--n];
	m->buf[m->len] = '\0';
}

static void send_report(int fd, int kind, int errnum, const struct msg *m)
{
	struct rg_report r = { .kind = kind, .errnum = errnum };

	if (m)
		memcpy(r.message, m->buf, m->len + 1);
	/* one write of less than PIPE_BUF: all or nothing */
	while (write(fd, &r, sizeof(r)) < 0 && errno == EINTR)
		;
}

static _Noreturn void fail(int report_fd, int errnum, const char *what,
			   const char *arg, const char *tail)
{
	struct msg m = { .len = 0 };

	msg_add(&m, what);
	if (arg) {
		msg_add(&m, arg);
		msg_add(&m, tail ? tail : "");
	}
	send_report(report_fd, RG_REPORT_SETUP_FAILED, errnum, &m);
	_exit(255);
}

static int set_limit(int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit rl = { .rlim_cur = soft, .rlim_max = hard };

	return syscall(SYS_prlimit64, 0, resource, &rl, NULL) < 0 ? -errno : 0;
}

/*
 * As DOMjudge: a limit we may not raise (EPERM, no CAP_SYS_RESOURCE) is a
 * warning, not a failure. The limit then stays at the current hard limit,
 * which is stricter than what was asked.
 */
static void set_limit_or_clamp(int resource, const char *name, rlim_t value,
			       rlim_t hard, int report_fd)
{
	struct rlimit cur;
	struct msg m = { .len = 0 };
	int rc = set_limit(resource, value, hard);

	if (rc == 0)
		return;
	if (rc != -EPERM || getrlimit(resource, &cur) < 0)
		fail(report_fd, -rc, "setting ", name, NULL);
	rc = set_limit(resource, value < cur.rlim_max ? value : cur.rlim_max,
		       cur.rlim_max);
	if (rc < 0)
		fail(report_fd, -rc, "setting ", name, NULL);
	msg_add(&m, "cannot raise ");
	msg_add(&m, name);
	msg_add(&m, " (Operation not permitted): kept at the hard limit ");
	msg_add_uint(&m, cur.rlim_max);
	send_report(report_fd, RG_REPORT_WARNING, 0, &m);
}

/*
 * 1, not 0: with a pipe in kernel.core_pattern the kernel ignores
 * RLIMIT_CORE 0 and starts the dump helper (which reads /proc/PID/cgroup,
 * part of a real cgroup deadlock); 1 is its "never pipe" value, and below
 * one page no core file is written. Raising a hard limit of 0 to 1 needs
 * CAP_SYS_RESOURCE, which sudo's RLIMIT_CORE 0/0 (Debian's default) on a
 * root without that capability (containers, hardened hosts) makes
 * impossible: then 0/0, what DOMjudge sets, rather than failing every run.
 * docs/security.md says what the pipe helper can then do.
 */
static void disable_core_dumps(int report_fd)
{
	int rc = set_limit(RLIMIT_CORE, 1, 1);

	if (rc == -EPERM)
		rc = set_limit(RLIMIT_CORE, 0, 0);
	/* lowering always works; DOMjudge treats a failure here as fatal */
	if (rc < 0)
		fail(report_fd, -rc, "disabling core dumps", NULL, NULL);
}

static void set_rlimits(const struct rg_child_settings *s, int report_fd)
{
	static const struct {
		int resource;
		const char *name;
	} unlimited[] = {
		{ RLIMIT_AS, "RLIMIT_AS" },
		{ RLIMIT_DATA, "RLIMIT_DATA" },
		{ RLIMIT_STACK, "RLIMIT_STACK" },
	};

	if (s->has_cpu_limit) {
		rlim_t secs = (rlim_t)rg_whole_seconds_up(s->cpu_hard);

		/* SIGXCPU at the hard limit; SIGKILL a second later */
		set_limit_or_clamp(RLIMIT_CPU, "RLIMIT_CPU", secs, secs + 1,
				   report_fd);
	}
	for (size_t i = 0; i < sizeof(unlimited) / sizeof(*unlimited); i++)
		set_limit_or_clamp(unlimited[i].resource, unlimited[i].name,
				   RLIM_INFINITY, RLIM_INFINITY, report_fd);
	if (s->file_limit != RG_UNLIMITED)
		set_limit_or_clamp(RLIMIT_FSIZE, "RLIMIT_FSIZE", s->file_limit,
				   s->file_limit, report_fd);
	if (s->process_limit != RG_UNLIMITED)
		set_limit_or_clamp(RLIMIT_NPROC, "RLIMIT_NPROC",
				   s->process_limit, s->process_limit,
				   report_fd);
	if (!s->core_dumps)
		disable_core_dumps(report_fd);
}

/*
 * A pooled slot's IPC namespace outlives the run: POSIX message queues
 * cannot be created there at all (the release still removes any).
 */
static void forbid_mqueues(const struct rg_child_place *slot, int report_fd)
{
	int rc;

	if (!slot->namespaces_outlive_run)
		return;
	rc = set_limit(RLIMIT_MSGQUEUE, 0, 0);
	if (rc < 0)
		fail(report_fd, -rc, "setting RLIMIT_MSGQUEUE", NULL, NULL);
}

/* Best effort for limits: without CAP_SYS_RESOURCE a hard one stays. */
static void adopt_caller_state(const struct rg_caller_state *caller,
			       int report_fd)
{
	if (!caller)
		return;
	if (fchdir(caller->cwd_fd) < 0)
		fail(report_fd, errno, "cannot enter the caller's directory",
		     NULL, NULL);
	umask(caller->umask);
	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (!(caller->rlimits_inherited & (1u << i)) &&
		    setrlimit(i, &caller->rlimits[i]) < 0 && errno != EPERM)
			fail(report_fd, errno,
			     "cannot take the caller's limits", NULL, NULL);
}

static void join_slot(const struct rg_child_place *slot, int report_fd)
{
	int rc;

	/* a keeper's child was born in the cgroup and namespaces */
	if (slot->cgroup && rg_cgroup_clone_fd(slot->cgroup) < 0) {
		rc = rg_cgroup_attach_self(slot->cgroup);
		if (rc < 0)
			fail(report_fd, -rc,
			     "Failed to move the process to the cgroup", NULL,
			     NULL);
	}
	for (int i = 0; i < RG_NS_COUNT; i++)
		if (slot->ns_fd[i] >= 0 && setns(slot->ns_fd[i], 0) < 0)
			fail(report_fd, errno, "cannot join a namespace", NULL,
			     NULL);
}

/*
 * The run's processes are the OOM killer's first choice, in their memory
 * cgroup and on the host: oom_score_adj 1000 adds the cgroup's whole limit
 * to each one's badness, so a pool slot's keeper (0, or -1000 where root
 * has CAP_SYS_RESOURCE) is never picked while a process of the run can
 * be, however its memory is split among processes; and a judgedaemon
 * protected from the OOM killer does not pass that on. Anyone may raise
 * the value: it needs no capability. Best effort: the memory cgroup limit
 * is what bounds the program.
 */
static void raise_oom_score(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "1000", 4) < 0) {
		/* nothing to report to: the run goes on */
	}
	close(fd);
}

/* The root must lie below the prefix: compared by path component. */
static void check_root(const struct rg_child_plan *plan, int report_fd)
{
	char cwd[PATH_MAX + 1];
	size_t len;

	if (!getcwd(cwd, sizeof(cwd) - 1))
		fail(report_fd, errno, "cannot get current directory", NULL,
		     NULL);
	len = strlen(cwd);
	if (len == 0 || cwd[len - 1] != '/') {
		cwd[len++] = '/';
		cwd[len] = '\0';
	}
	if (strncmp(cwd, plan->root_prefix, strlen(plan->root_prefix)))
		fail(report_fd, 0, "invalid root: must be within `",
		     plan->root_prefix, "'");
}

static void enter_root(const struct rg_child_plan *plan, int report_fd)
{
	if (!plan->root)
		return;
	if (chdir(plan->root) < 0)
		fail(report_fd, errno, "cannot chdir to `", plan->root, "'");
	if (plan->root_prefix[0])
		check_root(plan, report_fd);
	if (chroot(".") < 0)
		fail(report_fd, errno, "cannot change root to `", plan->root,
		     "'");
	if (chdir("/") < 0)
		fail(report_fd, errno, "cannot chdir to `/' in chroot", NULL,
		     NULL);
	if (plan->workdir && chdir(plan->workdir) < 0)
		fail(report_fd, errno, "cannot chdir to `", plan->workdir,
		     "' in chroot");
}

static void drop_privileges(const struct rg_child_plan *plan, int report_fd)
{
	const char *step = NULL;
	int errnum = 0;

	if (rg_privs_drop(&plan->privs, &step, &errnum) < 0)
		fail(report_fd, errnum, step, NULL, NULL);
	/* die with the supervisor (cleared by the uid change, so set now) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fail(report_fd, errno, "cannot set parent death signal", NULL,
		     NULL);
	if (getppid() != plan->parent_pid)
		_exit(255);
}

/* Only stdin, stdout and stderr survive execve. */
static void wire_stdio(int stdin_fd, const int output_fd[2], int report_fd)
{
	struct rlimit rl;

	/* first: the pipe ends are above 2, stdin_fd may be 1 or 2 */
	if (stdin_fd < 0)
		close(STDIN_FILENO); /* the caller's stdin was closed */
	else if (stdin_fd != STDIN_FILENO && dup2(stdin_fd, STDIN_FILENO) < 0)
		fail(report_fd, errno, "cannot redirect stdin", NULL, NULL);
	if (dup2(output_fd[0], STDOUT_FILENO) < 0 ||
	    dup2(output_fd[1], STDERR_FILENO) < 0)
		fail(report_fd, errno, "cannot redirect stdout/stderr", NULL,
		     NULL);
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	/* kernels before 5.11 */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	for (int fd = 3; fd < (int)rl.rlim_cur; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static _Noreturn void exec_command(const struct rg_child_plan *plan,
				   int report_fd)
{
	const char *reason;
	struct msg m = { .len = 0 };
	int errnum;

	environ = plan->envp;
	execvp(plan->file, plan->argv);
	errnum = errno;
	reason = strerrordesc_np(errnum);
	/* DOMjudge reports this on the command's stderr stream */
	msg_add(&m, "runguard: cannot start `");
	msg_add(&m, plan->file);
	msg_add(&m, "' as user `");
	msg_add_uint(&m, (unsigned long)getuid());
	msg_add(&m, "': ");
	msg_add(&m, reason ? reason : "unknown error");
	msg_add(&m, "\n");
	if (write(STDERR_FILENO, m.buf, m.len) < 0) {
		/* nothing else to tell it to; the report carries the errno */
	}
	send_report(report_fd, RG_REPORT_EXEC_FAILED, errnum, NULL);
	_exit(255);
}

/* READY, with what of our memory the command's ru_maxrss will hold. */
static void send_ready(int fd)
{
	struct rg_report r = { .kind = RG_REPORT_READY, .maxrss_kib = -1 };
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		r.maxrss_kib = ru.ru_maxrss;
	while (write(fd, &r, sizeof(r)) < 0 && errno == EINTR)
		;
}

/*
 * Sharing the parent's memory, which waits for our execve: it reads READY
 * later, and the window is ours to open.
 */
static void open_window(const struct rg_child_plan *plan, int report_fd)
{
	send_ready(report_fd);
	if (plan->open_window(plan->window_arg) < 0)
		_exit(255);
}

static void wait_for_release(int report_fd, int go_fd)
{
	char go;
	ssize_t n;

	send_ready(report_fd);
	do {
		n = read(go_fd, &go, 1);
	} while (n < 0 && errno == EINTR);
	/* EOF: the supervisor gave up on this run */
	if (n != 1)
		_exit(255);
	close(go_fd);
}

_Noreturn void rg_child_main(const struct rg_child_plan *plan,
			     const struct rg_child_fds *fds)
{
	int report_fd = fds->report_fd;

	/* without this a dead supervisor would never look like EOF */
	for (int i = 0; i < 4; i++)
		if (fds->parent_fd[i] >= 0) /* -1: a stream's, CLOEXEC */
			close(fds->parent_fd[i]);
	adopt_caller_state(plan->caller, report_fd);
	join_slot(&plan->place, report_fd);
	/*
	 * Linux before 6.3 (and its stable series, e.g. 5.10) leaves a child
	 * created with CLONE_INTO_CGROUP with its parent's affinity.
	 */
	if (plan->settings.has_cpuset &&
	    sched_setaffinity(0, sizeof(plan->settings.cpuset_mask),
			      &plan->settings.cpuset_mask) < 0)
		fail(report_fd, errno, "cannot pin to the cpuset's CPUs", NULL,
		     NULL);
	if (setsid() < 0)
		fail(report_fd, errno, "cannot create a new session", NULL,
		     NULL);
	set_rlimits(&plan->settings, report_fd);
	forbid_mqueues(&plan->place, report_fd);
	raise_oom_score();
	enter_root(plan, report_fd);
	drop_privileges(plan, report_fd);
	wire_stdio(plan->stdin_fd, fds->output_fd, report_fd);
	if (sigprocmask(SIG_SETMASK, &plan->child_sigmask, NULL) < 0)
		fail(report_fd, errno, "cannot restore the signal mask", NULL,
		     NULL);
	if (plan->seccomp) {
		int rc = rg_seccomp_install(plan->seccomp);

		if (rc < 0)
			fail(report_fd, -rc,
			     "cannot install the syscall filter", NULL, NULL);
	}
	if (plan->open_window)
		open_window(plan, report_fd);
	else
		wait_for_release(report_fd, fds->go_fd);
	exec_command(plan, report_fd);
}
