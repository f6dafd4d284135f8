/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --check output: the aligned lines, the JSON object, the exit status. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check_format.h"
#include "check/check_internal.h"

static struct rg_check_report *report(void)
{
	struct rg_check_report *r = rg_check_report_new();

	assert_non_null(r);
	return r;
}

static void add(struct rg_check_report *r, const char *name,
		enum rg_check_status st, const char *message, const char *fix)
{
	struct rg_error err;

	assert_int_equal(rg_check_report_add(r, name, st, message, fix, &err),
			 0);
}

/* What print() wrote, as a string to free. */
static char *capture(void (*print)(FILE *, const struct rg_check_report *),
		     const struct rg_check_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	print(f, r);
	fclose(f);
	return buf;
}

static void test_empty(void **state)
{
	struct rg_check_report *r = report();
	char *text = capture(rg_cli_check_print_text, r);
	char *json = capture(rg_cli_check_print_json, r);

	(void)state;
	assert_int_equal(rg_cli_check_exit_status(r), 0);
	assert_string_equal(text, "0 ok, 0 warnings, 0 errors\n");
	assert_string_equal(json,
			    "{\n  \"status\": \"ok\",\n  \"exit_status\": 0,\n"
			    "  \"counts\": {\"ok\": 0, \"warning\": 0, \"error\": 0},\n"
			    "  \"items\": []\n}\n");
	free(text);
	free(json);
	rg_check_report_free(r);
}

/* Columns: status (7), the longest name, the message; fix under it. */
static void test_text(void **state)
{
	struct rg_check_report *r = report();
	char *text;

	(void)state;
	add(r, "cgroup.mode", RG_CHECK_OK, "v2", "ignored for ok items");
	add(r, "pool", RG_CHECK_WARNING, "slot 1 dirty", "runguard --x");
	add(r, "user.x", RG_CHECK_ERROR, "no user x", "useradd x");
	text = capture(rg_cli_check_print_text, r);
	assert_string_equal(text, "ok       cgroup.mode  v2\n"
				  "warning  pool         slot 1 dirty\n"
				  "                      fix: runguard --x\n"
				  "error    user.x       no user x\n"
				  "                      fix: useradd x\n"
				  "1 ok, 1 warning, 1 error\n");
	free(text);
	rg_check_report_free(r);
}

static void test_exit_status(void **state)
{
	struct rg_check_report *r = report();

	(void)state;
	add(r, "a", RG_CHECK_OK, "fine", NULL);
	assert_int_equal(rg_cli_check_exit_status(r), 0);
	add(r, "b", RG_CHECK_WARNING, "hm", "do this");
	assert_int_equal(rg_cli_check_exit_status(r), 1);
	add(r, "c", RG_CHECK_OK, "fine", NULL);
	assert_int_equal(rg_cli_check_exit_status(r), 1);
	add(r, "d", RG_CHECK_ERROR, "bad", "do that");
	assert_int_equal(rg_cli_check_exit_status(r), 2);
	assert_int_equal(rg_check_report_status(r), RG_CHECK_ERROR);
	rg_check_report_free(r);
}

/* Messages hold what paths and errors hold: quotes, backslashes, tabs. */
static void test_json(void **state)
{
	struct rg_check_report *r = report();
	char *json;

	(void)state;
	add(r, "chroot-prefix", RG_CHECK_ERROR, "\"/a\\b\"\tmissing",
	    "mkdir -p '/a\\b'");
	add(r, "pool", RG_CHECK_OK, "none", "not shown");
	json = capture(rg_cli_check_print_json, r);
	assert_string_equal(json,
			    "{\n  \"status\": \"error\",\n  \"exit_status\": 2,\n"
			    "  \"counts\": {\"ok\": 1, \"warning\": 0, \"error\": 1},\n"
			    "  \"items\": [\n"
			    "    {\"name\": \"chroot-prefix\", \"status\": \"error\", "
			    "\"message\": \"\\\"/a\\\\b\\\"\\u0009missing\", "
			    "\"fix\": \"mkdir -p '/a\\\\b'\"},\n"
			    "    {\"name\": \"pool\", \"status\": \"ok\", "
			    "\"message\": \"none\", \"fix\": null}\n"
			    "  ]\n}\n");
	free(json);
	rg_check_report_free(r);
}

static void test_accessors(void **state)
{
	struct rg_check_report *r = report();
	struct rg_error err = { 0 };

	(void)state;
	add(r, "x", RG_CHECK_WARNING, "m", NULL);
	assert_int_equal(rg_check_report_count(r), 1);
	assert_string_equal(rg_check_item_name(r, 0), "x");
	assert_string_equal(rg_check_item_message(r, 0), "m");
	assert_null(rg_check_item_fix(r, 0));
	assert_int_equal(rg_check_item_status(r, 0), RG_CHECK_WARNING);
	/* past the end, and a NULL report */
	assert_null(rg_check_item_name(r, 1));
	assert_int_equal(rg_check_report_count(NULL), 0);
	/* bad items are refused */
	assert_int_equal(rg_check_report_add(r, "y", 3, "m", NULL, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_int_equal(rg_check_report_add(r, "y", RG_CHECK_OK, NULL, NULL,
					     &err),
			 -1);
	assert_int_equal(rg_check_report_count(r), 1);
	rg_check_report_free(r);
	rg_check_report_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_accessors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
