/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rg_fd_table_reserve(): the table holds the run's fds before a task
 * shares it, so that no later open waits for an RCU grace period.
 * /proc/self/status's FDSize is the table's size.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fd_table.h"

static long fd_size(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long size = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "FDSize: %ld", &size) == 1)
			break;
	fclose(f);
	return size;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the directory's own fd */
}

/*
 * fn's exit code (0: passed, else which check failed), run in a
 * grandchild whose parent had only fds 0-2: a fork copies a table of 64
 * slots then, whatever the test runner left open in us.
 */
static int in_fresh_table(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t inner;

		close_range(3, ~0U, 0);
		inner = fork();
		if (inner == 0)
			_exit(fd_size() == 64 ? fn() : 90);
		if (inner < 0 || waitpid(inner, &status, 0) != inner)
			_exit(91);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 92);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int grows_now_and_leaves_no_fd(void)
{
	int before = open_fds();

	rg_fd_table_reserve(STDERR_FILENO);
	if (fd_size() < RG_FD_TABLE_RESERVED)
		return 1;
	if (open_fds() != before)
		return 2;
	return fcntl(RG_FD_TABLE_RESERVED - 1, F_GETFD) == -1 ? 0 : 3;
}

static void test_grows_now_and_leaves_no_fd(void **state)
{
	(void)state;
	assert_int_equal(in_fresh_table(grows_now_and_leaves_no_fd), 0);
}

static void *wait_for_eof(void *arg)
{
	char c;

	while (read(*(int *)arg, &c, 1) > 0)
		;
	return NULL;
}

/*
 * Fds up to near the mark (a pooled run has ~70) once a thread shares it;
 * a few are left for fd_size()'s own.
 */
static int no_growth_once_shared(void)
{
	int pipe_fds[2], fd = -1;
	pthread_t thread;
	long reserved;

	if (pipe(pipe_fds) < 0)
		return 1;
	rg_fd_table_reserve(pipe_fds[0]);
	reserved = fd_size();
	if (pthread_create(&thread, NULL, wait_for_eof, &pipe_fds[0]))
		return 2;
	while (fd < RG_FD_TABLE_RESERVED - 8)
		if ((fd = open("/dev/null", O_RDONLY)) < 0)
			return 3;
	if (fd_size() != reserved)
		return 4;
	close(pipe_fds[1]);
	return pthread_join(thread, NULL) ? 5 : 0;
}

static void test_no_growth_once_shared(void **state)
{
	(void)state;
	assert_int_equal(in_fresh_table(no_growth_once_shared), 0);
}

/* Without the reserve, the same opens grow the shared table (the wait). */
static int growth_without_reserve(void)
{
	int pipe_fds[2], fd = -1;
	pthread_t thread;

	if (pipe(pipe_fds) < 0 ||
	    pthread_create(&thread, NULL, wait_for_eof, &pipe_fds[0]))
		return 1;
	while (fd < RG_FD_TABLE_RESERVED - 8)
		if ((fd = open("/dev/null", O_RDONLY)) < 0)
			return 2;
	close(pipe_fds[1]);
	pthread_join(thread, NULL);
	return fd_size() > 64 ? 0 : 3;
}

static void test_growth_without_reserve(void **state)
{
	(void)state;
	assert_int_equal(in_fresh_table(growth_without_reserve), 0);
}

/* Under RLIMIT_NOFILE 64 the table cannot grow: nothing happens. */
static int low_limit_is_no_error(void)
{
	struct rlimit low = { 64, 64 };
	int before = open_fds();

	if (setrlimit(RLIMIT_NOFILE, &low) < 0)
		return 1;
	rg_fd_table_reserve(STDERR_FILENO);
	return fd_size() == 64 && open_fds() == before ? 0 : 2;
}

static void test_low_limit_is_no_error(void **state)
{
	(void)state;
	assert_int_equal(in_fresh_table(low_limit_is_no_error), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grows_now_and_leaves_no_fd),
		cmocka_unit_test(test_no_growth_once_shared),
		cmocka_unit_test(test_growth_without_reserve),
		cmocka_unit_test(test_low_limit_is_no_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
