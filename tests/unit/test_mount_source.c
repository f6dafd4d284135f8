/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finding a bind mount's source outside a judging (lib/pool/mount_source.c):
 * mountinfo parsing and the candidate search on made-up tables, and the
 * whole search on this machine's own mount table and a temporary tree. No
 * privileges needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool/mount_source.h"

static void test_parse_line(void **state)
{
	struct rg_mount_entry e;

	(void)state;
	assert_int_equal(rg_mount_entry_parse("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root "
					      "rw,errors=continue\n",
					      &e),
			 0);
	assert_int_equal(e.major, 98);
	assert_int_equal(e.minor, 0);
	assert_string_equal(e.root, "/mnt1");
	assert_string_equal(e.point, "/mnt2");
	rg_mount_entry_free(&e);
}

static void test_parse_escapes(void **state)
{
	struct rg_mount_entry e;

	(void)state;
	assert_int_equal(rg_mount_entry_parse("1 2 8:1 /a\\040b /j\\134x\\011y rw - ext4 /dev/sda1 rw",
					      &e),
			 0);
	assert_string_equal(e.root, "/a b");
	assert_string_equal(e.point, "/j\\x\ty");
	rg_mount_entry_free(&e);
	/* a backslash that starts no escape stays; one at the end too */
	assert_int_equal(rg_mount_entry_parse("1 2 8:1 /a\\9 /b\\ rw", &e), 0);
	assert_string_equal(e.root, "/a\\9");
	assert_string_equal(e.point, "/b\\");
	rg_mount_entry_free(&e);
}

static void test_parse_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"1 2 8:1 /a",
		"1 2 81 /a /b rw",
		"1 2 x:1 /a /b rw",
		"1 2 8:1x /a /b rw",
		"1 2 8:1 a /b rw",
		"1 2 8:1 /a b rw",
	};
	struct rg_mount_entry e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(rg_mount_entry_parse(bad[i], &e), -1);
		assert_null(e.root);
		assert_null(e.point);
	}
}

static void test_path_below(void **state)
{
	(void)state;
	assert_true(rg_path_below("/a/b", "/a"));
	assert_true(rg_path_below("/a", "/a"));
	assert_true(rg_path_below("/a", "/a/"));
	assert_true(rg_path_below("/a/b", "/"));
	assert_true(rg_path_below("/", "/"));
	assert_false(rg_path_below("/ab", "/a"));
	assert_false(rg_path_below("/a", "/a/b"));
	assert_false(rg_path_below("/b", "/a"));
}

static struct rg_mount_table table_of(const char *text)
{
	struct rg_mount_table t;
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	assert_int_equal(rg_mount_table_read(f, &t), 0);
	fclose(f);
	return t;
}

struct seen {
	char list[8][PATH_MAX];
	int count;
	int accept_at; /* the candidate to accept, or -1 */
};

static bool record(const char *candidate, void *data)
{
	struct seen *s = data;

	assert_true(s->count < 8);
	snprintf(s->list[s->count], PATH_MAX, "%s", candidate);
	return s->count++ == s->accept_at;
}

/* The judging's usr: a bind of the chroot's, itself a bind of /usr. */
static const char *const dj_table =
	"20 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
	"21 20 0:5 / /proc rw - proc proc rw\n"
	"30 20 8:1 /usr /chroot/usr ro - ext4 /dev/sda1 rw\n"
	"40 20 8:1 /usr /j/1/usr ro - ext4 /dev/sda1 rw\n"
	"41 20 0:5 / /j/1/proc rw - proc proc rw\n"
	"50 20 8:2 /data /srv rw - ext4 /dev/sda2 rw\n";

static void test_candidates_of_a_bind(void **state)
{
	struct rg_mount_table t = table_of(dj_table);
	struct seen s = { .accept_at = -1 };

	(void)state;
	assert_int_equal(t.count, 6);
	assert_false(rg_mount_candidates(&t, "/j/1/usr/lib", record, &s));
	assert_int_equal(s.count, 3);
	assert_string_equal(s.list[0], "/usr/lib");
	assert_string_equal(s.list[1], "/chroot/usr/lib");
	assert_string_equal(s.list[2], "/j/1/usr/lib");
	/* the first one accepted ends the search */
	s = (struct seen){ .accept_at = 1 };
	assert_true(rg_mount_candidates(&t, "/j/1/usr/lib", record, &s));
	assert_int_equal(s.count, 2);
	rg_mount_table_free(&t);
}

static void test_candidates_of_a_plain_dir(void **state)
{
	struct rg_mount_table t = table_of(dj_table);
	struct seen s = { .accept_at = -1 };

	(void)state;
	/* no mount of its own: only the root file system's path */
	rg_mount_candidates(&t, "/j/1/etc", record, &s);
	assert_int_equal(s.count, 1);
	assert_string_equal(s.list[0], "/j/1/etc");
	/* another device: its own mounts only */
	s = (struct seen){ .accept_at = -1 };
	rg_mount_candidates(&t, "/srv/x", record, &s);
	assert_int_equal(s.count, 1);
	assert_string_equal(s.list[0], "/srv/x");
	/* the mount point itself */
	s = (struct seen){ .accept_at = -1 };
	rg_mount_candidates(&t, "/j/1/usr", record, &s);
	assert_int_equal(s.count, 3);
	assert_string_equal(s.list[0], "/usr");
	rg_mount_table_free(&t);
}

static void test_candidates_stacked(void **state)
{
	/* /j/1/usr mounted twice: the later mount is what the path shows */
	struct rg_mount_table t = table_of(
		"20 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
		"40 20 8:1 /usr /j/1/usr ro - ext4 /dev/sda1 rw\n"
		"42 40 8:3 /opt /j/1/usr ro - ext4 /dev/sda3 rw\n"
		"43 20 8:3 / /mnt/three ro - ext4 /dev/sda3 rw\n");
	struct seen s = { .accept_at = -1 };

	(void)state;
	rg_mount_candidates(&t, "/j/1/usr/bin", record, &s);
	assert_int_equal(s.count, 2);
	assert_string_equal(s.list[0], "/j/1/usr/bin");
	assert_string_equal(s.list[1], "/mnt/three/opt/bin");
	rg_mount_table_free(&t);
}

static void test_candidates_no_mount(void **state)
{
	struct rg_mount_table t = table_of("");
	struct seen s = { .accept_at = -1 };

	(void)state;
	assert_false(rg_mount_candidates(&t, "/x", record, &s));
	assert_int_equal(s.count, 0);
	rg_mount_table_free(&t);
}

/* On this machine: a plain directory has no source outside itself. */
static void test_source_on_this_machine(void **state)
{
	char tmp[] = "/tmp/rg-mount-source-XXXXXX", sub[PATH_MAX];
	char real[PATH_MAX], out[PATH_MAX];
	struct rg_mount_table t;
	const char *exclude[1];
	FILE *f;

	(void)state;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		skip();
	assert_int_equal(rg_mount_table_read(f, &t), 0);
	fclose(f);
	assert_non_null(mkdtemp(tmp));
	snprintf(sub, sizeof(sub), "%s/usr", tmp);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_non_null(realpath(sub, real));
	assert_true(rg_mount_source(&t, sub, NULL, 0, out, sizeof(out)));
	assert_string_equal(out, real);
	exclude[0] = tmp;
	assert_false(rg_mount_source(&t, sub, exclude, 1, out, sizeof(out)));
	/* not a directory, or missing: nothing */
	assert_false(
		rg_mount_source(&t, "/dev/null", NULL, 0, out, sizeof(out)));
	assert_int_equal(rmdir(sub), 0);
	assert_false(rg_mount_source(&t, sub, NULL, 0, out, sizeof(out)));
	assert_int_equal(rmdir(tmp), 0);
	rg_mount_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_parse_escapes),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_path_below),
		cmocka_unit_test(test_candidates_of_a_bind),
		cmocka_unit_test(test_candidates_of_a_plain_dir),
		cmocka_unit_test(test_candidates_stacked),
		cmocka_unit_test(test_candidates_no_mount),
		cmocka_unit_test(test_source_on_this_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
