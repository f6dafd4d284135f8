/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pool settings: option > environment > configuration file > default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "options.h"
#include "settings.h"

#define ARGV(...) ((char *[]){ "runguard", __VA_ARGS__, NULL })

static char conf_path[] = "/tmp/rg-settings-XXXXXX";

static int count(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

static void write_conf(const char *text)
{
	FILE *f = fopen(conf_path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	setenv("RUNGUARD_CONFIG", conf_path, 1);
}

static int setup(void **state)
{
	int fd = mkstemp(conf_path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unsetenv("RUNGUARD_POOL_SIZE");
	unsetenv("RUNGUARD_POOL_DIR");
	unsetenv("RUNGUARD_V2_MEMORY_PEAK");
	unsetenv("RUNGUARD_POOL_KEEPER");
	setenv("RUNGUARD_CONFIG", "/dev/null", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(conf_path);
	memcpy(conf_path + strlen(conf_path) - 6, "XXXXXX", 6);
	return 0;
}

/* Parse argv and load the settings; the load's return value. */
static int load(char **argv, struct rg_cli_settings *s, struct rg_error *err)
{
	struct rg_cli_options o;
	int rc;

	if (rg_cli_parse(&o, count(argv), argv, err) != 0)
		fail_msg("parse failed: %s", err->message);
	rc = rg_cli_settings_load(&o, s, err);
	rg_cli_options_free(&o);
	return rc;
}

static void test_defaults(void **state)
{
	struct rg_cli_settings s;
	struct rg_error err;

	(void)state;
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_int_equal(s.pool_size, 0);
	assert_string_equal(s.pool_dir, "/run/runguard");
	assert_false(s.favordynmods); /* host-wide: the admin's to turn on */
	assert_true(s.keeper);
	assert_int_equal(s.v2_memory_peak, RG_POOL_V2_PEAK_SAMPLED);
	assert_string_equal(s.size_from, "default");
	assert_string_equal(s.dir_from, "default");
}

static void test_file(void **state)
{
	struct rg_cli_settings s;
	struct rg_error err;

	(void)state;
	write_conf("# judgehost pool\n\n  pool-size = 32  \n"
		   "pool-dir=/srv/pool # trailing comment\n"
		   "v1-favordynmods = no\n"
		   "v2-memory-peak = exact\n");
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_int_equal(s.pool_size, 32);
	assert_string_equal(s.pool_dir, "/srv/pool");
	/* the line that set them, for --check */
	assert_string_equal(s.size_from + strlen(conf_path), ":3");
	assert_string_equal(s.dir_from + strlen(conf_path), ":4");
	assert_false(s.favordynmods);
	assert_int_equal(s.v2_memory_peak, RG_POOL_V2_PEAK_EXACT);
	write_conf("v2-memory-peak = sampled\n");
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_int_equal(s.v2_memory_peak, RG_POOL_V2_PEAK_SAMPLED);
}

static void test_v2_memory_peak_environment(void **state)
{
	struct rg_cli_settings s;
	struct rg_error err;

	(void)state;
	write_conf("v2-memory-peak = sampled\n");
	setenv("RUNGUARD_V2_MEMORY_PEAK", "exact", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_int_equal(s.v2_memory_peak, RG_POOL_V2_PEAK_EXACT);
	write_conf("v2-memory-peak = exact\n");
	setenv("RUNGUARD_V2_MEMORY_PEAK", "sampled", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_int_equal(s.v2_memory_peak, RG_POOL_V2_PEAK_SAMPLED);
	setenv("RUNGUARD_V2_MEMORY_PEAK", "Exact", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), -1);
	assert_non_null(strstr(err.message, "RUNGUARD_V2_MEMORY_PEAK"));
	assert_non_null(strstr(err.message, "not sampled or exact"));
	unsetenv("RUNGUARD_V2_MEMORY_PEAK");
}

static void test_precedence(void **state)
{
	struct rg_cli_settings s;
	struct rg_error err;

	(void)state;
	write_conf("pool-size = 32\npool-dir = /from/file\n");
	setenv("RUNGUARD_POOL_SIZE", "8", 1);
	setenv("RUNGUARD_POOL_DIR", "/from/env", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_int_equal(s.pool_size, 8);
	assert_string_equal(s.pool_dir, "/from/env");
	assert_string_equal(s.size_from, "RUNGUARD_POOL_SIZE");
	assert_string_equal(s.dir_from, "RUNGUARD_POOL_DIR");
	assert_int_equal(load(ARGV("--pool-size=0", "--pool-dir=/opt", "true"),
			      &s, &err),
			 0);
	assert_int_equal(s.pool_size, 0);
	assert_string_equal(s.pool_dir, "/opt");
	assert_string_equal(s.size_from, "--pool-size");
	assert_string_equal(s.dir_from, "--pool-dir");
	unsetenv("RUNGUARD_POOL_SIZE");
	unsetenv("RUNGUARD_POOL_DIR");
}

static void expect_conf_error(const char *text, const char *needle)
{
	struct rg_cli_settings s;
	struct rg_error err;

	write_conf(text);
	assert_int_equal(load(ARGV("true"), &s, &err), -1);
	if (!strstr(err.message, needle))
		fail_msg("`%s' not in `%s'", needle, err.message);
}

/* pool-keeper: option > RUNGUARD_POOL_KEEPER > file; only yes or no */
static void test_keeper(void **state)
{
	struct rg_cli_settings s;
	struct rg_error err;

	(void)state;
	write_conf("pool-keeper = yes\n");
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_true(s.keeper);
	setenv("RUNGUARD_POOL_KEEPER", "no", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), 0);
	assert_false(s.keeper);
	assert_int_equal(load(ARGV("--pool-keeper=yes", "true"), &s, &err), 0);
	assert_true(s.keeper);
	assert_int_equal(load(ARGV("--pool-keeper=sure", "true"), &s, &err),
			 -1);
	assert_non_null(strstr(err.message, "--pool-keeper"));
	setenv("RUNGUARD_POOL_KEEPER", "", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), -1);
	assert_non_null(strstr(err.message, "RUNGUARD_POOL_KEEPER"));
	unsetenv("RUNGUARD_POOL_KEEPER");
	expect_conf_error("pool-keeper = maybe\n", "pool-keeper");
}

static void test_bad_file(void **state)
{
	(void)state;
	expect_conf_error("pool-size = 2\npools = 3\n",
			  ":2: unknown setting `pools'");
	expect_conf_error("pool-size = -1\n", "invalid pool size `-1'");
	expect_conf_error("pool-size = 99999\n", "invalid pool size");
	expect_conf_error("pool-size\n", "expected `key = value'");
	expect_conf_error("pool-dir = relative\n", "absolute path");
	expect_conf_error("v1-favordynmods = maybe\n", "not yes or no");
	expect_conf_error("v2-memory-peak = yes\n",
			  ":1: v2-memory-peak `yes' is not sampled or "
			  "exact");
	expect_conf_error("v2-memory-peak =\n", "not sampled or exact");
}

static void test_missing_files(void **state)
{
	struct rg_cli_settings s;
	struct rg_error err;

	(void)state;
	setenv("RUNGUARD_CONFIG", "/nonexistent/runguard.conf", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), -1);
	assert_non_null(strstr(err.message, "/nonexistent/runguard.conf"));
}

static void test_bad_environment(void **state)
{
	struct rg_cli_settings s;
	struct rg_error err;

	(void)state;
	setenv("RUNGUARD_POOL_SIZE", "abc", 1);
	assert_int_equal(load(ARGV("true"), &s, &err), -1);
	assert_non_null(strstr(err.message, "RUNGUARD_POOL_SIZE"));
	unsetenv("RUNGUARD_POOL_SIZE");
}

static void test_options(void **state)
{
	struct rg_cli_options o;
	struct rg_error err;
	char **argv;

	(void)state;
	argv = ARGV("--pool-size=abc", "true");
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), -1);
	assert_non_null(strstr(err.message, "invalid pool size"));
	argv = ARGV("--pool-destroy=now");
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), -1);
	assert_non_null(strstr(err.message, "--pool-destroy"));
	argv = ARGV("--pool-show", "--pool-create");
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), -1);
	argv = ARGV("--pool-destroy=force");
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), 0);
	assert_int_equal(o.pool_command, RG_CLI_POOL_DESTROY_FORCE);
	rg_cli_options_free(&o);
	argv = ARGV("--pool-destroy=wait");
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), 0);
	assert_int_equal(o.pool_command, RG_CLI_POOL_DESTROY_WAIT);
	rg_cli_options_free(&o);
	argv = ARGV("--pool-destroy");
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), 0);
	assert_int_equal(o.pool_command, RG_CLI_POOL_DESTROY);
	rg_cli_options_free(&o);
	argv = ARGV("--pool-prewarm", "/a", "/b");
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), 0);
	assert_int_equal(o.pool_command, RG_CLI_POOL_PREWARM);
	assert_int_equal(o.command_argc, 2);
	rg_cli_options_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_precedence, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_memory_peak_environment,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_keeper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_environment, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_options, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
