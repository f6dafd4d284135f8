/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The small helpers of util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/util.h"

/* RLIMIT_CPU's whole seconds, as ceil() gave them. */
static void test_whole_seconds_up(void **state)
{
	(void)state;
	assert_int_equal(rg_whole_seconds_up(0.001), 1);
	assert_int_equal(rg_whole_seconds_up(1.0), 1);
	assert_int_equal(rg_whole_seconds_up(1.5), 2);
	assert_int_equal(rg_whole_seconds_up(2.0000001), 3);
	assert_int_equal(rg_whole_seconds_up(59.999), 60);
	assert_int_equal(rg_whole_seconds_up(1e9), 1000000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_seconds_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
