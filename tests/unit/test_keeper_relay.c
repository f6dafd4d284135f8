/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's copy of a resident run's output into regular files
 * (lib/pool/keeper_relay.c), with a test process writing what a runner
 * would forward: which destinations get a pipe, the order of two streams
 * into one file, and a file that fails (the rest is dropped, so that the
 * runner never waits); the copy done at the counts the runner's reply
 * gives, while it still holds its ends.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/keeper_relay.h"
#include "tmp_path.h"

static char dir[] = "/tmp/rg-keeper-relay-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	unlink(tmp_path(dir, "out"));
	unlink(tmp_path(dir, "err"));
	unlink(tmp_path(dir, "ro"));
	return rmdir(dir);
}

static int open_out(const char *name, int flags)
{
	int fd = open(tmp_path(dir, name), flags | O_CREAT | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	return fd;
}

static void write_str(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void assert_file(const char *name, const char *want)
{
	char buf[256] = "";
	int fd = open(tmp_path(dir, name), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
	close(fd);
	assert_string_equal(buf, want);
}

static void test_a_pipe_or_a_null_device_goes_as_it_is(void **state)
{
	struct rg_relay rl;
	struct rg_error err;
	int p[2], null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(rg_relay_open(&rl, (const int[]){ p[1], null }, &err),
			 0);
	assert_int_equal(rl.runner_fd[0], p[1]);
	assert_int_equal(rl.runner_fd[1], null);
	assert_int_equal(rl.stream[0].pipe_fd, -1);
	assert_int_equal(rl.stream[1].pipe_fd, -1);
	assert_false(rg_relay_is_ours(&rl, 0));
	assert_false(rg_relay_is_ours(&rl, 1));
	rg_relay_sent(&rl);
	assert_int_equal(rg_relay_finish(&rl, NULL, &err), 0);
	rg_relay_close(&rl);
	close(p[0]);
	close(p[1]);
	close(null);
}

/* 2>&1 into a file: one pipe, so the file has the forwarding order. */
static void test_one_file_for_both_streams_keeps_their_order(void **state)
{
	struct rg_relay rl;
	struct rg_error err;
	int out = open_out("out", O_WRONLY | O_TRUNC), both = dup(out);

	(void)state;
	assert_int_equal(rg_relay_open(&rl, (const int[]){ out, both }, &err),
			 0);
	assert_true(rl.stream[0].pipe_fd >= 0);
	assert_int_equal(rl.stream[1].pipe_fd, -1);
	assert_int_equal(rl.runner_fd[0], rl.runner_fd[1]);
	write_str(rl.runner_fd[1], "err first\n");
	write_str(rl.runner_fd[0], "then out\n");
	/* the runner's ends are the runner's to close: here, the test's */
	{
		int runner = dup(rl.runner_fd[0]);

		rg_relay_sent(&rl);
		assert_int_equal(rg_relay_pump(&rl, 0, &err), 0);
		write_str(runner, "last\n");
		close(runner);
	}
	assert_int_equal(rg_relay_finish(&rl, NULL, &err), 0);
	rg_relay_close(&rl);
	close(both);
	close(out);
	assert_file("out", "err first\nthen out\nlast\n");
}

/* O_APPEND: splice refuses it; the copy goes through a buffer. */
static void test_an_appending_file_gets_everything(void **state)
{
	struct rg_relay rl;
	struct rg_error err;
	int out = open_out("out", O_WRONLY | O_TRUNC);

	(void)state;
	write_str(out, "before\n");
	close(out);
	out = open_out("out", O_WRONLY | O_APPEND);
	assert_int_equal(rg_relay_open(&rl, (const int[]){ out, -1 }, &err), 0);
	assert_true(rl.stream[0].pipe_fd >= 0);
	write_str(rl.runner_fd[0], "appended\n");
	rg_relay_sent(&rl);
	assert_int_equal(rg_relay_finish(&rl, NULL, &err), 0);
	rg_relay_close(&rl);
	close(out);
	assert_file("out", "before\nappended\n");
}

/* A file that cannot take the output: an error, and the pipe still ends. */
static void test_a_failing_file_is_reported_and_drained(void **state)
{
	struct rg_relay rl;
	struct rg_error err = { 0 };
	int ro = open_out("ro", O_RDONLY), runner;

	(void)state;
	assert_int_equal(rg_relay_open(&rl, (const int[]){ ro, -1 }, &err), 0);
	runner = dup(rl.runner_fd[0]);
	rg_relay_sent(&rl);
	write_str(runner, "lost\n");
	assert_int_equal(rg_relay_pump(&rl, 0, &err), -1);
	assert_int_equal(err.errnum, EBADF);
	assert_non_null(strstr(err.message, "stdout"));
	write_str(runner, "dropped, not waited for\n");
	close(runner);
	assert_int_equal(rg_relay_finish(&rl, NULL, &err), 0);
	assert_int_equal(rl.stream[0].pipe_fd, -1);
	rg_relay_close(&rl);
	close(ro);
}

/*
 * The runner keeps its ends until it exits, after its reply: the reply's
 * counts end the copy (with EOF only, this would wait 10 s and fail).
 */
static void test_the_reply_s_counts_end_the_copy(void **state)
{
	struct rg_relay rl;
	struct rg_error err;
	int out = open_out("out", O_WRONLY | O_TRUNC);
	int errf = open_out("err", O_WRONLY | O_TRUNC), runner[2];

	(void)state;
	assert_int_equal(rg_relay_open(&rl, (const int[]){ out, errf }, &err),
			 0);
	assert_true(rg_relay_is_ours(&rl, 0));
	assert_true(rg_relay_is_ours(&rl, 1));
	runner[0] = dup(rl.runner_fd[0]);
	runner[1] = dup(rl.runner_fd[1]);
	rg_relay_sent(&rl);
	write_str(runner[0], "out\n");
	write_str(runner[1], "error\n");
	assert_int_equal(rg_relay_finish(&rl, (const uint64_t[]){ 4, 6 }, &err),
			 0);
	assert_int_equal(rl.stream[0].consumed, 4);
	assert_int_equal(rl.stream[1].consumed, 6);
	rg_relay_close(&rl);
	close(runner[0]);
	close(runner[1]);
	close(out);
	close(errf);
	assert_file("out", "out\n");
	assert_file("err", "error\n");
}

/* 2>&1: one pipe carries what the reply counts for both outputs. */
static void test_one_pipe_carries_both_counts(void **state)
{
	struct rg_relay rl;
	struct rg_error err;
	int out = open_out("out", O_WRONLY | O_TRUNC), both = dup(out), runner;

	(void)state;
	assert_int_equal(rg_relay_open(&rl, (const int[]){ out, both }, &err),
			 0);
	assert_true(rg_relay_is_ours(&rl, 0));
	assert_true(rg_relay_is_ours(&rl, 1));
	runner = dup(rl.runner_fd[0]);
	rg_relay_sent(&rl);
	write_str(runner, "err\nout\n");
	assert_int_equal(rg_relay_finish(&rl, (const uint64_t[]){ 4, 4 }, &err),
			 0);
	rg_relay_close(&rl);
	close(runner);
	close(both);
	close(out);
	assert_file("out", "err\nout\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_pipe_or_a_null_device_goes_as_it_is),
		cmocka_unit_test(
			test_one_file_for_both_streams_keeps_their_order),
		cmocka_unit_test(test_an_appending_file_gets_everything),
		cmocka_unit_test(test_a_failing_file_is_reported_and_drained),
		cmocka_unit_test(test_the_reply_s_counts_end_the_copy),
		cmocka_unit_test(test_one_pipe_carries_both_counts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
