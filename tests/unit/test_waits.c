/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a run's wall time went: the PSI parser, the waits put into a
 * result, and the wall-time-cause rules of docs/meta-file.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <runguard/runguard.h>

#include "cgroup/psi.h"
#include "run/waits.h"

static void test_parse_some(void **state)
{
	(void)state;
	assert_int_equal(rg_psi_parse_some("some avg10=0.00 avg60=0.00 "
					   "avg300=0.00 total=0\n"
					   "full avg10=0.00 avg60=0.00 "
					   "avg300=0.00 total=0\n"),
			 0);
	assert_int_equal(rg_psi_parse_some("some avg10=88.23 avg60=34.12 "
					   "avg300=10.73 total=4606735754\n"
					   "full avg10=1.00 avg60=0.00 "
					   "avg300=0.00 total=7\n"),
			 4606735754LL);
	/* the host's cpu file before 5.13 has no "full" line */
	assert_int_equal(rg_psi_parse_some("some avg10=0.00 avg60=0.00 "
					   "avg300=0.00 total=42\n"),
			 42);
	assert_int_equal(rg_psi_parse_some("some avg10=0.00 total=9"), 9);
}

static void test_parse_malformed(void **state)
{
	(void)state;
	assert_int_equal(rg_psi_parse_some(""), -1);
	/* "full" first: not the line we count */
	assert_int_equal(rg_psi_parse_some("full avg10=0.00 total=5\n"), -1);
	/* total= only on the next line */
	assert_int_equal(rg_psi_parse_some("some avg10=0.00\nfull total=5\n"),
			 -1);
	assert_int_equal(rg_psi_parse_some("some avg10=0.00 total=\n"), -1);
	assert_int_equal(rg_psi_parse_some("some avg10=0.00 total=-5\n"), -1);
	assert_int_equal(rg_psi_parse_some("some avg10=0.00 total=5x\n"), -1);
	assert_int_equal(rg_psi_parse_some("some total=99999999999999999999\n"),
			 -1);
}

static void test_waits_set(void **state)
{
	struct rg_result res;
	int64_t ns[RG_PSI_NR] = { 1500000000, -1, 0 };

	(void)state;
	memset(&res, 0, sizeof(res));
	rg_waits_set(&res, ns, "cgroup-psi");
	assert_int_equal(res.waits_known,
			 (1u << RG_WAIT_CPU) | (1u << RG_WAIT_MEMORY));
	assert_true(res.wait_time[RG_WAIT_CPU] == 1.5);
	assert_true(res.wait_time[RG_WAIT_MEMORY] == 0.0);
	assert_string_equal(res.wait_method, "cgroup-psi");

	/* no wait is longer than the run */
	memset(&res, 0, sizeof(res));
	res.wall_time = 1.0;
	rg_waits_set(&res, ns, "cgroup-psi");
	assert_true(res.wait_time[RG_WAIT_CPU] == 1.0);

	/* nothing known: no method, no cause */
	memset(&res, 0, sizeof(res));
	ns[0] = ns[2] = -1;
	rg_waits_set(&res, ns, "cgroup-psi");
	assert_int_equal(res.waits_known, 0);
	assert_string_equal(res.wait_method, "");
	res.wall_time = 5.0;
	rg_waits_blame(&res, false);
	assert_string_equal(res.wall_time_cause, "");
}

/* A result of wall and cpu seconds with the waits cpu, io and memory. */
static const char *cause(double wall, double cpu, double wcpu, double wio,
			 double wmem, bool memory_limited)
{
	static struct rg_result res;

	memset(&res, 0, sizeof(res));
	res.wall_time = wall;
	res.cpu_time = cpu;
	res.waits_known = (1u << RG_WAIT_CPU) | (1u << RG_WAIT_IO) |
			  (1u << RG_WAIT_MEMORY);
	res.wait_time[RG_WAIT_CPU] = wcpu;
	res.wait_time[RG_WAIT_IO] = wio;
	res.wait_time[RG_WAIT_MEMORY] = wmem;
	rg_waits_blame(&res, memory_limited);
	return res.wall_time_cause;
}

static void test_blame(void **state)
{
	(void)state;
	/* a gap of at most 20 ms or 10 % of the wall time: nobody's */
	assert_string_equal(cause(0.003, 0.001, 0, 0, 0, false), "none");
	assert_string_equal(cause(1.0, 0.95, 0.05, 0, 0, false), "none");
	assert_string_equal(cause(0.5, 0.48, 0, 0, 0, false), "none");
	/* waiting for a CPU explains the gap */
	assert_string_equal(cause(1.0, 0.5, 0.49, 0, 0, false), "host-cpu");
	/* for the disk */
	assert_string_equal(cause(1.0, 0.2, 0.01, 0.7, 0, false), "host-io");
	/* memory: the run's own limit, or the host's shortage */
	assert_string_equal(cause(2.0, 0.8, 0, 0.1, 1.1, true),
			    "own-memory-limit");
	assert_string_equal(cause(2.0, 0.8, 0, 0.1, 1.1, false), "host-memory");
	/* reclaim is CPU time too: blamed without a gap */
	assert_string_equal(cause(1.2, 1.15, 0, 0, 0.9, true),
			    "own-memory-limit");
	/* a memory stall too small to matter */
	assert_string_equal(cause(1.0, 0.5, 0.45, 0, 0.05, true), "host-cpu");
	assert_string_equal(cause(1.0, 0.98, 0, 0, 0.02, true), "none");
	/* together they explain it: the larger one is named */
	assert_string_equal(cause(1.0, 0.1, 0.3, 0.2, 0.0, false), "host-cpu");
	/* waits that cover less than half the gap: the program's own time */
	assert_string_equal(cause(1.0, 0.1, 0.2, 0.1, 0.1, false), "program");
	assert_string_equal(cause(5.0, 0.0, 0, 0, 0, false), "program");
	/* exactly half is enough */
	assert_string_equal(cause(1.0, 0.0, 0.5, 0, 0, false), "host-cpu");
}

static void test_blame_without_cgroup_cpu_time(void **state)
{
	struct rg_result res;

	(void)state;
	memset(&res, 0, sizeof(res));
	res.wall_time = 1.0;
	res.cpu_time = -1.0; /* unknown: user + sys instead */
	res.user_time = 0.6;
	res.sys_time = 0.35;
	res.waits_known = 1u << RG_WAIT_CPU;
	rg_waits_blame(&res, false);
	assert_string_equal(res.wall_time_cause, "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_some),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_waits_set),
		cmocka_unit_test(test_blame),
		cmocka_unit_test(test_blame_without_cgroup_cpu_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
