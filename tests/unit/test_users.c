/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * -u / -g resolution and VALID_USERS, against users every Debian system
 * has: root (0), daemon (1), nobody (65534); groups daemon (1), nogroup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "users.h"

#define DJ_USERS "domjudge-run,domjudge-run-*"

static void test_username_rule(void **state)
{
	(void)state;
	assert_true(rg_cli_username_ok("a"));
	assert_true(rg_cli_username_ok("domjudge-run-3"));
	assert_true(rg_cli_username_ok("Ab9._-"));
	assert_false(rg_cli_username_ok(""));
	assert_false(rg_cli_username_ok("9abc"));
	assert_false(rg_cli_username_ok("-abc"));
	assert_false(rg_cli_username_ok("_abc"));
	assert_false(rg_cli_username_ok("ab c"));
	assert_false(rg_cli_username_ok("ab/c"));
	assert_false(rg_cli_username_ok("ab$"));
	assert_false(rg_cli_username_ok("ab\\c"));
	assert_false(rg_cli_username_ok("\xc3\xa9t\xc3\xa9"));
}

static void test_resolve_user(void **state)
{
	struct rg_error err;
	uid_t uid = 12345;

	(void)state;
	assert_int_equal(rg_cli_resolve_user("root", &uid, &err), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(rg_cli_resolve_user("daemon", &uid, &err), 0);
	assert_int_equal(uid, 1);
	assert_int_equal(rg_cli_resolve_user("nobody", &uid, &err), 0);
	assert_int_equal(uid, 65534);
	/* numbers need not exist in /etc/passwd */
	assert_int_equal(rg_cli_resolve_user("4242", &uid, &err), 0);
	assert_int_equal(uid, 4242);
	assert_int_equal(rg_cli_resolve_user("0", &uid, &err), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(rg_cli_resolve_user("4294967294", &uid, &err), 0);
	assert_int_equal(uid, 4294967294U);
}

static void expect_bad_user(const char *arg, const char *message)
{
	struct rg_error err;
	uid_t uid;

	assert_int_equal(rg_cli_resolve_user(arg, &uid, &err), -1);
	assert_string_equal(err.message, message);
	assert_int_equal(err.errnum, 0);
}

static void test_resolve_user_errors(void **state)
{
	(void)state;
	expect_bad_user("-1", "invalid username or ID specified: `-1'");
	expect_bad_user("4294967295",
			"invalid username or ID specified: `4294967295'");
	expect_bad_user("no-such-user-xyz",
			"invalid username or ID specified: `no-such-user-xyz'");
	expect_bad_user("9abc",
			"username `9abc' does not match the POSIX pattern");
	expect_bad_user("", "username `' does not match the POSIX pattern");
	expect_bad_user("root ",
			"username `root ' does not match the POSIX pattern");
}

static void test_resolve_group(void **state)
{
	struct rg_error err;
	gid_t gid = 12345;

	(void)state;
	assert_int_equal(rg_cli_resolve_group("daemon", &gid, &err), 0);
	assert_int_equal(gid, 1);
	assert_int_equal(rg_cli_resolve_group("nogroup", &gid, &err), 0);
	assert_int_equal(gid, 65534);
	assert_int_equal(rg_cli_resolve_group("777", &gid, &err), 0);
	assert_int_equal(gid, 777);
	assert_int_equal(rg_cli_resolve_group("-5", &gid, &err), -1);
	assert_string_equal(err.message,
			    "invalid groupname or ID specified: `-5'");
	assert_int_equal(rg_cli_resolve_group("no-such-group-xyz", &gid, &err),
			 -1);
	assert_string_equal(err.message,
			    "invalid groupname or ID specified: `no-such-group-xyz'");
	assert_int_equal(rg_cli_resolve_group("", &gid, &err), -1);
	assert_int_equal(rg_cli_resolve_group("4294967295", &gid, &err), -1);
}

static void test_default_group(void **state)
{
	struct rg_error err;
	gid_t gid = 12345;

	(void)state;
	assert_int_equal(rg_cli_default_group("daemon", &gid, &err), 0);
	assert_int_equal(gid, 1);
	/* DOMjudge's quirk: a numeric user looks up a group named "1" */
	assert_int_equal(rg_cli_default_group("1", &gid, &err), -1);
	assert_non_null(strstr(err.message, "no group named `1'"));
	assert_non_null(
		strstr(err.message, "invalid groupname or ID specified"));
	/* nobody's group is nogroup: there is no group "nobody" */
	assert_int_equal(rg_cli_default_group("nobody", &gid, &err), -1);
	assert_non_null(strstr(err.message, "`nobody'"));
}

static void expect_valid(uid_t uid, const char *arg, const char *patterns)
{
	struct rg_error err = { 0 };

	print_message("valid: %u `%s' in `%s'\n", (unsigned)uid, arg, patterns);
	assert_int_equal(rg_cli_check_valid_user(uid, arg, patterns, &err), 0);
}

static void expect_illegal(uid_t uid, const char *arg, const char *patterns)
{
	struct rg_error err = { 0 };
	char expected[64];

	print_message("illegal: %u `%s' in `%s'\n", (unsigned)uid, arg,
		      patterns);
	assert_int_equal(rg_cli_check_valid_user(uid, arg, patterns, &err), -1);
	snprintf(expected, sizeof(expected), "illegal user specified: %u",
		 (unsigned)uid);
	assert_string_equal(err.message, expected);
}

static void test_valid_users_glob(void **state)
{
	(void)state;
	/* the judgedaemon's users pass through the glob, existing or not */
	expect_valid(4001, "domjudge-run-3", DJ_USERS);
	expect_valid(4001, "domjudge-run-12", DJ_USERS);
	expect_valid(4000, "domjudge-run", DJ_USERS);
	expect_illegal(4000, "domjudge-run3", DJ_USERS);
	expect_illegal(4000, "domjudge", DJ_USERS);
	/* the numeric uid of a glob-only user does not match */
	expect_illegal(4001, "4001", DJ_USERS);
	/* '*' also matches '/' (no FNM_PATHNAME) */
	expect_valid(4001, "domjudge-run-a/b", DJ_USERS);
	expect_valid(7, "anything", "*");
}

static void test_valid_users_literal_uid(void **state)
{
	(void)state;
	/* the numeric uid of the user a pattern names literally passes */
	expect_valid(1, "1", "daemon,daemon-*");
	expect_valid(65534, "65534", "nobody");
	expect_valid(1, "daemon", "daemon");
	expect_illegal(2, "2", "daemon,daemon-*");
	expect_illegal(65534, "nobody", "daemon,daemon-*");
	/* a later pattern can admit */
	expect_valid(65534, "65534", "daemon,,nobody");
	expect_valid(65534, "nobody", ",no*");
}

static void test_valid_users_root_and_empty(void **state)
{
	(void)state;
	expect_illegal(0, "root", "root");
	expect_illegal(0, "0", "*");
	expect_illegal(0, "root", DJ_USERS);
	expect_illegal(5, "five", "");
	expect_illegal(5, "five", ",,,");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_username_rule),
		cmocka_unit_test(test_resolve_user),
		cmocka_unit_test(test_resolve_user_errors),
		cmocka_unit_test(test_resolve_group),
		cmocka_unit_test(test_default_group),
		cmocka_unit_test(test_valid_users_glob),
		cmocka_unit_test(test_valid_users_literal_uid),
		cmocka_unit_test(test_valid_users_root_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
