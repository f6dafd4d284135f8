/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Real-kernel tests of lib/cgroup*.c: real cgroups (under a parent of their
 * own, TEST_PARENT), real children, real limits. Root only; exits 77 (meson
 * SKIP) with a reason when the machine cannot run them.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libcgroup.h>

#include "cgroup.h"
#include "cgroup_backend.h"

#define TEST_PARENT "runguard-test-cg"
/*
 * The v2-only tests use the host's cgroup2 root on a v2 host, and the
 * controller-less second mount of a hybrid v1 host.
 */
#define V2_TEST_ROOT (mode == RG_CGROUP_V2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified")
#define MIB (1024ull * 1024ull)
/* An otherwise unused uid, so that RLIMIT_NPROC counts only the bomb. */
#define BOMB_UID 61234
#define BOMB_NPROC 200

static enum rg_cgroup_mode mode;
static const char *const v1_ctrls[] = { "memory", "cpuacct", "freezer",
					"cpuset" };
#define NR_V1_CTRLS (sizeof(v1_ctrls) / sizeof(v1_ctrls[0]))
static char *v1_mount[NR_V1_CTRLS];

/* Per test: the cgroups it made, destroyed and checked in teardown. */
struct tstate {
	struct rg_cgroup *cg[2];
	char name[2][64];
	const char *v2_root; /* non-NULL: created with rg_cgroup_v2_create */
};

/* A skip always says why: a silent skip looks like a pass. */
#define skip_because(reason)                                          \
	do {                                                          \
		print_message("  skipped: %s\n", reason);            \
		skip();                                               \
	} while (0)

static void make_name(char *buf, size_t size, const char *what)
{
	static int seq;

	snprintf(buf, size, "t%d-%d-%s", (int)getpid(), seq++, what);
}

static void print_err(const char *what, const struct rg_error *err)
{
	char buf[1200];

	fprintf(stderr, "%s: %s\n", what,
		rg_error_format(err, buf, sizeof(buf)));
}

static struct rg_cgroup *make_cg(struct tstate *ts, int slot,
				 const char *what, bool cpuset)
{
	struct rg_error err = { 0 };
	int ret;

	make_name(ts->name[slot], sizeof(ts->name[slot]), what);
	ret = rg_cgroup_create(TEST_PARENT, ts->name[slot], cpuset,
			       &ts->cg[slot], &err);
	if (ret < 0)
		print_err("rg_cgroup_create", &err);
	assert_int_equal(ret, 0);
	assert_non_null(ts->cg[slot]);
	return ts->cg[slot];
}

/* Path of a control file of one of our cgroups (v1: in ctrl's mount). */
static void cg_path(char *buf, size_t size, const char *v2_root,
		    const char *ctrl, const char *name, const char *file)
{
	size_t i;

	if (v2_root || mode == RG_CGROUP_V2) {
		snprintf(buf, size, "%s/%s/%s/%s",
			 v2_root ? v2_root : "/sys/fs/cgroup", TEST_PARENT,
			 name, file);
		return;
	}
	for (i = 0; i < NR_V1_CTRLS; i++)
		if (!strcmp(v1_ctrls[i], ctrl))
			break;
	assert_true(i < NR_V1_CTRLS && v1_mount[i]);
	snprintf(buf, size, "%s/%s/%s/%s", v1_mount[i], TEST_PARENT, name,
		 file);
}

static void read_path(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "open %s: %m\n", path);
	assert_true(fd >= 0);
	n = read(fd, buf, size - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
}

static void read_cg(const char *ctrl, const char *name, const char *file,
		    char *buf, size_t size)
{
	char path[PATH_MAX];

	cg_path(path, sizeof(path), NULL, ctrl, name, file);
	read_path(path, buf, size);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* The run directory is gone from every hierarchy. */
static void assert_gone(const char *v2_root, const char *name)
{
	char path[PATH_MAX];
	size_t i;

	if (v2_root || mode == RG_CGROUP_V2) {
		cg_path(path, sizeof(path), v2_root, NULL, name, "");
		if (exists(path))
			fprintf(stderr, "left behind: %s\n", path);
		assert_false(exists(path));
		return;
	}
	for (i = 0; i < NR_V1_CTRLS; i++) {
		if (!v1_mount[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", v1_mount[i],
			 TEST_PARENT, name);
		if (exists(path))
			fprintf(stderr, "left behind: %s\n", path);
		assert_false(exists(path));
	}
}

static void destroy_cg(struct tstate *ts, int slot)
{
	struct rg_error err = { 0 };
	int ret;

	if (!ts->cg[slot])
		return;
	ret = rg_cgroup_destroy(ts->cg[slot], &err);
	ts->cg[slot] = NULL;
	if (ret < 0)
		print_err("rg_cgroup_destroy", &err);
	assert_int_equal(ret, 0);
	assert_gone(ts->v2_root, ts->name[slot]);
}

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct tstate));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct tstate *ts = *state;

	destroy_cg(ts, 0);
	destroy_cg(ts, 1);
	free(ts);
	return 0;
}

/* ---- children ---- */

typedef int (*child_fn)(void *arg);

static pid_t spawn(struct rg_cgroup *cg, child_fn fn, void *arg)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (rg_cgroup_attach_self(cg) < 0)
			_exit(100);
		_exit(fn(arg));
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void assert_exit_zero(pid_t pid)
{
	int status = wait_status(pid);

	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "child status 0x%x\n", status);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Holds the memory a while: long enough for a sampled peak to see it. */
static int touch_mib(void *arg)
{
	size_t len = (size_t)(uintptr_t)arg * MIB;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 2;
	memset(p, 1, len);
	usleep(100000);
	return 0;
}

/*
 * Wait as the supervisor does: sampling memory where the kernel keeps no
 * peak (v2 before 5.19).
 */
static void assert_exit_zero_sampled(struct rg_cgroup *cg, pid_t pid)
{
	unsigned int ms = rg_cgroup_sample_interval_ms(cg);
	int status = 0;
	pid_t got = 0;

	while (ms && (got = waitpid(pid, &status, WNOHANG)) == 0) {
		rg_cgroup_sample(cg);
		usleep(ms * 1000);
	}
	if (ms) {
		assert_int_equal(got, pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		return;
	}
	assert_exit_zero(pid);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int spin(void *arg)
{
	double until = *(double *)arg;

	while (cpu_seconds() < until)
		;
	return 0;
}

static void start(struct rg_cgroup *cg)
{
	struct rg_error err = { 0 };
	int ret = rg_cgroup_start(cg, &err);

	if (ret < 0)
		print_err("rg_cgroup_start", &err);
	assert_int_equal(ret, 0);
}

static void limit(struct rg_cgroup *cg, uint64_t bytes, const char *cpuset)
{
	struct rg_cgroup_limits l = { .memory_bytes = bytes, .cpuset = cpuset };
	struct rg_error err = { 0 };
	int ret = rg_cgroup_apply_limits(cg, &l, &err);

	if (ret < 0)
		print_err("rg_cgroup_apply_limits", &err);
	assert_int_equal(ret, 0);
}

static void stats(struct rg_cgroup *cg, struct rg_cgroup_stats *st)
{
	struct rg_error err = { 0 };
	int ret = rg_cgroup_read_stats(cg, st, &err);

	if (ret < 0)
		print_err("rg_cgroup_read_stats", &err);
	assert_int_equal(ret, 0);
	fprintf(stderr, "  peak %.1f MiB (%s%s) cpu %.3f s oom %d\n",
		st->memory_peak / (double)MIB, st->memory_method,
		st->memory_peak_valid ? "" : ", invalid", st->cpu_ns / 1e9,
		st->oom_killed);
}

static int populated(struct rg_cgroup *cg)
{
	struct rg_error err = { 0 };
	int ret = rg_cgroup_populated(cg, &err);

	if (ret < 0)
		print_err("rg_cgroup_populated", &err);
	assert_true(ret >= 0);
	return ret;
}

static void kill_all(struct rg_cgroup *cg)
{
	struct rg_error err = { 0 };
	struct timespec a, b;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &a);
	ret = rg_cgroup_kill_all(cg, &err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (ret < 0)
		print_err("rg_cgroup_kill_all", &err);
	assert_int_equal(ret, 0);
	fprintf(stderr, "  kill_all took %.2f ms\n",
		(b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
}

/* ---- tests ---- */

static void test_memory_peak(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg = make_cg(ts, 0, "peak", false);
	struct rg_cgroup_stats st;

	limit(cg, RG_UNLIMITED, NULL);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)50));
	stats(cg, &st);
	assert_true(st.memory_peak_valid);
	assert_true(st.memory_peak >= 50 * MIB);
	assert_true(st.memory_peak < 80 * MIB);
	assert_false(st.oom_killed);
	/* anonymous memory: no I/O to wait for, and the count is known */
	assert_true(st.major_faults >= 0 && st.major_faults < 100);
	if (mode == RG_CGROUP_V1)
		assert_true(!strcmp(st.memory_method,
				    "memsw.max_usage_in_bytes") ||
			    !strcmp(st.memory_method, "max_usage_in_bytes"));
	else if (rg_cgroup_sample_interval_ms(cg))
		assert_string_equal(st.memory_method, "memory.current(sampled)");
	else
		assert_true(!strncmp(st.memory_method, "memory.peak", 11));
	assert_int_equal(populated(cg), 0);
}

/* A second run in the same cgroup must not see the first one's peak. */
static void test_baseline_reset(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg = make_cg(ts, 0, "reset", false);
	struct rg_cgroup_stats st;

	limit(cg, RG_UNLIMITED, NULL);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)50));
	stats(cg, &st);
	assert_true(st.memory_peak >= 50 * MIB);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)5));
	stats(cg, &st);
	if (mode == RG_CGROUP_V2 && !st.memory_peak_valid) {
		/* Kernel < 6.12: no reset possible, and we say so. */
		assert_string_equal(st.memory_method, "memory.peak(stale)");
		return;
	}
	assert_true(st.memory_peak_valid);
	assert_true(st.memory_peak >= 5 * MIB);
	assert_true(st.memory_peak < 30 * MIB);
	/* The CPU time is a delta too. */
	assert_true(st.cpu_ns >= 0 && st.cpu_ns < 200000000);
}

static void test_oom(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg = make_cg(ts, 0, "oom", false);
	struct rg_cgroup_stats st;
	int status;

	limit(cg, 32 * MIB, NULL);
	start(cg);
	status = wait_status(spawn(cg, touch_mib, (void *)100));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	stats(cg, &st);
	assert_true(st.oom_killed);
	assert_true(st.memory_peak <= 33 * MIB);
	/* The counter is a delta: the next run starts clean. */
	start(cg);
	assert_exit_zero(spawn(cg, touch_mib, (void *)1));
	stats(cg, &st);
	assert_false(st.oom_killed);
}

static void test_cpu(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg = make_cg(ts, 0, "cpu", false);
	struct rg_cgroup_stats st;
	double secs = 0.3;

	/* CPU used before start() does not count. */
	assert_exit_zero(spawn(cg, spin, &secs));
	start(cg);
	assert_exit_zero(spawn(cg, spin, &secs));
	stats(cg, &st);
	assert_true(st.cpu_ns >= 200000000);
	assert_true(st.cpu_ns <= 1000000000);
}

static void test_limits_readback(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg = make_cg(ts, 0, "limits", false);
	const char *mem = mode == RG_CGROUP_V1 ? "memory.limit_in_bytes" :
						 "memory.max";
	const char *sw = mode == RG_CGROUP_V1 ? "memory.memsw.limit_in_bytes" :
						"memory.swap.max";
	uint64_t steps[] = { 64 * MIB, 128 * MIB, 16 * MIB, RG_UNLIMITED,
			     8 * MIB };
	char buf[64], expect[64], path[PATH_MAX];
	bool have_swap;
	size_t i;

	cg_path(path, sizeof(path), NULL, "memory", ts->name[0], sw);
	have_swap = exists(path);
	/* Raising and lowering both need the right write order (v1). */
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		limit(cg, steps[i], NULL);
		read_cg("memory", ts->name[0], mem, buf, sizeof(buf));
		if (steps[i] == RG_UNLIMITED)
			snprintf(expect, sizeof(expect), "%s",
				 mode == RG_CGROUP_V1 ? "9223372036854771712" :
							"max");
		else
			snprintf(expect, sizeof(expect), "%llu",
				 (unsigned long long)steps[i]);
		assert_string_equal(buf, expect);
		if (!have_swap)
			continue;
		read_cg("memory", ts->name[0], sw, buf, sizeof(buf));
		if (mode == RG_CGROUP_V2 && steps[i] != RG_UNLIMITED)
			snprintf(expect, sizeof(expect), "0");
		assert_string_equal(buf, expect);
	}
}

struct setsid_arg {
	int fd; /* write end: one pid per grandchild */
	int nr;
};

static int fork_setsid(void *data)
{
	struct setsid_arg *a = data;
	int i;

	for (i = 0; i < a->nr; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			pid_t self = getpid();

			setsid();
			if (write(a->fd, &self, sizeof(self)) != sizeof(self))
				_exit(1);
			for (;;)
				pause();
		}
	}
	return 0;
}

static void assert_listed(const char *ctrl, const char *name, pid_t pid)
{
	char buf[RG_CG_BUF], want[32];

	read_cg(ctrl, name, "cgroup.procs", buf, sizeof(buf));
	snprintf(want, sizeof(want), "%d", (int)pid);
	assert_true(rg_cg_list_has(buf, want));
}

/* Escapees in their own sessions, orphaned: all gone, none left behind. */
static void test_kill_setsid(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg = make_cg(ts, 0, "setsid", false);
	struct setsid_arg a = { .nr = 50 };
	pid_t pids[50];
	int p[2], i, status;
	size_t c;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	a.fd = p[1];
	assert_exit_zero(spawn(cg, fork_setsid, &a));
	close(p[1]);
	for (i = 0; i < a.nr; i++)
		assert_int_equal(read(p[0], &pids[i], sizeof(pids[i])),
				 sizeof(pids[i]));
	close(p[0]);
	assert_int_equal(populated(cg), 1);
	if (mode == RG_CGROUP_V1)
		for (c = 0; c < 3; c++)
			assert_listed(v1_ctrls[c], ts->name[0], pids[0]);
	kill_all(cg);
	assert_int_equal(populated(cg), 0);
	/* We are their subreaper: each one died of SIGKILL. */
	for (i = 0; i < a.nr; i++) {
		status = wait_status(pids[i]);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGKILL);
	}
}

static int bomb(void *arg)
{
	struct rlimit rl = { BOMB_NPROC, BOMB_NPROC };

	(void)arg;
	/* Root ignores RLIMIT_NPROC: become an unused uid first. */
	if (setrlimit(RLIMIT_NPROC, &rl) < 0 || setgroups(0, NULL) < 0 ||
	    setgid(BOMB_UID) < 0 || setuid(BOMB_UID) < 0)
		return 3;
	for (;;)
		if (fork() < 0)
			usleep(1000);
}

/* Let the bomb (first) grow for a while, kill it, reap every piece. */
static void kill_bomb(struct rg_cgroup *cg, pid_t first)
{
	struct timespec delay = { 0, 200000000 };
	int status, reaped = 0;

	nanosleep(&delay, NULL);
	assert_int_equal(populated(cg), 1);
	kill_all(cg);
	assert_int_equal(populated(cg), 0);
	/* Dead already; reap them all (subreaper) so no zombie counts. */
	for (;;) {
		pid_t pid = waitpid(-1, &status, 0);

		if (pid < 0)
			break;
		reaped++;
		if (pid == first)
			assert_true(WIFSIGNALED(status));
	}
	assert_int_equal(errno, ECHILD);
	fprintf(stderr, "  reaped %d bomb processes\n", reaped);
	assert_true(reaped > 10);
}

static void test_fork_bomb(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg = make_cg(ts, 0, "bomb", false);

	kill_bomb(cg, spawn(cg, bomb, NULL));
}

static int check_affinity_cpu0(void *arg)
{
	cpu_set_t set;

	(void)arg;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 4;
	return CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set) ? 0 : 5;
}

static bool cpuset_available(void)
{
	return mode == RG_CGROUP_V2 || v1_mount[3];
}

static void test_cpuset(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup_limits bad = { RG_UNLIMITED, "99999" };
	struct rg_error err = { 0 };
	struct rg_cgroup *cg;
	char buf[256], mems[256], path[PATH_MAX];

	if (!cpuset_available())
		skip_because("no cpuset hierarchy is mounted");
	cg = make_cg(ts, 0, "cpuset", true);
	limit(cg, RG_UNLIMITED, "0");
	read_cg("cpuset", ts->name[0], "cpuset.cpus", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	read_cg("cpuset", ts->name[0], "cpuset.mems", buf, sizeof(buf));
	cg_path(path, sizeof(path), NULL, "cpuset", "", "");
	/* path is <mount>/TEST_PARENT// : the parent's effective mems */
	strcat(path, mode == RG_CGROUP_V1 ? "cpuset.effective_mems" :
					    "cpuset.mems.effective");
	read_path(path, mems, sizeof(mems));
	assert_string_equal(buf, mems);
	assert_exit_zero(spawn(cg, check_affinity_cpu0, NULL));
	/* Unpinned again: the parent's CPUs. */
	limit(cg, RG_UNLIMITED, NULL);
	assert_int_equal(wait_status(spawn(cg, check_affinity_cpu0, NULL)) != 0,
			 sysconf(_SC_NPROCESSORS_ONLN) > 1);
	/* The kernel's errno for an offline CPU: ERANGE or EINVAL. */
	assert_int_equal(rg_cgroup_apply_limits(cg, &bad, &err), -1);
	assert_true(err.errnum == ERANGE || err.errnum == EINVAL);
	print_err("  expected", &err);
}

static void test_errors(void **state)
{
	struct tstate *ts = *state;
	const char *bad[] = { "", ".", "..", "a/b" };
	struct rg_cgroup_limits pin = { RG_UNLIMITED, "0" };
	struct rg_error err = { 0 };
	struct rg_cgroup *cg, *dup = NULL;
	size_t i;

	assert_int_equal(rg_cgroup_destroy(NULL, &err), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rg_cgroup_create(TEST_PARENT, bad[i], false,
						  &dup, &err),
				 -1);
		assert_int_equal(err.errnum, EINVAL);
		assert_null(dup);
	}
	assert_int_equal(rg_cgroup_create("../escape", "x", false, &dup, &err),
			 -1);
	assert_int_equal(err.errnum, EINVAL);
	/* A second creator of the same name fails and removes nothing. */
	cg = make_cg(ts, 0, "dup", false);
	assert_int_equal(rg_cgroup_create(TEST_PARENT, ts->name[0], false, &dup,
					  &err),
			 -1);
	assert_int_equal(err.errnum, EEXIST);
	print_err("  expected", &err);
	assert_exit_zero(spawn(cg, touch_mib, (void *)1));
	/* Pinning a cgroup made without cpuset is refused. */
	assert_int_equal(rg_cgroup_apply_limits(cg, &pin, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
}

static int count_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!access(path, F_OK))
			n++;
	}
	return n;
}

/*
 * Creation failing half-way (the name already taken in the freezer
 * hierarchy only) removes what it made, keeps what it did not make, and
 * no path leaks a descriptor.
 */
static void test_partial_create(void **state)
{
	struct tstate *ts = *state;
	struct rg_error err = { 0 };
	struct rg_cgroup *cg = NULL;
	char path[PATH_MAX], name[64];
	int fds = count_fds(), i;

	if (mode != RG_CGROUP_V1 || !v1_mount[2])
		skip_because("v1 only: needs a freezer hierarchy to pre-create in");
	(void)ts;
	make_name(name, sizeof(name), "partial");
	cg_path(path, sizeof(path), NULL, "freezer", "", "");
	mkdir(path, 0755); /* the test parent, if not there yet */
	cg_path(path, sizeof(path), NULL, "freezer", name, "");
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(rg_cgroup_create(TEST_PARENT, name, false, &cg, &err),
			 -1);
	print_err("  expected", &err);
	assert_int_equal(err.errnum, EEXIST);
	assert_null(cg);
	assert_true(exists(path));
	assert_int_equal(rmdir(path), 0);
	assert_gone(NULL, name);
	for (i = 0; i < 20; i++) {
		make_name(name, sizeof(name), "fds");
		assert_int_equal(rg_cgroup_create(TEST_PARENT, name,
						  cpuset_available(), &cg,
						  &err),
				 0);
		assert_int_equal(rg_cgroup_destroy(cg, &err), 0);
		assert_gone(NULL, name);
	}
	assert_int_equal(count_fds(), fds);
}

/* ---- v2 on this host's second cgroup2 mount (no controllers) ---- */

#define V2_TEST_ROOT_TEXT "/sys/fs/cgroup (v2) or /sys/fs/cgroup/unified (v1)"

static bool v2_test_root_usable(void)
{
	struct statfs sfs;

	return statfs(V2_TEST_ROOT, &sfs) == 0 &&
	       sfs.f_type == CGROUP2_SUPER_MAGIC;
}

static struct rg_cgroup *make_v2(struct tstate *ts, const char *what)
{
	struct rg_error err = { 0 };
	int ret;

	ts->v2_root = V2_TEST_ROOT;
	make_name(ts->name[0], sizeof(ts->name[0]), what);
	ret = rg_cgroup_v2_create(V2_TEST_ROOT, TEST_PARENT, ts->name[0], 0,
				  &ts->cg[0], &err);
	if (ret < 0)
		print_err("rg_cgroup_v2_create", &err);
	assert_int_equal(ret, 0);
	return ts->cg[0];
}

static pid_t clone_into(int cgroup_fd)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cgroup_fd,
	};

	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

static void test_v2_clone_kill(void **state)
{
	struct tstate *ts = *state;
	struct setsid_arg a = { .nr = 20 };
	struct rg_cgroup_stats st;
	struct rg_cgroup *cg;
	double secs = 0.3;
	pid_t pid, pids[20];
	int p[2], i;

	if (!v2_test_root_usable())
		skip_because("no cgroup2 mount at " V2_TEST_ROOT_TEXT);
	cg = make_v2(ts, "v2");
	assert_true(rg_cgroup_clone_fd(cg) >= 0);
	limit(cg, RG_UNLIMITED, NULL);
	start(cg);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	a.fd = p[1];
	pid = clone_into(rg_cgroup_clone_fd(cg));
	assert_true(pid >= 0);
	if (pid == 0) {
		spin(&secs);
		fork_setsid(&a);
		_exit(0);
	}
	close(p[1]);
	for (i = 0; i < a.nr; i++)
		assert_int_equal(read(p[0], &pids[i], sizeof(pids[i])),
				 sizeof(pids[i]));
	close(p[0]);
	assert_exit_zero(pid);
	assert_int_equal(populated(cg), 1);
	stats(cg, &st);
	assert_true(st.cpu_ns >= 200000000 && st.cpu_ns <= 1000000000);
	assert_false(st.memory_peak_valid);
	kill_all(cg);
	assert_int_equal(populated(cg), 0);
	for (i = 0; i < a.nr; i++)
		assert_true(WIFSIGNALED(wait_status(pids[i])));
	/* No memory controller there: a limit is refused, clearly. */
	{
		struct rg_cgroup_limits l = { 32 * MIB, NULL };
		struct rg_error err = { 0 };

		assert_int_equal(rg_cgroup_apply_limits(cg, &l, &err), -1);
	}
}

static void test_v2_fork_bomb(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg;
	pid_t pid;

	if (!v2_test_root_usable())
		skip_because("no cgroup2 mount at " V2_TEST_ROOT_TEXT);
	cg = make_v2(ts, "v2bomb");
	pid = clone_into(rg_cgroup_clone_fd(cg));
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(bomb(NULL));
	kill_bomb(cg, pid);
}

static int pause_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static void test_v2_attach(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup *cg;
	char path[PATH_MAX], buf[256], want[32];
	pid_t pid;
	int status, tries;

	if (!v2_test_root_usable())
		skip_because("no cgroup2 mount at " V2_TEST_ROOT_TEXT);
	cg = make_v2(ts, "v2attach");
	pid = spawn(cg, pause_forever, NULL);
	snprintf(want, sizeof(want), "%d", (int)pid);
	cg_path(path, sizeof(path), V2_TEST_ROOT, NULL, ts->name[0],
		"cgroup.procs");
	for (tries = 0; tries < 1000; tries++) {
		read_path(path, buf, sizeof(buf));
		if (!strcmp(buf, want))
			break;
		usleep(1000);
	}
	assert_string_equal(buf, want);
	kill_all(cg);
	status = wait_status(pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
}

/* ---- set-up of the whole program ---- */

static void find_v1_mounts(void)
{
	size_t i;

	if (cgroup_init())
		return;
	for (i = 0; i < NR_V1_CTRLS; i++)
		if (cgroup_get_subsys_mount_point(v1_ctrls[i], &v1_mount[i]))
			v1_mount[i] = NULL;
}

/* 0: go; 77: cannot run here (reason printed); 1: broken. */
static int preflight(void)
{
	struct rg_error err = { 0 };
	struct rg_cgroup *cg;
	char name[64];

	if (geteuid() != 0) {
		printf("SKIP: the cgroup tests need root\n");
		return 77;
	}
	if (rg_cgroup_detect(&mode, &err) < 0) {
		print_err("SKIP: no cgroup file system", &err);
		return 77;
	}
	if (mode == RG_CGROUP_V1)
		find_v1_mounts();
	make_name(name, sizeof(name), "probe");
	if (rg_cgroup_create(TEST_PARENT, name, false, &cg, &err) < 0) {
		print_err(err.errnum == ENODEV ? "SKIP" : "probe", &err);
		return err.errnum == ENODEV ? 77 : 1;
	}
	if (rg_cgroup_destroy(cg, &err) < 0) {
		print_err("probe", &err);
		return 1;
	}
	return 0;
}

/* Remove the test parent if empty, in every hierarchy. */
static int remove_parent(void)
{
	char path[PATH_MAX];
	int bad = 0;
	size_t i;

	for (i = 0; i < NR_V1_CTRLS + 2; i++) {
		if (i < NR_V1_CTRLS && (mode != RG_CGROUP_V1 || !v1_mount[i]))
			continue;
		if (i == NR_V1_CTRLS && mode != RG_CGROUP_V2)
			continue;
		snprintf(path, sizeof(path), "%s/%s",
			 i < NR_V1_CTRLS ? v1_mount[i] :
			 i == NR_V1_CTRLS ? "/sys/fs/cgroup" :
					    V2_TEST_ROOT,
			 TEST_PARENT);
		if (rmdir(path) < 0 && errno != ENOENT) {
			fprintf(stderr, "cannot remove %s: %m\n", path);
			bad = 1;
		}
	}
	return bad;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_memory_peak, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_baseline_reset, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_oom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits_readback, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kill_setsid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fork_bomb, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cpuset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_create, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_clone_kill, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_attach, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_fork_bomb, setup,
						teardown),
	};
	int ret;

	ret = preflight();
	if (ret)
		return ret;
	/* Orphaned grandchildren come back to us, to be reaped and checked. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ret = cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
	return remove_parent() || ret ? 1 : 0;
}
