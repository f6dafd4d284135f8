/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Time pairs, kB sizes and plain integers as DOMjudge's runguard reads them. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "parse.h"

static void expect_pair(const char *arg, double soft, double hard)
{
	double s = -1, h = -1;

	assert_int_equal(rg_parse_time_pair(arg, &s, &h), RG_PARSE_OK);
	assert_true(s == soft);
	assert_true(h == hard);
}

static void expect_bad_pair(const char *arg, int status)
{
	double s, h;

	assert_int_equal(rg_parse_time_pair(arg, &s, &h), status);
}

static void test_time_single(void **state)
{
	(void)state;
	expect_pair("1", 1, 1);
	expect_pair("2.5", 2.5, 2.5);
	expect_pair("0.001", 0.001, 0.001);
}

static void test_time_pair(void **state)
{
	(void)state;
	expect_pair("1:2", 1, 2);
	expect_pair("1.5:1.5", 1.5, 1.5);
	expect_pair("2.4000000000000004:3", 2.4000000000000004, 3);
}

static void test_time_strtod_forms(void **state)
{
	(void)state;
	expect_pair("1e1", 10, 10);
	expect_pair("5E-1:1e0", 0.5, 1);
	expect_pair("0x1p1", 2, 2);
	expect_pair("0x10:0x1.8p4", 16, 24);
	expect_pair("  3", 3, 3);
	expect_pair("\t1: 2", 1, 2);
	expect_pair("+4:+5", 4, 5);
}

static void test_time_rejects(void **state)
{
	static const char *const bad[] = {
		"",	 "0",	     "-1",	"0:1",	"-1:1", "1:0",
		"1:-2",	 "inf",	     "1:inf",	"-inf", "nan",	"1:nan",
		"NAN",	 "infinity", "1x",	"1 ",	"1:2x", "1:2 ",
		"x",	 ":",	     ":1",	"1:",	"1::2", "1:2:3",
		"1e400", "1e-400",   "1:1e999", "0x",	"1e",	"1,5",
		"--1",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("rejecting `%s'\n", bad[i]);
		expect_bad_pair(bad[i], RG_PARSE_INVALID);
	}
}

static void test_time_hard_below_soft(void **state)
{
	(void)state;
	expect_bad_pair("2:1", RG_PARSE_HARD_BELOW_SOFT);
	expect_bad_pair("1.0001:1", RG_PARSE_HARD_BELOW_SOFT);
}

static void test_long(void **state)
{
	long v = 0;

	(void)state;
	assert_int_equal(rg_parse_long("5", 1, 10, &v), RG_PARSE_OK);
	assert_int_equal(v, 5);
	assert_int_equal(rg_parse_long(" +7", 1, 10, &v), RG_PARSE_OK);
	assert_int_equal(v, 7);
	assert_int_equal(rg_parse_long("0", 0, 10, &v), RG_PARSE_OK);
	assert_int_equal(v, 0);
	assert_int_equal(rg_parse_long("9223372036854775807", 1, LONG_MAX, &v),
			 RG_PARSE_OK);
	assert_true(v == LONG_MAX);
	assert_int_equal(rg_parse_long("0", 1, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("11", 1, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("-1", 0, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("", 0, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long(" ", 0, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("5k", 0, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("5 ", 0, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("1.0", 0, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("0x5", 0, 10, &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_long("9223372036854775808", 0, LONG_MAX, &v),
			 RG_PARSE_INVALID);
}

static void test_kb_to_bytes(void **state)
{
	const long max_ok = (long)(UINT64_MAX / 1024);

	(void)state;
	assert_true(rg_kb_to_bytes(0, 7) == 0);
	assert_true(rg_kb_to_bytes(1, 7) == 1024);
	assert_true(rg_kb_to_bytes(2097152, 7) == 2147483648ULL);
	/* beyond LONG_MAX bytes is still fine: DOMjudge multiplies unsigned */
	assert_true(rg_kb_to_bytes(9007199254740992L, 7) == (1ULL << 63));
	assert_true(rg_kb_to_bytes(max_ok, 7) == (uint64_t)max_ok * 1024);
	assert_true(rg_kb_to_bytes(max_ok + 1, 7) == 7);
	assert_true(rg_kb_to_bytes(LONG_MAX, 7) == 7);
}

static void test_parse_kb(void **state)
{
	uint64_t b = 0;

	(void)state;
	assert_int_equal(rg_parse_kb("1", 1, UINT64_MAX, &b), RG_PARSE_OK);
	assert_true(b == 1024);
	assert_int_equal(rg_parse_kb("0", 0, LONG_MAX, &b), RG_PARSE_OK);
	assert_true(b == 0);
	assert_int_equal(rg_parse_kb("0", 1, UINT64_MAX, &b), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_kb("18014398509481984", 1, UINT64_MAX, &b),
			 RG_PARSE_OK);
	assert_true(b == UINT64_MAX);
	assert_int_equal(rg_parse_kb("18014398509481984", 0, LONG_MAX, &b),
			 RG_PARSE_OK);
	assert_true(b == LONG_MAX);
	assert_int_equal(rg_parse_kb("18014398509481983", 0, LONG_MAX, &b),
			 RG_PARSE_OK);
	assert_true(b == 18014398509481983ULL * 1024);
	assert_int_equal(rg_parse_kb("99999999999999999999", 0, 0, &b),
			 RG_PARSE_INVALID);
	assert_int_equal(rg_parse_kb("-1", 0, 0, &b), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_kb("1k", 0, 0, &b), RG_PARSE_INVALID);
}

static void test_on_off(void **state)
{
	bool v = false;

	(void)state;
	assert_int_equal(rg_parse_on_off("on", &v), RG_PARSE_OK);
	assert_true(v);
	assert_int_equal(rg_parse_on_off("off", &v), RG_PARSE_OK);
	assert_false(v);
	assert_int_equal(rg_parse_on_off("", &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_on_off("ON", &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_on_off("1", &v), RG_PARSE_INVALID);
	assert_int_equal(rg_parse_on_off("o", &v), RG_PARSE_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_single),
		cmocka_unit_test(test_time_pair),
		cmocka_unit_test(test_time_strtod_forms),
		cmocka_unit_test(test_time_rejects),
		cmocka_unit_test(test_time_hard_below_soft),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_kb_to_bytes),
		cmocka_unit_test(test_parse_kb),
		cmocka_unit_test(test_on_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
