/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* -P lists: parsing, and the online check against a given online list. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/cpuset.h"

static void expect_list(const char *text, const struct rg_cpu_range *want,
			size_t n)
{
	struct rg_cpu_list list;

	print_message("parsing `%s'\n", text);
	assert_int_equal(rg_cpu_list_parse(text, &list), 0);
	assert_int_equal(list.len, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(list.ranges[i].first, want[i].first);
		assert_int_equal(list.ranges[i].last, want[i].last);
	}
	rg_cpu_list_free(&list);
}

static void test_parse(void **state)
{
	(void)state;
	expect_list("2", (struct rg_cpu_range[]){ { 2, 2 } }, 1);
	expect_list("0,2-3", (struct rg_cpu_range[]){ { 0, 0 }, { 2, 3 } }, 2);
	expect_list("0-0", (struct rg_cpu_range[]){ { 0, 0 } }, 1);
	expect_list("007", (struct rg_cpu_range[]){ { 7, 7 } }, 1);
	expect_list("5,1,5",
		    (struct rg_cpu_range[]){ { 5, 5 }, { 1, 1 }, { 5, 5 } }, 3);
	expect_list("0-4294967295",
		    (struct rg_cpu_range[]){ { 0, 4294967295U } }, 1);
}

static void test_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		",",
		"1,",
		",1",
		"1,,2",
		"a",
		"1a",
		"a1",
		"-1",
		"1-",
		"-",
		"3-2",
		"1-2-3",
		" 1",
		"1 ",
		"+1",
		"1.0",
		"0x1",
		"4294967296",
		"99999999999999999999",
		"1-4294967296",
		"1;2",
		"1\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rg_cpu_list list = { (void *)1, 99 };

		print_message("rejecting `%s'\n", bad[i]);
		errno = 0;
		assert_int_equal(rg_cpu_list_parse(bad[i], &list), -1);
		assert_int_equal(errno, EINVAL);
		assert_null(list.ranges);
		assert_int_equal(list.len, 0);
	}
}

static void test_contains_and_missing(void **state)
{
	struct rg_cpu_list online, want;
	unsigned int cpu = 0;

	(void)state;
	assert_int_equal(rg_cpu_list_parse("0-3,8,10-11", &online), 0);
	assert_true(rg_cpu_list_contains(&online, 0));
	assert_true(rg_cpu_list_contains(&online, 3));
	assert_false(rg_cpu_list_contains(&online, 4));
	assert_true(rg_cpu_list_contains(&online, 8));
	assert_false(rg_cpu_list_contains(&online, 9));
	assert_true(rg_cpu_list_contains(&online, 11));
	assert_false(rg_cpu_list_contains(&online, 4294967295U));

	assert_int_equal(rg_cpu_list_parse("1-3,8,10", &want), 0);
	assert_false(rg_cpu_list_first_missing(&want, &online, &cpu));
	rg_cpu_list_free(&want);

	/* the lowest missing CPU, whatever the order of the request */
	assert_int_equal(rg_cpu_list_parse("12,2-9", &want), 0);
	assert_true(rg_cpu_list_first_missing(&want, &online, &cpu));
	assert_int_equal(cpu, 4);
	rg_cpu_list_free(&want);

	/* a huge range costs no more than the ranges it crosses */
	assert_int_equal(rg_cpu_list_parse("10-4294967295", &want), 0);
	assert_true(rg_cpu_list_first_missing(&want, &online, &cpu));
	assert_int_equal(cpu, 12);
	rg_cpu_list_free(&want);
	rg_cpu_list_free(&online);

	/* overlapping, unsorted online ranges */
	assert_int_equal(rg_cpu_list_parse("4-6,0-2,2-4", &online), 0);
	assert_int_equal(rg_cpu_list_parse("0-6", &want), 0);
	assert_false(rg_cpu_list_first_missing(&want, &online, &cpu));
	rg_cpu_list_free(&want);
	rg_cpu_list_free(&online);

	/* the top CPU number does not wrap around */
	assert_int_equal(rg_cpu_list_parse("0-4294967295", &online), 0);
	assert_int_equal(rg_cpu_list_parse("4294967295,0-4294967295", &want),
			 0);
	assert_false(rg_cpu_list_first_missing(&want, &online, &cpu));
	rg_cpu_list_free(&want);
	rg_cpu_list_free(&online);
}

static void expect_ok(const char *list, const char *online)
{
	struct rg_error err = { 0 };

	print_message("`%s' within `%s'\n", list, online);
	assert_int_equal(rg_cpuset_validate(list, online, &err), 0);
}

static void expect_error(const char *list, const char *online,
			 const char *message)
{
	struct rg_error err = { 0 };

	print_message("`%s' against `%s'\n", list, online);
	assert_int_equal(rg_cpuset_validate(list, online, &err), -1);
	assert_string_equal(err.message, message);
	assert_int_equal(err.errnum, 0);
}

static void test_validate(void **state)
{
	(void)state;
	expect_ok("2", "0-3");
	expect_ok("0,2-3", "0-3");
	expect_ok("3,0", "0-3");
	expect_ok("1", "0-1,3");
	expect_error("4", "0-3",
		     "requested pinning on CPU 4 which is not online");
	expect_error("0-7", "0-3",
		     "requested pinning on CPU 4 which is not online");
	expect_error("6,5", "0-3",
		     "requested pinning on CPU 5 which is not online");
	expect_error("2", "0-1,3",
		     "requested pinning on CPU 2 which is not online");
	expect_error("1-4000000000", "0-3",
		     "requested pinning on CPU 4 which is not online");
}

static void test_validate_syntax(void **state)
{
	(void)state;
	/* DOMjudge aborts (uncaught exception) on these; we report them */
	expect_error("abc", "0-3", "failed to parse cpuset `abc'");
	expect_error("1,x", "0-3", "failed to parse cpuset `1,x'");
	expect_error("1-x", "0-3", "failed to parse cpuset `1-x'");
	expect_error("2junk", "0-3", "failed to parse cpuset `2junk'");
	expect_error("3-1", "0-3", "failed to parse cpuset `3-1'");
	expect_error("", "0-3", "failed to parse cpuset `'");
	/* a syntax error wins over an offline CPU */
	expect_error("9,x", "0-3", "failed to parse cpuset `9,x'");
	expect_error("1", "garbage",
		     "failed to parse online CPU list `garbage'");
}

static void test_validate_real_online(void **state)
{
	struct rg_error err = { 0 };

	(void)state;
	if (access(RG_CPU_ONLINE_PATH, R_OK) != 0)
		skip();
	/* CPU 0 is online on any machine this runs on */
	assert_int_equal(rg_cpuset_validate("0", NULL, &err), 0);
	assert_int_equal(rg_cpuset_validate("4294967295", NULL, &err), -1);
	assert_string_equal(err.message,
			    "requested pinning on CPU 4294967295 which is not online");
}

static void test_to_mask(void **state)
{
	struct rg_error err = { 0 };
	cpu_set_t mask;

	(void)state;
	assert_int_equal(rg_cpuset_to_mask("0,2-4,3", &mask, &err), 0);
	assert_int_equal(CPU_COUNT(&mask), 4);
	assert_true(CPU_ISSET(0, &mask) && CPU_ISSET(2, &mask) &&
		    CPU_ISSET(3, &mask) && CPU_ISSET(4, &mask));
	assert_false(CPU_ISSET(1, &mask));
	assert_int_equal(rg_cpuset_to_mask("1-", &mask, &err), -1);
	assert_int_equal(rg_cpuset_to_mask("0,1024", &mask, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.message, "below 1024"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_contains_and_missing),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_validate_syntax),
		cmocka_unit_test(test_validate_real_online),
		cmocka_unit_test(test_to_mask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
