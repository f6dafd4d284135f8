/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files a submission names, opened without root's rights
 * (lib/pool/run_user_files.c): only regular files are opened (a FIFO gets
 * no reader, a device no open), and as root, a thread that takes the run
 * user's identity cannot open what that user could not.
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
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool/run_user_files.h"
#include "tmp_path.h"

static char dir[] = "/tmp/rg-run-user-files-XXXXXX";

static const char *at(const char *name)
{
	return tmp_path(dir, name);
}

static int setup(void **state)
{
	FILE *f;

	(void)state;
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
		return -1;
	f = fopen(at("lib.so"), "w");
	if (!f || fputs("\177ELF", f) < 0 || fclose(f) != 0)
		return -1;
	if (mkfifo(at("fifo"), 0666) < 0 ||
	    symlink(at("fifo"), at("to-fifo")) < 0 ||
	    symlink(at("lib.so"), at("to-lib")) < 0 ||
	    symlink("/dev/null", at("to-dev")) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	static const char *const names[] = { "lib.so",	    "fifo",
					     "to-fifo",	    "to-lib",
					     "to-dev",	    "secret",
					     "group-secret" };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		unlink(at(names[i]));
	return rmdir(dir);
}

static void test_regular_files_open(void **state)
{
	char buf[4];
	int fd;

	(void)state;
	fd = rg_open_regular(at("lib.so"));
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, 4), 4);
	assert_memory_equal(buf, "\177ELF", 4);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	fd = rg_open_regular(at("to-lib"));
	assert_true(fd >= 0);
	close(fd);
}

/* A writer's non-blocking open fails with ENXIO while no reader has it. */
static void assert_no_reader(void)
{
	int w = open(at("fifo"), O_WRONLY | O_NONBLOCK);

	assert_int_equal(w, -1);
	assert_int_equal(errno, ENXIO);
}

static void test_nothing_else_is_opened(void **state)
{
	static const char *const refused[] = { "fifo", "to-fifo", "to-dev" };

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		errno = 0;
		assert_int_equal(rg_open_regular(at(refused[i])), -1);
		assert_int_equal(errno, EINVAL);
		assert_no_reader();
	}
	assert_int_equal(rg_open_regular("/dev/null"), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rg_open_regular(dir), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rg_open_regular(at("missing")), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_as_the_run_user(void **state)
{
	struct rg_fs_creds saved;
	FILE *f;
	int fd;

	(void)state;
	if (geteuid() != 0) {
		/* nobody else may take another identity: refused, unchanged */
		assert_int_equal(rg_fs_creds_enter(65534, 65534, &saved), -1);
		assert_int_equal((uid_t)setfsuid((uid_t)-1), geteuid());
		skip();
	}
	f = fopen(at("secret"), "w");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(at("secret"), 0600), 0);
	assert_int_equal(rg_fs_creds_enter(65534, 65534, &saved), 0);
	assert_int_equal((uid_t)setfsuid((uid_t)-1), 65534);
	fd = rg_open_regular(at("secret"));
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EACCES);
	fd = rg_open_regular(at("lib.so")); /* 0644: the run user may */
	assert_true(fd >= 0);
	close(fd);
	rg_fs_creds_leave(&saved);
	assert_int_equal((uid_t)setfsuid((uid_t)-1), 0);
	fd = rg_open_regular(at("secret"));
	assert_true(fd >= 0);
	close(fd);
}

/* this thread's supplementary groups, as rg_fs_creds_enter() sees them */
static int set_groups(size_t n, const gid_t *groups)
{
	return (int)syscall(SYS_setgroups, n, groups);
}

/*
 * A caller's supplementary groups are dropped for the open, and given
 * back after, whether it has some or none (none: nothing to drop).
 */
static void test_groups_dropped_and_given_back(void **state)
{
	const gid_t mine[] = { 0, 4242 };
	struct rg_fs_creds saved;
	gid_t now[4], before[64];
	int fd, nbefore;
	FILE *f;

	(void)state;
	if (geteuid() != 0)
		skip(); /* nobody else may set groups */
	nbefore = getgroups(64, before);
	assert_true(nbefore >= 0);
	f = fopen(at("group-secret"), "w");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	/* readable through group 4242 only; the run user is in neither */
	assert_int_equal(chown(at("group-secret"), 0, 4242), 0);
	assert_int_equal(chmod(at("group-secret"), 0640), 0);
	assert_int_equal(set_groups(2, mine), 0);
	assert_int_equal(rg_fs_creds_enter(65534, 65534, &saved), 0);
	assert_int_equal(getgroups(4, now), 0);
	fd = rg_open_regular(at("group-secret"));
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EACCES);
	rg_fs_creds_leave(&saved);
	assert_int_equal(getgroups(4, now), 2);
	assert_int_equal(now[1], 4242);
	assert_int_equal((gid_t)setfsgid((gid_t)-1), getegid());

	assert_int_equal(set_groups(0, NULL), 0);
	assert_int_equal(rg_fs_creds_enter(65534, 65534, &saved), 0);
	assert_int_equal((gid_t)setfsgid((gid_t)-1), 65534);
	assert_int_equal(getgroups(4, now), 0);
	rg_fs_creds_leave(&saved);
	assert_int_equal((uid_t)setfsuid((uid_t)-1), 0);
	assert_int_equal((gid_t)setfsgid((gid_t)-1), getegid());
	assert_int_equal(getgroups(4, now), 0);
	assert_int_equal(set_groups((size_t)nbefore, before), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_files_open),
		cmocka_unit_test(test_nothing_else_is_opened),
		cmocka_unit_test(test_as_the_run_user),
		cmocka_unit_test(test_groups_dropped_and_given_back),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
