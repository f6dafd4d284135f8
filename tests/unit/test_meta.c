/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The meta file, byte for byte. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <runguard/meta.h>

static struct rg_result normal_result(void)
{
	struct rg_result r = RG_RESULT_INIT;

	r.outcome = RG_OUTCOME_COMPLETED;
	r.exit_code = 0;
	r.wall_time = 0.0134;
	r.user_time = 0.0;
	r.sys_time = 0.004;
	r.cpu_time = 0.0046;
	r.memory_bytes = 2732032;
	r.stream_bytes[RG_STDOUT] = 14;
	r.stream_bytes[RG_STDERR] = 0;
	/* without extra_keys it must not show up */
	strcpy(r.memory_method, "memory.peak");
	r.major_faults = 3;
	return r;
}

static void expect_meta_opts(const struct rg_result *r,
			     const struct rg_meta_options *mo,
			     const char *expected)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(rg_meta_write_result(f, r, mo), 0);
	fclose(f);
	assert_string_equal(text, expected);
	free(text);
}

static void expect_meta(const struct rg_result *r, enum rg_time_type used,
			bool stream_limit, const char *expected)
{
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = used,
				      .stream_limit_given = stream_limit };

	expect_meta_opts(r, &mo, expected);
}

static void test_normal_run(void **state)
{
	struct rg_result r = normal_result();

	(void)state;
	expect_meta(&r, RG_TIME_CPU, true,
		    "memory-bytes: 2732032\n"
		    "exitcode: 0\n"
		    "wall-time: 0.013\n"
		    "user-time: 0.000\n"
		    "sys-time: 0.004\n"
		    "cpu-time: 0.005\n"
		    "time-used: cpu-time\n"
		    "time-result: \n"
		    "output-truncated: \n"
		    "stdin-bytes: 0\n"
		    "stdout-bytes: 14\n"
		    "stderr-bytes: 0\n");
}

static void test_without_stream_limit(void **state)
{
	struct rg_result r = normal_result();

	(void)state;
	/* truncation flags are ignored when -s was not given */
	r.stream_truncated[RG_STDOUT] = true;
	expect_meta(&r, RG_TIME_CPU, false,
		    "memory-bytes: 2732032\n"
		    "exitcode: 0\n"
		    "wall-time: 0.013\n"
		    "user-time: 0.000\n"
		    "sys-time: 0.004\n"
		    "cpu-time: 0.005\n"
		    "time-used: cpu-time\n"
		    "time-result: \n"
		    "stdin-bytes: 0\n"
		    "stdout-bytes: 14\n"
		    "stderr-bytes: 0\n");
}

static void test_truncated_streams(void **state)
{
	static const char *const want[] = {
		"output-truncated: \n",
		"output-truncated: stdout\n",
		"output-truncated: stderr\n",
		"output-truncated: stdout,stderr\n",
	};

	(void)state;
	for (int i = 0; i < 4; i++) {
		struct rg_result r = normal_result();
		struct rg_meta_options mo = { .struct_size = sizeof(mo),
					      .time_used = RG_TIME_CPU,
					      .stream_limit_given = true };
		char *text = NULL, frag[64];
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		r.stream_truncated[RG_STDOUT] = i & 1;
		r.stream_truncated[RG_STDERR] = i & 2;
		assert_int_equal(rg_meta_write_result(f, &r, &mo), 0);
		fclose(f);
		assert_non_null(strstr(text, want[i]));
		/* right after time-result, right before stdin-bytes */
		assert_non_null(strstr(text, "time-result: \noutput-truncated"));
		snprintf(frag, sizeof(frag), "%sstdin-bytes: 0\n", want[i]);
		assert_non_null(strstr(text, frag));
		free(text);
	}
}

static void test_hard_wall_timeout(void **state)
{
	struct rg_result r = normal_result();

	(void)state;
	r.exit_code = 143;
	r.term_signal = SIGTERM;
	r.received_signal = SIGALRM;
	r.wall_time = 1.5004;
	r.user_time = 1.49;
	r.sys_time = 0.01;
	r.cpu_time = 1.4999;
	r.wall_limit = RG_LIMIT_SOFT | RG_LIMIT_HARD;
	r.stream_bytes[RG_STDOUT] = 5000;
	r.stream_bytes[RG_STDERR] = 12;
	r.stream_truncated[RG_STDOUT] = true;
	expect_meta(&r, RG_TIME_WALL, true,
		    "memory-bytes: 2732032\n"
		    "exitcode: 143\n"
		    "signal: 14\n"
		    "wall-time: 1.500\n"
		    "user-time: 1.490\n"
		    "sys-time: 0.010\n"
		    "cpu-time: 1.500\n"
		    "time-used: wall-time\n"
		    "time-result: hard-timelimit\n"
		    "output-truncated: stdout\n"
		    "stdin-bytes: 0\n"
		    "stdout-bytes: 5000\n"
		    "stderr-bytes: 12\n");
}

static void test_command_signal_is_not_signal_key(void **state)
{
	struct rg_result r = normal_result();

	(void)state;
	/* killed by SIGXCPU: exit code 152, but runguard got no signal */
	r.exit_code = 152;
	r.term_signal = SIGXCPU;
	r.cpu_limit = RG_LIMIT_HARD;
	expect_meta(&r, RG_TIME_CPU, false,
		    "memory-bytes: 2732032\n"
		    "exitcode: 152\n"
		    "wall-time: 0.013\n"
		    "user-time: 0.000\n"
		    "sys-time: 0.004\n"
		    "cpu-time: 0.005\n"
		    "time-used: cpu-time\n"
		    "time-result: hard-timelimit\n"
		    "stdin-bytes: 0\n"
		    "stdout-bytes: 14\n"
		    "stderr-bytes: 0\n");
}

static void test_sigterm_received(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .stream_limit_given = false };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	r.exit_code = 137;
	r.received_signal = SIGTERM;
	assert_int_equal(rg_meta_write_result(f, &r, &mo), 0);
	fclose(f);
	assert_non_null(strstr(text, "exitcode: 137\nsignal: 15\nwall-time"));
	free(text);
}

static void test_no_cpu_time(void **state)
{
	struct rg_result r = normal_result();

	(void)state;
	r.cpu_time = -1;
	r.wall_limit = RG_LIMIT_SOFT;
	expect_meta(&r, RG_TIME_WALL, false,
		    "memory-bytes: 2732032\n"
		    "exitcode: 0\n"
		    "wall-time: 0.013\n"
		    "user-time: 0.000\n"
		    "sys-time: 0.004\n"
		    "cpu-time: -1.000\n"
		    "time-used: wall-time\n"
		    "time-result: soft-timelimit\n"
		    "stdin-bytes: 0\n"
		    "stdout-bytes: 14\n"
		    "stderr-bytes: 0\n");
	/* any negative value means "unavailable" */
	r.cpu_time = -0.25;
	r.wall_limit = 0;
	r.cpu_limit = RG_LIMIT_SOFT;
	expect_meta(&r, RG_TIME_CPU, false,
		    "memory-bytes: 2732032\n"
		    "exitcode: 0\n"
		    "wall-time: 0.013\n"
		    "user-time: 0.000\n"
		    "sys-time: 0.004\n"
		    "cpu-time: -1.000\n"
		    "time-used: cpu-time\n"
		    "time-result: soft-timelimit\n"
		    "stdin-bytes: 0\n"
		    "stdout-bytes: 14\n"
		    "stderr-bytes: 0\n");
}

static void test_big_numbers(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .stream_limit_given = false };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	r.memory_bytes = UINT64_MAX;
	r.stream_bytes[RG_STDERR] = 18446744073709551615ULL;
	assert_int_equal(rg_meta_write_result(f, &r, &mo), 0);
	fclose(f);
	assert_non_null(strstr(text, "memory-bytes: 18446744073709551615\n"));
	assert_non_null(strstr(text, "stderr-bytes: 18446744073709551615\n"));
	free(text);
}

static void test_memory_method_last(void **state)
{
	static const char *const methods[] = {
		"memsw.max_usage_in_bytes",
		"max_usage_in_bytes",
		"memory.peak",
		"memory.peak(fd-reset)",
		"memory.current(sampled)",
		"rusage.maxrss",
	};
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .stream_limit_given = true,
				      .extra_keys = true };
	char want[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		struct rg_result r = normal_result();

		snprintf(r.memory_method, sizeof(r.memory_method), "%s",
			 methods[i]);
		snprintf(want, sizeof(want),
			 "memory-bytes: 2732032\n"
			 "exitcode: 0\n"
			 "wall-time: 0.013\n"
			 "user-time: 0.000\n"
			 "sys-time: 0.004\n"
			 "cpu-time: 0.005\n"
			 "time-used: cpu-time\n"
			 "time-result: \n"
			 "output-truncated: \n"
			 "stdin-bytes: 0\n"
			 "stdout-bytes: 14\n"
			 "stderr-bytes: 0\n"
			 "memory-method: %s\n"
			 "major-faults: 3\n",
			 methods[i]);
		expect_meta_opts(&r, &mo, want);
	}
}

/* DOMjudge's keys keep their order and values; the extra key is last. */
static void test_memory_method_after_optional_keys(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_WALL,
				      .stream_limit_given = true,
				      .extra_keys = true };

	(void)state;
	r.exit_code = 143;
	r.received_signal = SIGALRM;
	r.wall_limit = RG_LIMIT_HARD;
	r.stream_truncated[RG_STDERR] = true;
	strcpy(r.memory_method, "memsw.max_usage_in_bytes");
	expect_meta_opts(&r, &mo,
			 "memory-bytes: 2732032\n"
			 "exitcode: 143\n"
			 "signal: 14\n"
			 "wall-time: 0.013\n"
			 "user-time: 0.000\n"
			 "sys-time: 0.004\n"
			 "cpu-time: 0.005\n"
			 "time-used: wall-time\n"
			 "time-result: hard-timelimit\n"
			 "output-truncated: stderr\n"
			 "stdin-bytes: 0\n"
			 "stdout-bytes: 14\n"
			 "stderr-bytes: 0\n"
			 "memory-method: memsw.max_usage_in_bytes\n"
			 "major-faults: 3\n");
}

static void test_memory_method_empty(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .extra_keys = true };

	(void)state;
	r.memory_method[0] = '\0';
	expect_meta_opts(&r, &mo,
			 "memory-bytes: 2732032\n"
			 "exitcode: 0\n"
			 "wall-time: 0.013\n"
			 "user-time: 0.000\n"
			 "sys-time: 0.004\n"
			 "cpu-time: 0.005\n"
			 "time-used: cpu-time\n"
			 "time-result: \n"
			 "stdin-bytes: 0\n"
			 "stdout-bytes: 14\n"
			 "stderr-bytes: 0\n");
}

/* One line whatever the string holds, and never past the array. */
static void test_memory_method_one_line(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .extra_keys = true };
	char want[1024];

	(void)state;
	strcpy(r.memory_method, "x\nexitcode: 0\r");
	expect_meta_opts(&r, &mo,
			 "memory-bytes: 2732032\n"
			 "exitcode: 0\n"
			 "wall-time: 0.013\n"
			 "user-time: 0.000\n"
			 "sys-time: 0.004\n"
			 "cpu-time: 0.005\n"
			 "time-used: cpu-time\n"
			 "time-result: \n"
			 "stdin-bytes: 0\n"
			 "stdout-bytes: 14\n"
			 "stderr-bytes: 0\n"
			 "memory-method: x exitcode: 0 \n"
			 "major-faults: 3\n");

	/* not NUL-terminated: exactly sizeof(memory_method) bytes */
	memset(r.memory_method, 'a', sizeof(r.memory_method));
	snprintf(want, sizeof(want),
		 "memory-bytes: 2732032\n"
		 "exitcode: 0\n"
		 "wall-time: 0.013\n"
		 "user-time: 0.000\n"
		 "sys-time: 0.004\n"
		 "cpu-time: 0.005\n"
		 "time-used: cpu-time\n"
		 "time-result: \n"
		 "stdin-bytes: 0\n"
		 "stdout-bytes: 14\n"
		 "stderr-bytes: 0\n"
		 "memory-method: %.*s\n"
		 "major-faults: 3\n",
		 (int)sizeof(r.memory_method), r.memory_method);
	expect_meta_opts(&r, &mo, want);
}

static void test_internal_error(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .stream_limit_given = false };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	r.exit_code = 255;
	/* DOMjudge's layout after a child-side failure */
	assert_int_equal(rg_meta_write_internal_error(f,
						      "runguard: invalid root: must be within `/x'"),
			 0);
	assert_int_equal(rg_meta_write_result(f, &r, &mo), 0);
	fclose(f);
	assert_string_equal(text,
			    "internal-error: runguard: invalid root: must be within `/x'\n"
			    "memory-bytes: 2732032\n"
			    "exitcode: 255\n"
			    "wall-time: 0.013\n"
			    "user-time: 0.000\n"
			    "sys-time: 0.004\n"
			    "cpu-time: 0.005\n"
			    "time-used: cpu-time\n"
			    "time-result: \n"
			    "stdin-bytes: 0\n"
			    "stdout-bytes: 14\n"
			    "stderr-bytes: 0\n");
	free(text);
}

/* The CLI's layout after a child-side failure: memory-method still last. */
static void test_internal_error_extra_keys(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .extra_keys = true };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	r.exit_code = 255;
	r.wall_time = 0;
	strcpy(r.memory_method, "rusage.maxrss");
	assert_int_equal(rg_meta_write_internal_error(f,
						      "runguard: cannot chdir to `/x'"),
			 0);
	assert_int_equal(rg_meta_write_result(f, &r, &mo), 0);
	fclose(f);
	assert_string_equal(text,
			    "internal-error: runguard: cannot chdir to `/x'\n"
			    "memory-bytes: 2732032\n"
			    "exitcode: 255\n"
			    "wall-time: 0.000\n"
			    "user-time: 0.000\n"
			    "sys-time: 0.004\n"
			    "cpu-time: 0.005\n"
			    "time-used: cpu-time\n"
			    "time-result: \n"
			    "stdin-bytes: 0\n"
			    "stdout-bytes: 14\n"
			    "stderr-bytes: 0\n"
			    "memory-method: rusage.maxrss\n"
			    "major-faults: 3\n");
	free(text);
}

static void test_internal_error_one_line(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_int_equal(rg_meta_write_internal_error(f, "a\nexitcode: 0\r"),
			 0);
	fclose(f);
	assert_string_equal(text, "internal-error: a exitcode: 0 \n");
	free(text);
}

/* DOMjudge's keys of normal_result() with -C, no stream limit. */
#define NORMAL_KEYS               \
	"memory-bytes: 2732032\n" \
	"exitcode: 0\n"           \
	"wall-time: 0.013\n"      \
	"user-time: 0.000\n"      \
	"sys-time: 0.004\n"       \
	"cpu-time: 0.005\n"       \
	"time-used: cpu-time\n"   \
	"time-result: \n"         \
	"stdin-bytes: 0\n"        \
	"stdout-bytes: 14\n"      \
	"stderr-bytes: 0\n"

/*
 * Where the wall time went: after major-faults (pool-slot stays last),
 * the known waits only (an unknown one is an absent key, never a zero),
 * the host's pressure, the cause and the method.
 */
static void test_waits(void **state)
{
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .extra_keys = true };
	struct rg_result r = normal_result();
	static const char head[] = NORMAL_KEYS "memory-method: memory.peak\n"
					       "major-faults: 3\n";
	char want[1024];

	(void)state;
	r.pooled = true;
	r.pool_slot = 2;
	r.waits_known = (1u << RG_WAIT_CPU) | (1u << RG_WAIT_MEMORY);
	r.wait_time[RG_WAIT_CPU] = 0.5024;
	r.wait_time[RG_WAIT_IO] = 9.0; /* not known: not written */
	r.wait_time[RG_WAIT_MEMORY] = 0.0;
	r.host_known = (1u << RG_WAIT_CPU) | (1u << RG_WAIT_IO);
	r.host_pressure[RG_WAIT_CPU] = 98.64;
	r.host_pressure[RG_WAIT_IO] = 0.04;
	strcpy(r.wall_time_cause, "host-cpu");
	strcpy(r.wait_method, "cgroup-psi");
	snprintf(want, sizeof(want),
		 "%s"
		 "wait-cpu-time: 0.502\n"
		 "wait-memory-time: 0.000\n"
		 "host-pressure: cpu=98.6%% io=0.0%%\n"
		 "wall-time-cause: host-cpu\n"
		 "wait-method: cgroup-psi\n"
		 "pool-slot: 2\n",
		 head);
	expect_meta_opts(&r, &mo, want);

	/* nothing known: none of the keys */
	r.waits_known = r.host_known = 0;
	r.wall_time_cause[0] = r.wait_method[0] = '\0';
	snprintf(want, sizeof(want), "%spool-slot: 2\n", head);
	expect_meta_opts(&r, &mo, want);

	/* DOMjudge's keys alone without extra_keys */
	r.waits_known = 1u << RG_WAIT_CPU;
	strcpy(r.wall_time_cause, "host-cpu");
	mo.extra_keys = false;
	expect_meta_opts(&r, &mo, NORMAL_KEYS);
}

static void test_write_errors(void **state)
{
	struct rg_result r = normal_result();
	struct rg_meta_options mo = { .struct_size = sizeof(mo),
				      .time_used = RG_TIME_CPU,
				      .stream_limit_given = true,
				      .extra_keys = true };
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	errno = 0;
	assert_int_equal(rg_meta_write_result(f, &r, &mo), -1);
	assert_int_equal(errno, ENOSPC);
	clearerr(f);
	errno = 0;
	assert_int_equal(rg_meta_write_internal_error(f, "x"), -1);
	assert_int_equal(errno, ENOSPC);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normal_run),
		cmocka_unit_test(test_without_stream_limit),
		cmocka_unit_test(test_truncated_streams),
		cmocka_unit_test(test_hard_wall_timeout),
		cmocka_unit_test(test_command_signal_is_not_signal_key),
		cmocka_unit_test(test_sigterm_received),
		cmocka_unit_test(test_no_cpu_time),
		cmocka_unit_test(test_big_numbers),
		cmocka_unit_test(test_memory_method_last),
		cmocka_unit_test(test_memory_method_after_optional_keys),
		cmocka_unit_test(test_memory_method_empty),
		cmocka_unit_test(test_memory_method_one_line),
		cmocka_unit_test(test_internal_error),
		cmocka_unit_test(test_internal_error_extra_keys),
		cmocka_unit_test(test_internal_error_one_line),
		cmocka_unit_test(test_waits),
		cmocka_unit_test(test_write_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
