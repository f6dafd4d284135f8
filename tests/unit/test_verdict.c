/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A run's verdict from its measurements (lib/run/verdict.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "run/verdict.h"

#define MiB (1024ull * 1024)

/* -t 1:1.5 -C 1:1.5 -m 64 MiB, as DOMjudge passes soft:hard */
static const struct rg_verdict_limits limits = {
	.has_cpu_limit = true,
	.cpu_soft = 1.0,
	.cpu_hard = 1.5,
	.has_wall_limit = true,
	.wall_soft = 1.0,
	.memory_limit = 64 * MiB,
};

static void result_used(struct rg_result *res, double user, double sys)
{
	memset(res, 0, sizeof(*res));
	res->user_time = user;
	res->sys_time = sys;
}

static void test_exit_code_of_a_normal_exit(void **state)
{
	struct rg_result res;

	(void)state;
	result_used(&res, 0.1, 0.0);
	rg_verdict_exit(&limits, W_EXITCODE(3, 0), false, &res);
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(res.term_signal, 0);
	assert_int_equal(res.cpu_limit, 0);
	assert_int_equal(res.status, W_EXITCODE(3, 0));
}

static void test_a_signal_is_128_plus_its_number(void **state)
{
	struct rg_result res;

	(void)state;
	result_used(&res, 0.1, 0.0);
	rg_verdict_exit(&limits, SIGSEGV, false, &res);
	assert_int_equal(res.term_signal, SIGSEGV);
	assert_int_equal(res.exit_code, 128 + SIGSEGV);
	assert_int_equal(res.cpu_limit, 0);
}

static void test_sigxcpu_is_the_cpu_limit_even_without_one(void **state)
{
	struct rg_verdict_limits none = { .memory_limit = RG_UNLIMITED };
	struct rg_result res;

	(void)state;
	result_used(&res, 0.2, 0.0);
	rg_verdict_exit(&none, SIGXCPU, false, &res);
	assert_int_equal(res.cpu_limit, RG_LIMIT_HARD);
	assert_int_equal(res.exit_code, 128 + SIGXCPU);
}

/* hard 1.5 s: RLIMIT_CPU soft 2 s, hard 3 s; SIGKILL at the hard one */
static void test_sigkill_at_the_hard_rlimit_is_the_cpu_limit(void **state)
{
	(void)state;
	assert_true(rg_verdict_cpu_rlimit_kill(&limits, SIGKILL, 2.96, false,
					       false));
	assert_true(rg_verdict_cpu_rlimit_kill(&limits, SIGKILL, 3.4, false,
					       false));
	assert_false(rg_verdict_cpu_rlimit_kill(&limits, SIGKILL, 2.9, false,
						false));
	/* runguard's own kill (wall limit, signal) or the OOM killer's */
	assert_false(rg_verdict_cpu_rlimit_kill(&limits, SIGKILL, 3.0, true,
						false));
	assert_false(rg_verdict_cpu_rlimit_kill(&limits, SIGKILL, 3.0, false,
						true));
	assert_false(rg_verdict_cpu_rlimit_kill(&limits, SIGTERM, 3.0, false,
						false));
}

static void test_sigkill_without_a_cpu_limit_is_just_a_signal(void **state)
{
	struct rg_verdict_limits none = { .memory_limit = RG_UNLIMITED };
	struct rg_result res;

	(void)state;
	result_used(&res, 2.5, 0.5);
	rg_verdict_exit(&none, SIGKILL, false, &res);
	assert_int_equal(res.cpu_limit, 0);
	assert_int_equal(res.exit_code, 128 + SIGKILL);
}

static void test_user_and_sys_time_count_for_the_rlimit(void **state)
{
	struct rg_result res;

	(void)state;
	result_used(&res, 2.0, 0.98);
	rg_verdict_exit(&limits, SIGKILL, false, &res);
	assert_int_equal(res.cpu_limit, RG_LIMIT_HARD);
}

static void test_soft_limits_are_strictly_above(void **state)
{
	struct rg_result res;

	(void)state;
	memset(&res, 0, sizeof(res));
	res.wall_time = 1.0;
	res.cpu_time = 1.0;
	rg_verdict_time_limits(&limits, false, &res);
	assert_int_equal(res.wall_limit, 0);
	assert_int_equal(res.cpu_limit, 0);
	res.wall_time = 1.001;
	res.cpu_time = 1.2;
	rg_verdict_time_limits(&limits, false, &res);
	assert_int_equal(res.wall_limit, RG_LIMIT_SOFT);
	assert_int_equal(res.cpu_limit, RG_LIMIT_SOFT);
}

static void test_hard_wall_limit_comes_from_the_timer(void **state)
{
	struct rg_verdict_limits no_wall = limits;
	struct rg_result res;

	(void)state;
	no_wall.has_wall_limit = false;
	memset(&res, 0, sizeof(res));
	res.wall_time = 5.0;
	rg_verdict_time_limits(&no_wall, true, &res);
	assert_int_equal(res.wall_limit, RG_LIMIT_HARD);
	rg_verdict_time_limits(&limits, true, &res);
	assert_int_equal(res.wall_limit, RG_LIMIT_HARD | RG_LIMIT_SOFT);
}

static void test_memory_limit_reached_within_a_tenth(void **state)
{
	struct rg_verdict_limits unlimited = limits;
	uint64_t lim = limits.memory_limit;

	(void)state;
	unlimited.memory_limit = RG_UNLIMITED;
	assert_true(rg_verdict_memory_limit_reached(&limits, false,
						    lim - lim / 10));
	assert_false(rg_verdict_memory_limit_reached(&limits, false,
						     lim - lim / 10 - 1));
	assert_true(rg_verdict_memory_limit_reached(&limits, true, 0));
	assert_false(
		rg_verdict_memory_limit_reached(&unlimited, true, UINT64_MAX));
}

static void test_maxrss_above_the_set_up_is_the_commands(void **state)
{
	(void)state;
	assert_true(rg_verdict_maxrss_is_the_commands(300, -1));
	assert_false(rg_verdict_maxrss_is_the_commands(700, 700));
	assert_false(rg_verdict_maxrss_is_the_commands(764, 700));
	assert_true(rg_verdict_maxrss_is_the_commands(765, 700));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_code_of_a_normal_exit),
		cmocka_unit_test(test_a_signal_is_128_plus_its_number),
		cmocka_unit_test(test_sigxcpu_is_the_cpu_limit_even_without_one),
		cmocka_unit_test(
			test_sigkill_at_the_hard_rlimit_is_the_cpu_limit),
		cmocka_unit_test(
			test_sigkill_without_a_cpu_limit_is_just_a_signal),
		cmocka_unit_test(test_user_and_sys_time_count_for_the_rlimit),
		cmocka_unit_test(test_soft_limits_are_strictly_above),
		cmocka_unit_test(test_hard_wall_limit_comes_from_the_timer),
		cmocka_unit_test(test_memory_limit_reached_within_a_tenth),
		cmocka_unit_test(test_maxrss_above_the_set_up_is_the_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
