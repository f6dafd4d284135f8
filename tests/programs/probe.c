/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe: report the sandbox the program finds itself in, one "key: value"
 * line per check:
 *   uid/gid/groups, cap sets, NoNewPrivs, Seccomp, Cpus_allowed_list,
 *   open fds, rlimits, cwd, session leadership, cgroups, network interfaces,
 *   whether fork and threads work, and the errno of a set of syscalls that a
 *   sandbox is expected to deny ("sys-NAME: OK" or "sys-NAME: EPERM", ...).
 * The syscalls are called with harmless arguments: where a call is allowed it
 * fails with a benign error (EBADF, EINVAL, ENOENT, ...) or does nothing
 * lasting; those that would change this process run in a forked child.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void print_status_fields(void)
{
	static const char *const keys[] = {
		"CapInh", "CapPrm",	"CapEff",  "CapBnd",
		"CapAmb", "NoNewPrivs", "Seccomp", "Cpus_allowed_list",
	};
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");
	size_t i;

	if (!f) {
		printf("status: error %s\n", strerrorname_np(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t kl = strlen(keys[i]);
			char *v;

			if (strncmp(line, keys[i], kl) != 0 || line[kl] != ':')
				continue;
			v = line + kl + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			printf("%s: %s\n", keys[i], v);
		}
	}
	fclose(f);
}

static void print_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int first = 1;

	if (!d) {
		printf("fds: error %s\n", strerrorname_np(errno));
		return;
	}
	/* The list is sorted numerically by the kernel. */
	fputs("fds:", stdout);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (atoi(de->d_name) == dirfd(d))
			continue;
		printf("%s%s", first ? " " : ",", de->d_name);
		first = 0;
	}
	putchar('\n');
	closedir(d);
}

static void print_rlimit(const char *name, int res)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) < 0) {
		printf("rlimit-%s: error\n", name);
		return;
	}
	printf("rlimit-%s: ", name);
	if (rl.rlim_cur == RLIM_INFINITY)
		fputs("unlimited ", stdout);
	else
		printf("%llu ", (unsigned long long)rl.rlim_cur);
	if (rl.rlim_max == RLIM_INFINITY)
		fputs("unlimited\n", stdout);
	else
		printf("%llu\n", (unsigned long long)rl.rlim_max);
}

static void print_ids(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	gid_t groups[64];
	int n, i;

	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	printf("uid: %d %d %d\n", (int)ru, (int)eu, (int)su);
	printf("gid: %d %d %d\n", (int)rg, (int)eg, (int)sg);
	n = getgroups(64, groups);
	fputs("groups:", stdout);
	for (i = 0; i < n; i++)
		printf(" %d", (int)groups[i]);
	putchar('\n');
}

static void print_file_lines(const char *key, const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("%s: error %s\n", key, strerrorname_np(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		printf("%s: %s\n", key, line);
	}
	fclose(f);
}

static void print_net(void)
{
	char line[512];
	FILE *f = fopen("/proc/net/dev", "r");
	int lineno = 0, first = 1;

	if (!f) {
		printf("net-ifaces: error %s\n", strerrorname_np(errno));
		return;
	}
	fputs("net-ifaces:", stdout);
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *colon;

		if (++lineno <= 2)
			continue;
		p += strspn(p, " ");
		colon = strchr(p, ':');
		if (!colon)
			continue;
		*colon = '\0';
		printf("%s%s", first ? " " : ",", p);
		first = 0;
	}
	putchar('\n');
	fclose(f);
}

static void report(const char *name, long ret, int err)
{
	if (ret >= 0)
		printf("sys-%s: OK\n", name);
	else
		printf("sys-%s: %s\n", name, strerrorname_np(err));
}

#define TRY(name, call)                  \
	do {                             \
		long r_;                 \
		errno = 0;               \
		r_ = (call);             \
		report(name, r_, errno); \
	} while (0)

/* The same for calls that return a file descriptor on success. */
#define TRY_FD(name, call)               \
	do {                             \
		long r_;                 \
		errno = 0;               \
		r_ = (call);             \
		report(name, r_, errno); \
		if (r_ >= 0)             \
			close((int)r_);  \
	} while (0)

/*
 * Run fn in a forked child and report the errno the child saw, so that
 * calls that would change this process (unshare, ptrace) stay contained.
 */
static void try_in_child(const char *name, long (*fn)(void))
{
	int pipefd[2], err = 0;
	long ret = -1;
	pid_t pid;

	if (pipe(pipefd) < 0) {
		printf("sys-%s: probe-error\n", name);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("sys-%s: fork-failed %s\n", name,
		       strerrorname_np(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return;
	}
	if (pid == 0) {
		long res[2];

		errno = 0;
		res[0] = fn();
		res[1] = errno;
		if (write(pipefd[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	{
		long res[2];

		if (read(pipefd[0], res, sizeof(res)) == sizeof(res)) {
			ret = res[0];
			err = (int)res[1];
		} else {
			err = EIO;
		}
	}
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	report(name, ret, err);
}

static long do_unshare_user(void)
{
	return unshare(CLONE_NEWUSER);
}

static long do_traceme(void)
{
	return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
}

static void try_clone_newuser(void)
{
	long ret;
	int err;

	fflush(stdout);
	errno = 0;
	ret = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD),
		      NULL, NULL, NULL, 0UL);
	err = errno;
	if (ret == 0)
		syscall(SYS_exit_group, 0);
	if (ret > 0)
		waitpid((pid_t)ret, NULL, 0);
	report("clone-newuser", ret, err);
}

static int thread_token = 42;

static void *thread_fn(void *arg)
{
	return arg;
}

static void try_fork_and_thread(void)
{
	pthread_t t;
	void *res = NULL;
	pid_t pid;
	int status = -1, err;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(7);
	if (pid < 0) {
		printf("fork: %s\n", strerrorname_np(errno));
	} else {
		waitpid(pid, &status, 0);
		printf("fork: %s\n",
		       WIFEXITED(status) && WEXITSTATUS(status) == 7 ?
			       "OK" :
			       "bad-status");
	}

	err = pthread_create(&t, NULL, thread_fn, &thread_token);
	if (err) {
		printf("thread: %s\n", strerrorname_np(err));
	} else {
		pthread_join(t, &res);
		printf("thread: %s\n",
		       res == (void *)&thread_token ? "OK" : "bad-result");
	}
}

int main(void)
{
	char cwd[4096];

	print_ids();
	print_status_fields();
	print_fds();
	print_rlimit("core", RLIMIT_CORE);
	print_rlimit("cpu", RLIMIT_CPU);
	print_rlimit("nproc", RLIMIT_NPROC);
	print_rlimit("fsize", RLIMIT_FSIZE);
	print_rlimit("as", RLIMIT_AS);
	print_rlimit("data", RLIMIT_DATA);
	print_rlimit("stack", RLIMIT_STACK);
	printf("cwd: %s\n", getcwd(cwd, sizeof(cwd)) ? cwd : "(error)");
	printf("sid-leader: %d\n", getsid(0) == getpid());
	printf("dumpable: %d\n", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	print_file_lines("cgroup", "/proc/self/cgroup");
	print_net();
	try_fork_and_thread();

	TRY("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID,
			      KEY_SPEC_THREAD_KEYRING, 0));
	TRY("add_key", syscall(SYS_add_key, "rgtest-nosuchtype", "rgtest",
			       NULL, 0, KEY_SPEC_PROCESS_KEYRING));
	TRY("request_key",
	    syscall(SYS_request_key, "rgtest-nosuchtype", "rgtest", NULL, 0));
	TRY("bpf", syscall(SYS_bpf, 0x7fff, NULL, 0));
	TRY_FD("perf_event_open",
	       syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	/* 1 = UFFD_USER_MODE_ONLY: allowed unprivileged on any setting */
	TRY_FD("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC | 1));
	TRY_FD("io_uring_setup", syscall(SYS_io_uring_setup, 0, NULL));
	TRY("io_uring_enter",
	    syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
	TRY("io_uring_register",
	    syscall(SYS_io_uring_register, -1, 0, NULL, 0));
	TRY("mount", syscall(SYS_mount, "rgtest", "/nonexistent-rgtest",
			     "tmpfs", 0UL, NULL));
	TRY("umount2", syscall(SYS_umount2, "/nonexistent-rgtest", 0));
	TRY("pivot_root", syscall(SYS_pivot_root, "/nonexistent-rgtest",
				  "/nonexistent-rgtest"));
	TRY_FD("open_tree",
	       syscall(SYS_open_tree, -1, "/nonexistent-rgtest", 0U));
	TRY("move_mount", syscall(SYS_move_mount, -1, "", -1, "", 0U));
	TRY_FD("fsopen", syscall(SYS_fsopen, "tmpfs", 0U));
	TRY("fsconfig", syscall(SYS_fsconfig, -1, 0U, NULL, NULL, 0));
	TRY_FD("fsmount", syscall(SYS_fsmount, -1, 0U, 0U));
	TRY_FD("fspick", syscall(SYS_fspick, -1, "/nonexistent-rgtest", 0U));
	TRY("unshare0", syscall(SYS_unshare, 0));
	try_in_child("unshare-newuser", do_unshare_user);
	TRY("setns", syscall(SYS_setns, -1, 0));
	TRY("kexec_load", syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL));
	TRY("kexec_file_load",
	    syscall(SYS_kexec_file_load, -1, -1, 0UL, "", 0UL));
	TRY("init_module", syscall(SYS_init_module, NULL, 0UL, ""));
	TRY("finit_module", syscall(SYS_finit_module, -1, "", 0));
	TRY("delete_module", syscall(SYS_delete_module, "rgtest_nosuch", 0));
	try_in_child("ptrace-traceme", do_traceme);
	try_clone_newuser();
	TRY("clone3", syscall(SYS_clone3, NULL, 0UL));
	printf("probe: done\n");
	return 0;
}
