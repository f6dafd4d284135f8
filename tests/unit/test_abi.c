/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Growable public structs (docs/abi.md): a caller built against an older,
 * smaller struct or a newer, larger one gets exactly the bytes both sides
 * know, and one that forgot struct_size gets EINVAL, not a scribble.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <runguard/meta.h>

#include "base/abi.h"

#define CANARY 0xa5

/* What a caller compiled against a later, larger rg_result would pass. */
struct future_result {
	struct rg_result known;
	unsigned char newer_fields[64];
};

static void test_copy_out_stops_at_the_callers_size(void **state)
{
	struct rg_result own = RG_RESULT_INIT;
	size_t old_size = RG_SIZE_THROUGH(struct rg_result, exit_code);
	unsigned char caller[sizeof(struct rg_result) + 16];

	(void)state;
	own.exit_code = 7;
	own.wall_time = 1.5;
	memset(caller, CANARY, sizeof(caller));
	memcpy(caller, &old_size, sizeof(old_size));
	rg_abi_copy_out(caller, &own, sizeof(own));
	/* the caller's own size stays, the fields it knows arrive */
	assert_int_equal(rg_abi_struct_size(caller), old_size);
	assert_int_equal(((struct rg_result *)(void *)caller)->exit_code, 7);
	for (size_t i = old_size; i < sizeof(caller); i++)
		assert_int_equal(caller[i], CANARY);
}

static void test_copy_in_zeroes_what_the_caller_lacks(void **state)
{
	struct rg_meta_options own;
	unsigned char caller[sizeof(struct rg_meta_options)];
	size_t old_size = RG_SIZE_THROUGH(struct rg_meta_options, time_used);
	struct rg_meta_options *seen = (void *)caller;

	(void)state;
	memset(caller, CANARY, sizeof(caller));
	memcpy(caller, &old_size, sizeof(old_size));
	seen->time_used = RG_TIME_WALL;
	rg_abi_copy_in(&own, sizeof(own), caller);
	assert_int_equal(own.struct_size, sizeof(own));
	assert_int_equal(own.time_used, RG_TIME_WALL);
	/* the canary bytes past the caller's size must not be read */
	assert_false(own.stream_limit_given);
	assert_false(own.extra_keys);
}

static void test_newer_caller_keeps_its_newer_fields(void **state)
{
	struct future_result caller;
	struct rg_result own = RG_RESULT_INIT;

	(void)state;
	memset(&caller, CANARY, sizeof(caller));
	caller.known.struct_size = sizeof(caller);
	own.outcome = RG_OUTCOME_COMPLETED;
	own.memory_bytes = 4096;
	rg_abi_copy_out(&caller, &own, sizeof(own));
	assert_int_equal(caller.known.struct_size, sizeof(caller));
	assert_int_equal(caller.known.memory_bytes, 4096);
	for (size_t i = 0; i < sizeof(caller.newer_fields); i++)
		assert_int_equal(caller.newer_fields[i], CANARY);
}

static void test_check_refuses_an_unset_size(void **state)
{
	struct rg_result unset = { .struct_size = 0 };
	struct rg_result set = RG_RESULT_INIT;
	struct rg_error err = { 0 };
	size_t min = RG_SIZE_THROUGH(struct rg_result, stream_truncated);

	(void)state;
	assert_int_equal(rg_abi_check(&unset, min, "rg_result", &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.message, "struct rg_result"));
	assert_non_null(strstr(err.message, "sizeof(struct rg_result)"));
	assert_int_equal(rg_abi_check(&set, min, "rg_result", &err), 0);
}

/* The readers of a result: a malformed one is refused, not read. */
static void test_readers_refuse_a_malformed_result(void **state)
{
	struct rg_meta_options mo = RG_META_OPTIONS_INIT;
	struct rg_result no_size = { .struct_size = 0 };
	struct rg_result no_run = RG_RESULT_INIT;
	char buf[256] = "";
	FILE *meta = fmemopen(buf, sizeof(buf), "w");

	(void)state;
	assert_non_null(meta);
	no_size.wall_limit = RG_LIMIT_HARD;
	assert_string_equal(rg_time_result(&no_size, RG_TIME_WALL), "");
	no_run.outcome = RG_OUTCOME_ERROR;
	errno = 0;
	assert_int_equal(rg_meta_write_result(meta, &no_run, &mo), -1);
	assert_int_equal(errno, EINVAL);
	mo.struct_size = 0;
	no_run.outcome = RG_OUTCOME_COMPLETED;
	assert_int_equal(rg_meta_write_result(meta, &no_run, &mo), -1);
	fclose(meta);
	assert_string_equal(buf, "");
}

/* A newer caller's larger result is read as far as this version knows. */
static void test_time_result_of_a_newer_callers_result(void **state)
{
	struct future_result caller;

	(void)state;
	memset(&caller, 0, sizeof(caller));
	caller.known.struct_size = sizeof(caller);
	caller.known.outcome = RG_OUTCOME_COMPLETED;
	caller.known.cpu_limit = RG_LIMIT_SOFT;
	assert_string_equal(rg_time_result(&caller.known, RG_TIME_CPU),
			    "soft-timelimit");
}

static void test_outcome_names(void **state)
{
	(void)state;
	assert_string_equal(rg_outcome_name(RG_OUTCOME_ERROR), "error");
	assert_string_equal(rg_outcome_name(RG_OUTCOME_COMPLETED), "completed");
	assert_string_equal(rg_outcome_name(RG_OUTCOME_EXEC_FAILED),
			    "exec-failed");
	assert_string_equal(rg_outcome_name(RG_OUTCOME_SETUP_FAILED),
			    "setup-failed");
	assert_string_equal(rg_outcome_name(RG_OUTCOME_CLEANUP_FAILED),
			    "cleanup-failed");
	assert_string_equal(rg_outcome_name((enum rg_outcome)42), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_out_stops_at_the_callers_size),
		cmocka_unit_test(test_copy_in_zeroes_what_the_caller_lacks),
		cmocka_unit_test(test_newer_caller_keeps_its_newer_fields),
		cmocka_unit_test(test_check_refuses_an_unset_size),
		cmocka_unit_test(test_readers_refuse_a_malformed_result),
		cmocka_unit_test(test_time_result_of_a_newer_callers_result),
		cmocka_unit_test(test_outcome_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
