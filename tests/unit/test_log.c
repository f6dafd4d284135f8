/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CLI's log lines (DOMjudge 9.0 formats) and the -v / -q levels. */
#include <fcntl.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_log.h"

static int fds[2];

static int setup(void **state)
{
	(void)state;
	if (pipe2(fds, O_NONBLOCK) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(fds[0]);
	close(fds[1]);
	return 0;
}

/* Everything logged since the last call. */
static const char *drain(void)
{
	static char buf[8192];
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void log_all(struct rg_cli_log *log)
{
	rg_cli_log_message(log, RG_LOG_ERROR, "e");
	rg_cli_log_message(log, RG_LOG_WARNING, "w");
	rg_cli_log_message(log, RG_LOG_NOTICE, "n");
	rg_cli_log_message(log, RG_LOG_DEBUG, "d");
}

static void test_default_level(void **state)
{
	struct rg_cli_log log;

	(void)state;
	rg_cli_log_init(&log, "rg", fds[1]);
	assert_int_equal(rg_cli_log_level(&log), RG_LOG_WARNING);
	log_all(&log);
	assert_string_equal(drain(), "rg: e\nrg: warning: w\n");
}

static void test_quiet(void **state)
{
	struct rg_cli_log log;

	(void)state;
	rg_cli_log_init(&log, "rg", fds[1]);
	rg_cli_log_set_mode(&log, false, true);
	assert_int_equal(rg_cli_log_level(&log), RG_LOG_ERROR);
	log_all(&log);
	assert_string_equal(drain(), "rg: e\n");
	/* quiet beats verbose whatever the order (DOMjudge 9.0) */
	rg_cli_log_set_mode(&log, true, true);
	assert_int_equal(rg_cli_log_level(&log), RG_LOG_ERROR);
	log_all(&log);
	assert_string_equal(drain(), "rg: e\n");
}

static void test_verbose_format(void **state)
{
	struct rg_cli_log log;
	regex_t re;
	char pattern[256];

	(void)state;
	rg_cli_log_init(&log, "/usr/bin/runguard", fds[1]);
	rg_cli_log_set_mode(&log, true, false);
	assert_int_equal(rg_cli_log_level(&log), RG_LOG_DEBUG);
	rg_cli_log_message(&log, RG_LOG_DEBUG, "child pid = 42");
	snprintf(pattern, sizeof(pattern),
		 "^/usr/bin/runguard \\[%d @ +[0-9]+\\.[0-9]{6}\\]: "
		 "verbose: child pid = 42\n$",
		 (int)getpid());
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	assert_int_equal(regexec(&re, drain(), 0, NULL, 0), 0);
	regfree(&re);
	/* %10.6f: ten columns for a small number */
	rg_cli_log_message(&log, RG_LOG_NOTICE, "x");
	assert_non_null(strstr(drain(), " @   0.0"));
	rg_cli_log_message(&log, RG_LOG_WARNING, "timelimit exceeded");
	assert_string_equal(drain(),
			    "/usr/bin/runguard: warning: timelimit exceeded\n");
}

/*
 * Without -e the lines share the command's stderr, which DOMjudge counts
 * against -s plus 100 bytes: the program's last name component only,
 * unless -v asks for everything.
 */
static void test_shared_stream_short_name(void **state)
{
	struct rg_cli_log log;

	(void)state;
	rg_cli_log_init(&log, "/opt/domjudge/judgehost/bin/runguard", fds[1]);
	rg_cli_log_set_mode(&log, false, false);
	rg_cli_log_set_shared(&log, true);
	rg_cli_log_message(&log, RG_LOG_WARNING, "w");
	assert_string_equal(drain(), "runguard: warning: w\n");
	rg_cli_log_message(&log, RG_LOG_ERROR, "e");
	assert_string_equal(drain(), "runguard: e\n");

	rg_cli_log_set_mode(&log, true, false);
	rg_cli_log_message(&log, RG_LOG_WARNING, "w");
	assert_string_equal(drain(),
			    "/opt/domjudge/judgehost/bin/runguard: warning: w\n");

	rg_cli_log_set_mode(&log, false, false);
	rg_cli_log_set_shared(&log, false);
	rg_cli_log_message(&log, RG_LOG_WARNING, "w");
	assert_string_equal(drain(),
			    "/opt/domjudge/judgehost/bin/runguard: warning: w\n");

	/* a name without a slash stays as it is */
	rg_cli_log_init(&log, "runguard", fds[1]);
	rg_cli_log_set_shared(&log, true);
	rg_cli_log_message(&log, RG_LOG_WARNING, "w");
	assert_string_equal(drain(), "runguard: warning: w\n");
}

static void test_long_message_keeps_newline(void **state)
{
	struct rg_cli_log log;
	char msg[4000];
	const char *out;

	(void)state;
	memset(msg, 'a', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	rg_cli_log_init(&log, "rg", fds[1]);
	rg_cli_log_message(&log, RG_LOG_WARNING, msg);
	out = drain();
	assert_true(strlen(out) > 1000);
	assert_int_equal(out[strlen(out) - 1], '\n');
	/* one line: the only newline is the last byte */
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_level),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_verbose_format),
		cmocka_unit_test(test_shared_stream_short_name),
		cmocka_unit_test(test_long_message_keeps_newline),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
