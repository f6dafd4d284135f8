/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Account lookups: straight from the files when nsswitch.conf puts
 * "files" first, from NSS otherwise or when the files do not know the
 * name. The files here hold made-up ids no real system has, so where an
 * answer came from shows in the id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "accounts.h"

static char dir[] = "/tmp/rg-accounts-XXXXXX";
static char nsswitch[64], passwd[64], group[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(nsswitch, sizeof(nsswitch), "%s/nsswitch.conf", dir);
	snprintf(passwd, sizeof(passwd), "%s/passwd", dir);
	snprintf(group, sizeof(group), "%s/group", dir);
	write_file(passwd, "judge:x:4000001:4000002::/nonexistent:/bin/false\n"
			   "judge-0:x:4000003:4000002:a b:/:/bin/false\n"
			   "broken:x:notanumber:1::/:/bin/false\n");
	write_file(group, "judges:x:4000002:judge\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(nsswitch);
	unlink(passwd);
	unlink(group);
	rmdir(dir);
	rg_accounts_use_files(NULL, NULL, NULL);
	return 0;
}

static void use(const char *nsswitch_text)
{
	write_file(nsswitch, nsswitch_text);
	rg_accounts_use_files(nsswitch, passwd, group);
}

static void test_files_first_reads_the_files(void **state)
{
	uid_t uid;
	gid_t gid;

	(void)state;
	use("# comment\npasswd:\tfiles systemd\ngroup: files [SUCCESS=merge] x\n");
	assert_int_equal(rg_account_uid("judge", &uid), 0);
	assert_int_equal(uid, 4000001);
	assert_int_equal(rg_account_uid("judge-0", &uid), 0);
	assert_int_equal(uid, 4000003);
	assert_int_equal(rg_account_gid("judges", &gid), 0);
	assert_int_equal(gid, 4000002);
}

/* A prefix of a name is not the name. */
static void test_whole_names_only(void **state)
{
	uid_t uid;

	(void)state;
	use("passwd: files\n");
	assert_int_equal(rg_account_uid("judge-", &uid), -1);
	assert_int_equal(rg_account_uid("jud", &uid), -1);
}

/* Not in the files, or no usable id there: NSS answers (root exists). */
static void test_misses_go_to_nss(void **state)
{
	uid_t uid = 1;

	(void)state;
	use("passwd: files\n");
	assert_int_equal(rg_account_uid("root", &uid), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(rg_account_uid("broken", &uid), -1);
}

/* Another source first: the files are not read at all. */
static void test_other_source_first_uses_nss(void **state)
{
	uid_t uid;
	gid_t gid;

	(void)state;
	use("passwd: systemd files\ngroup: filesx\n");
	assert_int_equal(rg_account_uid("judge", &uid), -1);
	assert_int_equal(rg_account_gid("judges", &gid), -1);
}

/* One read of nsswitch.conf answers each database for itself. */
static void test_each_database_its_own_answer(void **state)
{
	uid_t uid;
	gid_t gid;

	(void)state;
	use("passwd: files\ngroup: systemd files\n");
	assert_int_equal(rg_account_uid("judge", &uid), 0);
	assert_int_equal(uid, 4000001);
	assert_int_equal(rg_account_gid("judges", &gid), -1);
	use("group: files\npasswd: systemd files\n");
	assert_int_equal(rg_account_gid("judges", &gid), 0);
	assert_int_equal(gid, 4000002);
	assert_int_equal(rg_account_uid("judge", &uid), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_first_reads_the_files),
		cmocka_unit_test(test_whole_names_only),
		cmocka_unit_test(test_misses_go_to_nss),
		cmocka_unit_test(test_other_source_first_uses_nss),
		cmocka_unit_test(test_each_database_its_own_answer),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
