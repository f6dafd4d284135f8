/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DOMjudge's time-result rule, over every combination of the two masks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <runguard/runguard.h>

#define S RG_LIMIT_SOFT
#define H RG_LIMIT_HARD

/* The spec's table, spelled out rather than recomputed. */
static const struct {
	unsigned wall, cpu;
	const char *if_wall, *if_cpu;
} table[] = {
	{ 0, 0, "", "" },
	{ 0, S, "", "soft-timelimit" },
	{ 0, H, "hard-timelimit", "hard-timelimit" },
	{ 0, S | H, "hard-timelimit", "hard-timelimit" },
	{ S, 0, "soft-timelimit", "" },
	{ S, S, "soft-timelimit", "soft-timelimit" },
	{ S, H, "hard-timelimit", "hard-timelimit" },
	{ S, S | H, "hard-timelimit", "hard-timelimit" },
	{ H, 0, "hard-timelimit", "hard-timelimit" },
	{ H, S, "hard-timelimit", "hard-timelimit" },
	{ H, H, "hard-timelimit", "hard-timelimit" },
	{ H, S | H, "hard-timelimit", "hard-timelimit" },
	{ S | H, 0, "hard-timelimit", "hard-timelimit" },
	{ S | H, S, "hard-timelimit", "hard-timelimit" },
	{ S | H, H, "hard-timelimit", "hard-timelimit" },
	{ S | H, S | H, "hard-timelimit", "hard-timelimit" },
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct rg_result r = RG_RESULT_INIT;

		r.wall_limit = table[i].wall;
		r.cpu_limit = table[i].cpu;
		print_message("wall %u cpu %u\n", r.wall_limit, r.cpu_limit);
		assert_string_equal(rg_time_result(&r, RG_TIME_WALL),
				    table[i].if_wall);
		assert_string_equal(rg_time_result(&r, RG_TIME_CPU),
				    table[i].if_cpu);
	}
}

static void test_version(void **state)
{
	(void)state;
	assert_non_null(rg_version());
	assert_true(rg_version()[0] != '\0');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
