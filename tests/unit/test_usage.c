/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --help and --version: the shape of DOMjudge's texts, not its wording. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rg-build-config.h"
#include "usage.h"

struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static void capture_open(struct capture *c)
{
	c->text = NULL;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
}

static const char *capture_close(struct capture *c)
{
	fclose(c->f);
	return c->text;
}

static const char *const option_order[] = {
	"-r, --root=",
	"-u, --user=",
	"-g, --group=",
	"-d, --chdir=",
	"-t, --walltime=",
	"-C, --cputime=",
	"-m, --memsize=",
	"-f, --filesize=",
	"-p, --nproc=",
	"-P, --cpuset=",
	"-c, --no-core",
	"-o, --stdout=",
	"-e, --stderr=",
	"-s, --streamsize=",
	"-E, --environment",
	"-V, --variable=",
	"-M, --outmeta=",
	"-U, --runpipepid=",
	"-v, --verbose",
	"-q, --quiet",
	"    --help",
	"    --version",
	"    --seccomp=on|off",
	"    --allow-core-dumps",
	"    --pool-size=N",
	"    --pool-dir=DIR",
	"    --pool-create",
	"    --pool-show",
	"    --pool-destroy[=force|wait]",
	"    --pool-prewarm PATH...",
};

static void test_help_shape(void **state)
{
	struct capture c;
	const char *text, *pos;

	(void)state;
	capture_open(&c);
	assert_int_equal(rg_cli_print_help(c.f, "/bin/rg"), 0);
	text = capture_close(&c);
	assert_memory_equal(text, "Usage: /bin/rg [OPTION]... COMMAND...\n",
			    strlen("Usage: /bin/rg [OPTION]... COMMAND...\n"));
	/* summary line, then a blank line before the options */
	pos = strchr(text, '\n') + 1;
	pos = strchr(pos, '\n') + 1;
	assert_true(*pos == '\n');
	for (size_t i = 0; i < sizeof(option_order) / sizeof(*option_order);
	     i++) {
		const char *next = strstr(pos, option_order[i]);

		if (!next)
			fail_msg("option `%s' missing or out of order",
				 option_order[i]);
		pos = next;
	}
	/* then a blank line and the notes */
	assert_non_null(strstr(pos, "\n\n"));
	assert_non_null(strstr(pos, "SOFT:HARD"));
	/* sudo strips RUNGUARD_POOL_*: the file is what works under DOMjudge */
	assert_non_null(strstr(pos, "sudo strips the environment"));
	assert_non_null(strstr(pos, "/etc/runguard.conf is the way"));
	/* the one pool setting with a trade-off to choose */
	assert_non_null(strstr(pos, "v2-memory-peak"));
	free(c.text);
}

static void test_help_fits_80_columns(void **state)
{
	struct capture c;
	const char *line;

	(void)state;
	capture_open(&c);
	rg_cli_print_help(c.f, "runguard");
	line = capture_close(&c);
	while (*line) {
		size_t len = strcspn(line, "\n");

		if (len > 80)
			fail_msg("line too long: %.*s", (int)len, line);
		line += len + (line[len] == '\n');
	}
	free(c.text);
}

static void test_version(void **state)
{
	struct capture c;
	const char *text;

	(void)state;
	capture_open(&c);
	assert_int_equal(rg_cli_print_version(c.f), 0);
	text = capture_close(&c);
	assert_memory_equal(text, "runguard " RG_VERSION,
			    strlen("runguard " RG_VERSION));
	assert_non_null(strstr(text, "DOMjudge"));
	assert_null(strstr(text, "part of DOMjudge version"));
	assert_non_null(strstr(text, "Lesser General Public"));
	assert_non_null(strstr(text, "NO WARRANTY"));
	assert_non_null(strstr(text, "\nCHROOT_PREFIX: " RG_CHROOT_PREFIX "\n"));
	assert_non_null(strstr(text, "\nVALID_USERS: " RG_VALID_USERS "\n"));
	assert_non_null(strstr(text, "\ncgroup parent: " RG_CGROUP_PARENT "\n"));
	free(c.text);
}

static void test_help_beats_version(void **state)
{
	struct capture c;
	const char *text;

	(void)state;
	capture_open(&c);
	assert_int_equal(rg_cli_print_info(c.f, "rg", true, true), 0);
	text = capture_close(&c);
	assert_memory_equal(text, "Usage: ", 7);
	free(c.text);

	capture_open(&c);
	assert_int_equal(rg_cli_print_info(c.f, "rg", false, true), 0);
	text = capture_close(&c);
	assert_memory_equal(text, "runguard ", 9);
	free(c.text);

	capture_open(&c);
	assert_int_equal(rg_cli_print_info(c.f, "rg", false, false), 1);
	text = capture_close(&c);
	assert_int_equal(strlen(text), 0);
	free(c.text);
}

static void test_write_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	assert_int_equal(rg_cli_print_help(f, "rg"), -1);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_shape),
		cmocka_unit_test(test_help_fits_80_columns),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_help_beats_version),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
