/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The walk that decides whether root may trust a directory
 * (lib/pool/trusted_path.c), on a temporary tree of the test's own user:
 * the walker trusts root's and the caller's own directories, so all but
 * the tests of another user's files need no privileges (those run as root
 * and are skipped, saying so, otherwise).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "pool/trusted_path.h"
#include "tmp_path.h"

#define OTHER_UID 65534

static char dir[] = "/tmp/rg-trusted-path-XXXXXX";

static const char *at(const char *name)
{
	return tmp_path(dir, name);
}

static int setup(void **state)
{
	(void)state;
	umask(022);
	if (!mkdtemp(dir))
		return -1;
	/* mkdtemp makes it 0700: the walk wants nobody else writing, no more */
	if (mkdir(at("a"), 0755) < 0 || mkdir(at("a/b"), 0755) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Open path; on success, check the fd is the directory expect names. */
static int walk(const char *path, bool create, const char *expect,
		struct rg_error *err)
{
	struct stat want, got;
	int fd = -1;

	memset(err, 0, sizeof(*err));
	if (rg_trusted_dir_open(path, "test directory", create, &fd, err) < 0) {
		assert_int_equal(fd, -1);
		return -1;
	}
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &got), 0);
	assert_int_equal(stat(expect, &want), 0);
	assert_int_equal(got.st_ino, want.st_ino);
	assert_int_equal(got.st_dev, want.st_dev);
	close(fd);
	return 0;
}

static void test_own_tree_is_trusted(void **state)
{
	struct rg_error err;

	(void)state;
	assert_int_equal(walk(at("a/b"), false, at("a/b"), &err), 0);
	assert_int_equal(walk(at("a/../a/./b/"), false, at("a/b"), &err), 0);
}

static void test_relative_path_from_the_working_directory(void **state)
{
	struct rg_error err;
	char cwd[PATH_MAX];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(walk("a/b", false, at("a/b"), &err), 0);
	assert_int_equal(chdir(cwd), 0);
}

static void test_missing_directory_is_made_only_when_asked(void **state)
{
	struct rg_error err;
	struct stat st;

	(void)state;
	assert_int_equal(walk(at("a/new/deeper"), false, at("a"), &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(walk(at("a/new/deeper"), true, at("a/new/deeper"),
			      &err),
			 0);
	assert_int_equal(stat(at("a/new"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
}

static void test_group_writable_on_the_way_is_refused(void **state)
{
	struct rg_error err;

	(void)state;
	assert_int_equal(chmod(at("a"), 0775), 0);
	assert_int_equal(walk(at("a/b"), false, at("a/b"), &err), -1);
	assert_int_equal(err.errnum, EPERM);
	assert_non_null(strstr(err.message, "/a'"));
	assert_non_null(strstr(err.message, "mode 0775"));
	assert_int_equal(chmod(at("a"), 0755), 0);
}

static void test_writable_by_others_at_the_end_is_refused(void **state)
{
	struct rg_error err;

	(void)state;
	assert_int_equal(chmod(at("a/b"), 0757), 0);
	assert_int_equal(walk(at("a/b"), false, at("a/b"), &err), -1);
	assert_int_equal(err.errnum, EPERM);
	assert_int_equal(chmod(at("a/b"), 0755), 0);
}

/* /tmp's case: nobody can rename what root owns in a sticky directory */
static void test_sticky_directory_is_fine_on_the_way_only(void **state)
{
	struct rg_error err;

	(void)state;
	assert_int_equal(mkdir(at("sticky"), 0755), 0);
	assert_int_equal(chmod(at("sticky"), 01777), 0);
	assert_int_equal(mkdir(at("sticky/pool"), 0755), 0);
	assert_int_equal(walk(at("sticky/pool"), false, at("sticky/pool"), &err),
			 0);
	assert_int_equal(walk(at("sticky"), false, at("sticky"), &err), -1);
	assert_int_equal(err.errnum, EPERM);
}

static void test_a_file_is_not_a_directory(void **state)
{
	struct rg_error err;
	int fd;

	(void)state;
	fd = open(at("file"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(walk(at("file"), false, at("file"), &err), -1);
	assert_int_equal(err.errnum, ENOTDIR);
	assert_int_equal(walk(at("file/below"), true, at("file"), &err), -1);
}

static void test_own_links_are_followed(void **state)
{
	struct rg_error err;

	(void)state;
	assert_int_equal(symlink("a/b", at("rel")), 0);
	assert_int_equal(symlink(at("a"), at("abs")), 0);
	assert_int_equal(walk(at("rel"), false, at("a/b"), &err), 0);
	assert_int_equal(walk(at("abs/b"), false, at("a/b"), &err), 0);
}

/* A link's target is walked too: a writable directory behind it counts. */
static void test_link_into_a_writable_directory_is_refused(void **state)
{
	struct rg_error err;

	(void)state;
	assert_int_equal(mkdir(at("open"), 0755), 0);
	assert_int_equal(mkdir(at("open/pool"), 0755), 0);
	assert_int_equal(chmod(at("open"), 0777), 0);
	assert_int_equal(symlink(at("open/pool"), at("to-open")), 0);
	assert_int_equal(walk(at("to-open"), false, at("open/pool"), &err), -1);
	assert_int_equal(err.errnum, EPERM);
	assert_non_null(strstr(err.message, "/open'"));
}

static void test_link_loop_ends(void **state)
{
	struct rg_error err;

	(void)state;
	assert_int_equal(symlink("loop2", at("loop1")), 0);
	assert_int_equal(symlink("loop1", at("loop2")), 0);
	assert_int_equal(walk(at("loop1"), false, dir, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
}

static bool skip_unless_root(void)
{
	if (geteuid() == 0)
		return false;
	printf("SKIP: another user's files need root to be made\n");
	return true;
}

static void test_another_users_directory_is_refused(void **state)
{
	struct rg_error err;

	(void)state;
	if (skip_unless_root()) {
		skip();
		return;
	}
	assert_int_equal(mkdir(at("theirs"), 0755), 0);
	assert_int_equal(mkdir(at("theirs/pool"), 0755), 0);
	assert_int_equal(chown(at("theirs"), OTHER_UID, OTHER_UID), 0);
	assert_int_equal(walk(at("theirs/pool"), false, at("theirs/pool"), &err),
			 -1);
	assert_int_equal(err.errnum, EPERM);
	assert_non_null(strstr(err.message, "owned by uid 65534"));
}

/* A user's link could point root anywhere: not followed, whatever it says. */
static void test_another_users_link_is_refused(void **state)
{
	struct rg_error err;

	(void)state;
	if (skip_unless_root()) {
		skip();
		return;
	}
	assert_int_equal(symlink("a/b", at("their-link")), 0);
	assert_int_equal(lchown(at("their-link"), OTHER_UID, OTHER_UID), 0);
	assert_int_equal(walk(at("their-link"), false, at("a/b"), &err), -1);
	assert_int_equal(err.errnum, EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_tree_is_trusted),
		cmocka_unit_test(test_relative_path_from_the_working_directory),
		cmocka_unit_test(test_missing_directory_is_made_only_when_asked),
		cmocka_unit_test(test_group_writable_on_the_way_is_refused),
		cmocka_unit_test(test_writable_by_others_at_the_end_is_refused),
		cmocka_unit_test(test_sticky_directory_is_fine_on_the_way_only),
		cmocka_unit_test(test_a_file_is_not_a_directory),
		cmocka_unit_test(test_own_links_are_followed),
		cmocka_unit_test(test_link_into_a_writable_directory_is_refused),
		cmocka_unit_test(test_link_loop_ends),
		cmocka_unit_test(test_another_users_directory_is_refused),
		cmocka_unit_test(test_another_users_link_is_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
