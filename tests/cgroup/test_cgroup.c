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
#include <pthread.h>
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
#include <sys/sysinfo.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libcgroup.h>

#include "cgroup/cgroup.h"
#include "cgroup/cgroup_backend.h"

/* Two levels, as a pool's slots have; only below runguard/ (shared hosts). */
#define TEST_PARENT "runguard/test-cg"
/*
 * The v2-only tests use the host's cgroup2 root on a v2 host, and the
 * controller-less second mount of a hybrid v1 host.
 */
#define V2_TEST_ROOT \
	(mode == RG_CGROUP_V2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified")
#define MIB (1024ull * 1024ull)
/* An otherwise unused uid, so that RLIMIT_NPROC counts only the bomb. */
#define BOMB_UID 61234
#define BOMB_NPROC 200

static enum rg_cgroup_mode mode;
/* cpu: the library makes a group there too when it is mounted. */
static const char *const v1_ctrls[] = { "memory", "cpuacct", "freezer",
					"cpuset", "cpu" };
#define NR_V1_CTRLS (sizeof(v1_ctrls) / sizeof(v1_ctrls[0]))
static char *v1_mount[NR_V1_CTRLS];

/* Per test: the cgroups it made, destroyed and checked in teardown. */
struct tstate {
	struct rg_cgroup *cg[2];
	char name[2][64];
	const char *v2_root; /* non-NULL: created with rg_cgroup_v2_create */
};

/* A skip always says why: a silent skip looks like a pass. */
#define skip_because(reason)                              \
	do {                                              \
		print_message("  skipped: %s\n", reason); \
		skip();                                   \
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

static struct rg_cgroup *make_cg(struct tstate *ts, int slot, const char *what,
				 bool cpuset)
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
	/* v2 callers pass no controller: on v1 that is a failed test */
	for (i = 0; ctrl && i < NR_V1_CTRLS; i++)
		if (!strcmp(v1_ctrls[i], ctrl))
			break;
	assert_true(ctrl && i < NR_V1_CTRLS && v1_mount[i]);
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

/*
 * The fork-bomb test hung once (6.1, cgroup v1, in the lab, whose boots
 * have no shell): a watch thread turns a hang into a failure that shows
 * where the test thread and its children wait in the kernel.
 */
#define HANG_SECONDS 60

struct hang_watch {
	pthread_t thread;
	bool running;
	pid_t tid; /* the test's thread */
	const char *volatile phase;
};

/* One at a time; teardown stops it when an assertion left the test. */
static struct hang_watch watch;

static void print_proc_file(const char *label, const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		fprintf(stderr, "  %s %s:\n%s\n", label, path, buf);
	}
}

static void print_task(const char *label, pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	print_proc_file(label, path);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	print_proc_file(label, path);
}

static void *hang_watch_main(void *arg)
{
	struct hang_watch *w = arg;
	char path[64];
	int child, shown = 0;
	FILE *f;

	sleep(HANG_SECONDS);
	fprintf(stderr, "HANG: no progress for %d s while %s\n", HANG_SECONDS,
		w->phase);
	print_task("test thread", getpid(), w->tid);
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", w->tid);
	f = fopen(path, "r");
	while (f && shown++ < 10 && fscanf(f, "%d", &child) == 1)
		print_task("child", child, child);
	if (f)
		fclose(f);
	abort();
	return NULL;
}

static void hang_watch_start(struct hang_watch *w, const char *phase)
{
	w->tid = (pid_t)syscall(SYS_gettid);
	w->phase = phase;
	assert_int_equal(pthread_create(&w->thread, NULL, hang_watch_main, w),
			 0);
	w->running = true;
}

static void hang_watch_stop(struct hang_watch *w)
{
	if (!w->running)
		return;
	pthread_cancel(w->thread);
	pthread_join(w->thread, NULL);
	w->running = false;
}

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct tstate));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct tstate *ts = *state;

	hang_watch_stop(&watch);
	destroy_cg(ts, 0);
	destroy_cg(ts, 1);
	free(ts);
	return 0;
}

/* ---- children ---- */

typedef int (*child_fn)(void *arg);

static pid_t spawn(struct rg_cgroup *cg, child_fn fn, void *arg)
{
	pid_t pid;

	rg_cgroup_expect_tasks(cg);
	pid = fork();

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
	struct rg_cgroup_limits l = {
		.set = RG_CG_SET_MEMORY | RG_CG_SET_CPUSET,
		.memory_bytes = bytes,
		.cpuset = cpuset,
	};
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
		assert_string_equal(st.memory_method,
				    "memory.current(sampled)");
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

	hang_watch_start(&watch, "letting the bomb grow");
	nanosleep(&delay, NULL);
	assert_int_equal(populated(cg), 1);
	watch.phase = "killing the bomb (rg_cgroup_kill)";
	kill_all(cg);
	assert_int_equal(populated(cg), 0);
	watch.phase = "reaping the bomb's processes";
	/* Dead already; reap them all (subreaper) so no zombie counts. */
	for (;;) {
		pid_t pid = waitpid(-1, &status, 0);

		if (pid < 0)
			break;
		reaped++;
		if (pid == first)
			assert_true(WIFSIGNALED(status));
	}
	hang_watch_stop(&watch);
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
	struct rg_cgroup_limits bad = { RG_CG_SET_CPUSET, RG_UNLIMITED,
					"99999" };
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
	struct rg_cgroup_limits pin = { RG_CG_SET_CPUSET, RG_UNLIMITED, "0" };
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
	assert_int_equal(rg_cgroup_create(TEST_PARENT, ts->name[0], false,
					  &dup, &err),
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
		skip_because(
			"v1 only: needs a freezer hierarchy to pre-create in");
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
						  cpuset_available(), &cg, &err),
				 0);
		assert_int_equal(rg_cgroup_destroy(cg, &err), 0);
		assert_gone(NULL, name);
	}
	assert_int_equal(count_fds(), fds);
}

/* ---- a pooled slot: one cgroup reused by many runs ---- */

/* rg_cgroup_open() of TEST_PARENT/name, which must work. */
static struct rg_cgroup *open_cg(const char *name, bool cpuset)
{
	struct rg_error err = { 0 };
	struct rg_cgroup *cg = NULL;
	int ret = rg_cgroup_open(TEST_PARENT, name, cpuset, false, &cg, &err);

	if (ret < 0)
		print_err("rg_cgroup_open", &err);
	assert_int_equal(ret, 0);
	assert_non_null(cg);
	return cg;
}

static void reset(struct rg_cgroup *cg)
{
	struct rg_error err = { 0 };
	int ret = rg_cgroup_reset(cg, &err);

	if (ret < 0)
		print_err("rg_cgroup_reset", &err);
	assert_int_equal(ret, 0);
}

static uint64_t usage(struct rg_cgroup *cg)
{
	struct rg_error err = { 0 };
	uint64_t bytes = 0;
	int ret = rg_cgroup_memory_usage(cg, &bytes, &err);

	if (ret < 0)
		print_err("rg_cgroup_memory_usage", &err);
	assert_int_equal(ret, 0);
	return bytes;
}

static void apply(struct rg_cgroup *cg, unsigned int set, uint64_t bytes,
		  const char *cpuset)
{
	struct rg_cgroup_limits l = { set, bytes, cpuset };
	struct rg_error err = { 0 };
	int ret = rg_cgroup_apply_limits(cg, &l, &err);

	if (ret < 0)
		print_err("rg_cgroup_apply_limits", &err);
	assert_int_equal(ret, 0);
}

static void assert_cg_file(const char *ctrl, const char *name,
			   const char *file, const char *want)
{
	char buf[256];

	read_cg(ctrl, name, file, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void write_path(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "open %s: %m\n", path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* The run directory is there in every hierarchy a run needs. */
static void assert_present(const char *name)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < (mode == RG_CGROUP_V1 ? 3 : 1); i++) {
		cg_path(path, sizeof(path), NULL, v1_ctrls[i], name, "");
		if (!exists(path))
			fprintf(stderr, "missing: %s\n", path);
		assert_true(exists(path));
	}
}

static double ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

/* open takes what is there; close leaves it; create still wants it new. */
static void test_open_existing(void **state)
{
	struct tstate *ts = *state;
	struct rg_error err = { 0 };
	bool cpus = cpuset_available();
	struct rg_cgroup *cg, *dup = NULL;
	struct rg_cgroup_stats st;
	int fds, i;

	make_name(ts->name[0], sizeof(ts->name[0]), "open");
	cg = open_cg(ts->name[0], cpus);
	assert_true(cg->fresh);
	assert_exit_zero(spawn(cg, touch_mib, (void *)1));
	rg_cgroup_close(cg);
	rg_cgroup_close(NULL);
	assert_present(ts->name[0]);
	fds = count_fds();
	for (i = 0; i < 20; i++) {
		cg = open_cg(ts->name[0], cpus);
		assert_false(cg->fresh);
		rg_cgroup_close(cg);
	}
	assert_int_equal(count_fds(), fds);
	assert_int_equal(rg_cgroup_create(TEST_PARENT, ts->name[0], cpus, &dup,
					  &err),
			 -1);
	assert_int_equal(err.errnum, EEXIST);
	assert_null(dup);
	assert_present(ts->name[0]);
	/* A run in it works; destroy (teardown) removes it. */
	cg = ts->cg[0] = open_cg(ts->name[0], cpus);
	limit(cg, RG_UNLIMITED, NULL);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)5));
	stats(cg, &st);
	assert_int_equal(st.memory_peak_valid, rg_cgroup_peak_resettable(cg));
}

/* In a child: wait for the go (EOF), open; 10 + fresh, or 1. */
static int race_open(const char *name, int go_fd)
{
	struct rg_error err = { 0 };
	struct rg_cgroup *cg;
	char c;
	int ret;

	if (read(go_fd, &c, 1) != 0)
		return 2;
	if (rg_cgroup_open(TEST_PARENT, name, false, false, &cg, &err) < 0) {
		print_err("racing rg_cgroup_open", &err);
		return 1;
	}
	ret = 10 + cg->fresh;
	rg_cgroup_close(cg);
	return ret;
}

static void test_open_race(void **state)
{
	struct tstate *ts = *state;
	int round, i, p[2], status, nr_fresh;
	pid_t pid[2];

	for (round = 0; round < 10; round++) {
		make_name(ts->name[0], sizeof(ts->name[0]), "race");
		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		for (i = 0; i < 2; i++) {
			pid[i] = fork();
			assert_true(pid[i] >= 0);
			if (pid[i] == 0) {
				close(p[1]);
				_exit(race_open(ts->name[0], p[0]));
			}
		}
		close(p[0]);
		close(p[1]);
		nr_fresh = 0;
		for (i = 0; i < 2; i++) {
			status = wait_status(pid[i]);
			assert_true(WIFEXITED(status));
			assert_in_range(WEXITSTATUS(status), 10, 11);
			nr_fresh += WEXITSTATUS(status) - 10;
		}
		/* v1: each may win a different hierarchy, then neither is. */
		if (mode == RG_CGROUP_V2)
			assert_int_equal(nr_fresh, 1);
		else
			assert_true(nr_fresh <= 1);
		ts->cg[0] = open_cg(ts->name[0], false);
		assert_false(ts->cg[0]->fresh);
		destroy_cg(ts, 0);
	}
}

/*
 * Failing half-way, open removes the run directories it made and keeps
 * the one that was there. The name is a control file of the freezer
 * hierarchy, so opening fails there, after memory and cpuacct.
 */
static void test_open_partial(void **state)
{
	const char *name = "freezer.state";
	char mem_dir[PATH_MAX], acct_dir[PATH_MAX], file[PATH_MAX];
	struct rg_error err = { 0 };
	struct rg_cgroup *cg = NULL;
	int fds;

	(void)state;
	if (mode != RG_CGROUP_V1 || !v1_mount[2] ||
	    !strcmp(v1_mount[0], v1_mount[2]) ||
	    !strcmp(v1_mount[1], v1_mount[2]))
		skip_because("v1 only: needs a freezer hierarchy of its own");
	cg_path(mem_dir, sizeof(mem_dir), NULL, "memory", name, "");
	cg_path(acct_dir, sizeof(acct_dir), NULL, "cpuacct", name, "");
	cg_path(file, sizeof(file), NULL, "freezer", "", name);
	assert_int_equal(mkdir(mem_dir, 0755), 0);
	fds = count_fds();
	assert_int_equal(rg_cgroup_open(TEST_PARENT, name, false, false, &cg,
					&err),
			 -1);
	print_err("  expected", &err);
	assert_int_equal(err.errnum, ENOTDIR);
	assert_null(cg);
	assert_int_equal(count_fds(), fds);
	assert_true(exists(mem_dir));
	assert_false(exists(acct_dir));
	assert_true(exists(file));
	assert_int_equal(rmdir(mem_dir), 0);
}

/* Each limit is written only when asked for; the other stays. */
static void test_selective_limits(void **state)
{
	struct tstate *ts = *state;
	const char *mem = mode == RG_CGROUP_V1 ? "memory.limit_in_bytes" :
						 "memory.max";
	const unsigned int both = RG_CG_SET_MEMORY | RG_CG_SET_CPUSET;
	char all[256] = "", path[PATH_MAX];
	struct rg_cgroup *cg;
	const char *n;

	if (!cpuset_available())
		skip_because("no cpuset hierarchy is mounted");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip_because("one CPU: pinned and unpinned read the same");
	cg = make_cg(ts, 0, "select", true);
	n = ts->name[0];
	/* Unpinned: v1 the parent's CPUs, v2 empty (the parent's). */
	if (mode == RG_CGROUP_V1) {
		cg_path(path, sizeof(path), NULL, "cpuset", "", "cpuset.cpus");
		read_path(path, all, sizeof(all));
	}
	apply(cg, both, 64 * MIB, "0");
	assert_cg_file("memory", n, mem, "67108864");
	assert_cg_file("cpuset", n, "cpuset.cpus", "0");
	apply(cg, RG_CG_SET_MEMORY, 32 * MIB, "1");
	assert_cg_file("memory", n, mem, "33554432");
	assert_cg_file("cpuset", n, "cpuset.cpus", "0");
	apply(cg, RG_CG_SET_CPUSET, 8 * MIB, NULL);
	assert_cg_file("memory", n, mem, "33554432");
	assert_cg_file("cpuset", n, "cpuset.cpus", all);
	apply(cg, RG_CG_SET_CPUSET, RG_UNLIMITED, "1");
	assert_cg_file("memory", n, mem, "33554432");
	assert_cg_file("cpuset", n, "cpuset.cpus", "1");
	apply(cg, 0, 8 * MIB, "0");
	assert_cg_file("memory", n, mem, "33554432");
	assert_cg_file("cpuset", n, "cpuset.cpus", "1");
	/* Without cpuset: unpinning is nothing to do, memory ignores it. */
	cg = make_cg(ts, 1, "select-nocpuset", false);
	apply(cg, RG_CG_SET_CPUSET, 8 * MIB, NULL);
	apply(cg, RG_CG_SET_MEMORY, 16 * MIB, "0");
	assert_cg_file("memory", ts->name[1], mem, "16777216");
}

struct fill_arg {
	const char *path;
	unsigned int mib;
};

/* Leaves mib MiB of page cache charged to the cgroup, dirty. */
static int fill_file(void *arg)
{
	const struct fill_arg *a = arg;
	static char chunk[1 << 20];
	unsigned int i;
	int fd;

	fd = open(a->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return 2;
	memset(chunk, 'x', sizeof(chunk));
	for (i = 0; i < a->mib; i++)
		if (write(fd, chunk, sizeof(chunk)) != sizeof(chunk))
			return 3;
	return close(fd) ? 4 : 0;
}

/* Page cache needs a disk file system: tmpfs pages are not reclaimable. */
#define PAGE_CACHE_DIR "/var/tmp"

/*
 * After a run that left page cache, reset brings usage and the next run's
 * peak back to those of a new cgroup. RG_TEST_PAGE_CACHE_MIB sets the size
 * (32 MiB).
 *
 * What rg_cgroup_reset() costs, on the development machine (6.18, cgroup
 * v1, 2 vCPUs, ext4, no swap), ten runs each of
 *   [RG_TEST_PAGE_CACHE_MIB=64] build/tests/cgroup/test-cgroup 2>&1 |
 *   grep reset:
 * - 64 MiB of dirty page cache left (66 MiB charged): 3.7-21 ms, most
 *   about 20 ms, 0.2 MiB (slab) stays; while other builds loaded the
 *   machine, some took 105-115 ms (so did clean, fsync'ed pages).
 * - 32 MiB left (33 MiB charged): 9-12 ms, 0.1 MiB stays.
 * - An emptied cgroup (usage 0): 3.4 us (one pread, five writes). In about
 *   one run of five a page or two of kernel memory stays charged (4-8 KiB);
 *   then every reset runs force_empty for nothing: 275-475 us.
 */
static void test_reset_page_cache(void **state)
{
	struct tstate *ts = *state;
	const char *env = getenv("RG_TEST_PAGE_CACHE_MIB");
	struct fill_arg a = { .mib = env ? (unsigned int)atoi(env) : 32 };
	struct rg_cgroup_stats st, fst;
	uint64_t before, after;
	struct rg_cgroup *cg;
	char path[PATH_MAX];
	struct timespec t;
	struct statfs sfs;
	double ms;
	int fd, i;

	if (statfs(PAGE_CACHE_DIR, &sfs) < 0 || sfs.f_type == TMPFS_MAGIC ||
	    sfs.f_type == RAMFS_MAGIC)
		skip_because(
			PAGE_CACHE_DIR
			" is missing or not on a disk file system (the kernel lab's root is a tmpfs): no reclaimable page cache");
	snprintf(path, sizeof(path), "%s/rg-test-cg-XXXXXX", PAGE_CACHE_DIR);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	a.path = path;
	cg = make_cg(ts, 0, "reuse", false);
	make_cg(ts, 1, "new", false);
	limit(cg, RG_UNLIMITED, NULL);
	limit(ts->cg[1], RG_UNLIMITED, NULL);
	assert_exit_zero(spawn(cg, fill_file, &a));
	kill_all(cg);
	before = usage(cg);
	clock_gettime(CLOCK_MONOTONIC, &t);
	reset(cg);
	ms = ms_since(&t);
	after = usage(cg);
	fprintf(stderr,
		"  reset: %u MiB written, %.1f MiB charged, %.1f MiB left, took %.2f ms\n",
		a.mib, before / (double)MIB, after / (double)MIB, ms);
	/* The next run's peak, and a new cgroup's, side by side. */
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)5));
	stats(cg, &st);
	start(ts->cg[1]);
	assert_exit_zero_sampled(ts->cg[1],
				 spawn(ts->cg[1], touch_mib, (void *)5));
	stats(ts->cg[1], &fst);
	unlink(path);
	assert_true(before >= a.mib * MIB / 2);
	assert_true(after <= 2 * MIB);
	assert_true(st.memory_peak_valid && fst.memory_peak_valid);
	assert_true(st.memory_peak <= fst.memory_peak + 4 * MIB);
	assert_true(st.memory_peak + 4 * MIB >= fst.memory_peak);
	/* Empty now: the cheap path. */
	kill_all(cg);
	reset(cg);
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (i = 0; i < 1000; i++)
		reset(cg);
	ms = ms_since(&t);
	fprintf(stderr,
		"  reset: emptied cgroup (%.0f KiB left), %.1f us each\n",
		usage(cg) / 1024.0, ms);
}

/*
 * Without swap, tmpfs pages cannot be reclaimed: reset still works (v2:
 * memory.reclaim's EAGAIN), and rg_cgroup_memory_usage() shows what
 * stays, which is how a pool sees that a cgroup needs recycling.
 */
static void test_reset_unreclaimable(void **state)
{
	struct tstate *ts = *state;
	struct fill_arg a = { .mib = 8 };
	uint64_t before, after, gone;
	struct rg_cgroup *cg;
	char path[PATH_MAX];
	struct timespec t;
	struct statfs sfs;
	struct sysinfo si;
	double ms;
	int fd;

	if (statfs("/dev/shm", &sfs) < 0 || sfs.f_type != TMPFS_MAGIC)
		skip_because("/dev/shm is not a tmpfs");
	if (sysinfo(&si) < 0 || si.totalswap)
		skip_because("swap is on: tmpfs pages could be reclaimed");
	snprintf(path, sizeof(path), "/dev/shm/rg-test-cg-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	a.path = path;
	cg = make_cg(ts, 0, "shm", false);
	limit(cg, RG_UNLIMITED, NULL);
	assert_exit_zero(spawn(cg, fill_file, &a));
	kill_all(cg);
	before = usage(cg);
	clock_gettime(CLOCK_MONOTONIC, &t);
	reset(cg);
	ms = ms_since(&t);
	after = usage(cg);
	unlink(path);
	gone = usage(cg);
	fprintf(stderr,
		"  reset: %.1f MiB charged, %.1f MiB left (tmpfs), took %.2f ms; %.1f MiB once removed\n",
		before / (double)MIB, after / (double)MIB, ms,
		gone / (double)MIB);
	assert_true(before >= 8 * MIB);
	assert_true(after >= 8 * MIB);
	assert_true(gone <= 2 * MIB);
	/* 5.10 reclaims through memory.high: it must be back at max. */
	if (mode == RG_CGROUP_V2)
		assert_cg_file(NULL, ts->name[0], "memory.high", "max");
}

/*
 * CPU time and OOM are the run's, though an earlier run in the same
 * cgroup (another process) spun and was OOM-killed.
 */
static void test_reuse_deltas(void **state)
{
	struct tstate *ts = *state;
	const char *mem = mode == RG_CGROUP_V1 ? "memory.limit_in_bytes" :
						 "memory.max";
	struct rg_cgroup_stats st;
	struct rg_cgroup *cg;
	double secs = 1.0, little = 0.1;
	char buf[64], path[PATH_MAX];
	uint64_t before;
	const char *n;
	int status;

	make_name(ts->name[0], sizeof(ts->name[0]), "deltas");
	n = ts->name[0];
	cg = open_cg(n, false);
	limit(cg, 32 * MIB, NULL);
	start(cg);
	assert_exit_zero(spawn(cg, spin, &secs));
	status = wait_status(spawn(cg, touch_mib, (void *)100));
	assert_true(WIFSIGNALED(status));
	stats(cg, &st);
	assert_true(st.oom_killed);
	kill_all(cg);
	rg_cgroup_close(cg);

	cg = ts->cg[0] = open_cg(n, false);
	assert_false(cg->fresh);
	before = usage(cg);
	reset(cg);
	fprintf(stderr, "  reset: %.2f MiB charged, %.2f MiB left\n",
		before / (double)MIB, usage(cg) / (double)MIB);
	if (mode == RG_CGROUP_V1) {
		assert_cg_file("memory", n, "memory.failcnt", "0");
		assert_cg_file("cpuacct", n, "cpuacct.usage", "0");
		cg_path(path, sizeof(path), NULL, "memory", n,
			"memory.memsw.failcnt");
		if (exists(path))
			assert_cg_file("memory", n, "memory.memsw.failcnt",
				       "0");
		read_cg("memory", n, "memory.max_usage_in_bytes", buf,
			sizeof(buf));
		assert_true(strtoull(buf, NULL, 10) <= 2 * MIB);
	}
	assert_cg_file("memory", n, mem, "33554432");
	start(cg);
	assert_exit_zero(spawn(cg, spin, &little));
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)1));
	stats(cg, &st);
	assert_false(st.oom_killed);
	assert_true(st.cpu_ns >= 50000000 && st.cpu_ns < 600000000);
	assert_int_equal(st.memory_peak_valid, rg_cgroup_peak_resettable(cg));
	if (st.memory_peak_valid)
		assert_true(st.memory_peak < 16 * MIB);
}

/*
 * Kill through a handle that opened the cgroup: tasks an earlier process
 * left, frozen by a process that died before it could thaw them.
 */
static void test_reuse_kill(void **state)
{
	struct tstate *ts = *state;
	struct setsid_arg a = { .nr = 20 };
	struct rg_cgroup *cg = make_cg(ts, 0, "rekill", false);
	const char *n = ts->name[0];
	char path[PATH_MAX];
	pid_t pids[20];
	int p[2], i, status;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	a.fd = p[1];
	assert_exit_zero(spawn(cg, fork_setsid, &a));
	close(p[1]);
	for (i = 0; i < a.nr; i++)
		assert_int_equal(read(p[0], &pids[i], sizeof(pids[i])),
				 sizeof(pids[i]));
	close(p[0]);
	rg_cgroup_close(cg);
	ts->cg[0] = NULL;
	if (mode == RG_CGROUP_V1)
		cg_path(path, sizeof(path), NULL, "freezer", n,
			"freezer.state");
	else
		cg_path(path, sizeof(path), NULL, NULL, n, "cgroup.freeze");
	write_path(path, mode == RG_CGROUP_V1 ? "FROZEN" : "1");

	cg = ts->cg[0] = open_cg(n, false);
	assert_false(cg->fresh);
	if (mode == RG_CGROUP_V1)
		assert_cg_file("freezer", n, "freezer.state", "THAWED");
	else
		assert_cg_file(NULL, n, "cgroup.freeze", "0");
	assert_int_equal(populated(cg), 1);
	kill_all(cg);
	assert_int_equal(populated(cg), 0);
	for (i = 0; i < a.nr; i++) {
		status = wait_status(pids[i]);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGKILL);
	}
}

/*
 * v2 5.19-6.11: memory.peak of a cgroup an earlier process used holds that
 * run's peak and cannot be reset; it must be reported as invalid.
 */
static void test_v2_stale_peak(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup_stats st;
	struct rg_cgroup *cg;
	const char *n;

	if (mode != RG_CGROUP_V2)
		skip_because(
			"cgroup v2 only (kernel lab, -c v2): v1 watermarks can always be reset");
	make_name(ts->name[0], sizeof(ts->name[0]), "stale");
	n = ts->name[0];
	cg = open_cg(n, false);
	assert_true(cg->fresh);
	limit(cg, RG_UNLIMITED, NULL);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)50));
	stats(cg, &st);
	assert_true(st.memory_peak_valid);
	assert_true(st.memory_peak >= 50 * MIB);
	kill_all(cg);
	rg_cgroup_close(cg);

	cg = ts->cg[0] = open_cg(n, false);
	assert_false(cg->fresh);
	reset(cg);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)5));
	stats(cg, &st);
	if (!rg_cgroup_peak_resettable(cg)) {
		assert_false(st.memory_peak_valid);
		assert_string_equal(st.memory_method, "memory.peak(stale)");
		/* what it would have said: the earlier run's */
		assert_true(st.memory_peak >= 50 * MIB);
		return;
	}
	assert_true(st.memory_peak_valid);
	assert_true(st.memory_peak >= 5 * MIB && st.memory_peak < 30 * MIB);
	assert_true(!strcmp(st.memory_method, "memory.peak(fd-reset)") ||
		    !strcmp(st.memory_method, "memory.current(sampled)"));
}

/*
 * The pool's default on v2 5.19-6.11: memory.peak ignored and
 * memory.current sampled, so that a reused cgroup reports each run's own
 * peak, and the limit itself when usage reached it. Elsewhere the call
 * changes nothing: the method stays what a new cgroup reports.
 */
static void test_sampled_unresettable_peak(void **state)
{
	struct tstate *ts = *state;
	struct rg_cgroup_stats st;
	struct rg_cgroup *cg;
	char fresh_method[40];
	bool unresettable;
	const char *n;
	int status;

	make_name(ts->name[0], sizeof(ts->name[0]), "sampled");
	n = ts->name[0];
	cg = open_cg(n, false);
	limit(cg, RG_UNLIMITED, NULL);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)50));
	stats(cg, &st);
	snprintf(fresh_method, sizeof(fresh_method), "%s", st.memory_method);
	kill_all(cg);
	rg_cgroup_close(cg);

	cg = ts->cg[0] = open_cg(n, false);
	/* a used cgroup's peak: clean unless reset or sampled already */
	unresettable = !rg_cgroup_peak_clean(cg);
	fprintf(stderr, "  memory.peak %s\n",
		unresettable ? "cannot be reset: sampled instead" :
			       "needs no sampling");
	rg_cgroup_sample_unresettable_peak(cg);
	assert_true(rg_cgroup_peak_clean(cg));
	reset(cg);
	start(cg);
	assert_exit_zero_sampled(cg, spawn(cg, touch_mib, (void *)5));
	stats(cg, &st);
	assert_true(st.memory_peak_valid);
	assert_true(st.memory_peak >= 5 * MIB && st.memory_peak < 30 * MIB);
	assert_string_equal(st.memory_method,
			    unresettable ? "memory.current(sampled)" :
					   fresh_method);

	/*
	 * Usage reached the limit: the peak is the limit, exactly, also in
	 * a handle that did not write it (a pool slot keeps its limit).
	 */
	kill_all(cg);
	reset(cg);
	limit(cg, 32 * MIB, NULL);
	rg_cgroup_close(cg);
	cg = ts->cg[0] = open_cg(n, false);
	rg_cgroup_sample_unresettable_peak(cg);
	start(cg);
	status = wait_status(spawn(cg, touch_mib, (void *)100));
	assert_true(WIFSIGNALED(status));
	stats(cg, &st);
	assert_true(st.oom_killed);
	assert_true(st.memory_peak_valid);
	if (unresettable) {
		assert_true(st.memory_peak == 32 * MIB);
		assert_false(st.memory_peak_lower_bound);
	}
	assert_true(st.memory_peak <= 33 * MIB);
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
				  false, &ts->cg[0], &err);
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
		struct rg_cgroup_limits l = { RG_CG_SET_MEMORY, 32 * MIB,
					      NULL };
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

/* open on v2: fresh or not, thaws what was left frozen, kills, no memory. */
static void test_v2_open(void **state)
{
	struct tstate *ts = *state;
	struct rg_error err = { 0 };
	struct rg_cgroup *cg = NULL;
	char path[PATH_MAX], buf[16];
	uint64_t bytes;
	int i, status;
	pid_t pid;

	if (!v2_test_root_usable())
		skip_because("no cgroup2 mount at " V2_TEST_ROOT_TEXT);
	ts->v2_root = V2_TEST_ROOT;
	make_name(ts->name[0], sizeof(ts->name[0]), "v2open");
	for (i = 0; i < 2; i++) {
		assert_int_equal(rg_cgroup_v2_create(V2_TEST_ROOT, TEST_PARENT,
						     ts->name[0], 0, true, &cg,
						     &err),
				 0);
		assert_int_equal(cg->fresh, i == 0);
		if (i == 0) {
			pid = clone_into(rg_cgroup_clone_fd(cg));
			assert_true(pid >= 0);
			if (pid == 0)
				_exit(pause_forever(NULL));
			rg_cgroup_close(cg);
			cg_path(path, sizeof(path), V2_TEST_ROOT, NULL,
				ts->name[0], "cgroup.freeze");
			write_path(path, "1");
		}
	}
	ts->cg[0] = cg;
	read_path(path, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	assert_int_equal(populated(cg), 1);
	kill_all(cg);
	status = wait_status(pid);
	assert_true(WIFSIGNALED(status));
	/* No memory controller there: nothing to reclaim, nothing to read. */
	reset(cg);
	assert_int_equal(rg_cgroup_memory_usage(cg, &bytes, &err), -1);
	assert_int_equal(err.errnum, ENODEV);
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
			 i < NR_V1_CTRLS  ? v1_mount[i] :
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
		cmocka_unit_test_setup_teardown(test_fork_bomb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpuset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_create, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_clone_kill, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_attach, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_fork_bomb, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_open_existing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_open_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_partial, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_selective_limits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reset_page_cache, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reset_unreclaimable,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reuse_deltas, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reuse_kill, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sampled_unresettable_peak,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_stale_peak, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_open, setup, teardown),
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
