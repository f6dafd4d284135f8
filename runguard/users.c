/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "users.h"

#include <errno.h>
#include <fnmatch.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accounts.h"
#include "base/base.h"

/* (uid_t)-1 and (gid_t)-1 mean "no change" to the kernel: never valid. */
#define RG_MAX_ID ((long)UINT32_MAX - 1)

static bool is_alpha(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* ASCII only, whatever the locale says. */
bool rg_cli_username_ok(const char *name)
{
	if (!is_alpha(name[0]))
		return false;
	for (const char *p = name + 1; *p; p++) {
		if (!is_alpha(*p) && !(*p >= '0' && *p <= '9') && *p != '.' &&
		    *p != '_' && *p != '-')
			return false;
	}
	return true;
}

/*
 * 1 and the value if the whole string is a decimal long (strtol rules, as
 * DOMjudge), 0 if it is not a number at all.
 */
static int numeric_id(const char *arg, long *value)
{
	char *stop;

	errno = 0;
	*value = strtol(arg, &stop, 10);
	return !errno && stop != arg && *stop == '\0';
}

static bool id_in_range(long value)
{
	return value >= 0 && value <= RG_MAX_ID;
}

int rg_cli_resolve_user(const char *arg, uid_t *uid, struct rg_error *err)
{
	long value;

	if (numeric_id(arg, &value)) {
		if (!id_in_range(value))
			goto invalid;
		*uid = (uid_t)value;
		return 0;
	}
	if (!rg_cli_username_ok(arg))
		return rg_fail(err, 0,
			       "username `%s' does not match the POSIX pattern",
			       arg);
	if (rg_account_uid(arg, uid) < 0)
		goto invalid;
	return 0;
invalid:
	return rg_fail(err, 0, "invalid username or ID specified: `%s'", arg);
}

static int lookup_group(const char *name, gid_t *gid)
{
	return rg_account_gid(name, gid);
}

int rg_cli_resolve_group(const char *arg, gid_t *gid, struct rg_error *err)
{
	long value;

	if (numeric_id(arg, &value)) {
		if (!id_in_range(value))
			goto invalid;
		*gid = (gid_t)value;
		return 0;
	}
	if (*arg && lookup_group(arg, gid) == 0)
		return 0;
invalid:
	return rg_fail(err, 0, "invalid groupname or ID specified: `%s'", arg);
}

int rg_cli_default_group(const char *user_arg, gid_t *gid, struct rg_error *err)
{
	if (lookup_group(user_arg, gid) == 0)
		return 0;
	return rg_fail(err, 0,
		       "invalid groupname or ID specified: no group named `%s' (the default group for user `%s'); use --group",
		       user_arg, user_arg);
}

/* Does a VALID_USERS pattern match the name as given? 1, 0, -1 error. */
static int pattern_matches(const char *pattern, const char *user_arg,
			   struct rg_error *err)
{
	/* No FNM_PATHNAME: '*' also matches '/', as in DOMjudge. */
	int ret = fnmatch(pattern, user_arg, 0);

	if (ret == 0)
		return 1;
	if (ret != FNM_NOMATCH)
		return rg_fail(err, 0, "matching username `%s' against `%s'",
			       user_arg, pattern);
	return 0;
}

/* Is a VALID_USERS pattern the name of this user's account? */
static int pattern_names_uid(const char *pattern, uid_t uid,
			     const char *user_arg, struct rg_error *err)
{
	uid_t named;

	(void)user_arg;
	(void)err;
	/*
	 * A glob is no username: asking NSS for one would only miss in every
	 * source (loading modules and asking daemons on the way).
	 */
	if (!rg_cli_username_ok(pattern))
		return 0;
	return rg_account_uid(pattern, &named) == 0 && named == uid;
}

typedef int (*pattern_test)(const char *pattern, uid_t uid,
			    const char *user_arg, struct rg_error *err);

static int match_test(const char *pattern, uid_t uid, const char *user_arg,
		      struct rg_error *err)
{
	(void)uid;
	return pattern_matches(pattern, user_arg, err);
}

/* 1 if a pattern of the list passes the test, 0 if none, -1 on error. */
static int any_pattern(const char *patterns, pattern_test test, uid_t uid,
		       const char *user_arg, struct rg_error *err)
{
	char *list, *pattern, *save = NULL;
	int ret = 0;

	list = strdup(patterns);
	if (!list)
		return rg_fail(err, errno, "copying the valid users list");
	/* strtok semantics: empty patterns are skipped. */
	for (pattern = strtok_r(list, ",", &save); pattern && ret == 0;
	     pattern = strtok_r(NULL, ",", &save))
		ret = test(pattern, uid, user_arg, err);
	free(list);
	return ret;
}

int rg_cli_check_valid_user(uid_t uid, const char *user_arg,
			    const char *patterns, struct rg_error *err)
{
	int ret;

	if (uid == 0)
		goto illegal;
	/*
	 * DOMjudge admits a user that a pattern matches by name or that a
	 * pattern names. Names first: they need no account lookups, which
	 * miss (and are slow) for every pattern naming no account.
	 */
	ret = any_pattern(patterns, match_test, uid, user_arg, err);
	if (ret == 0)
		ret = any_pattern(patterns, pattern_names_uid, uid, user_arg,
				  err);
	if (ret < 0)
		return -1;
	if (ret > 0)
		return 0;
illegal:
	return rg_fail(err, 0, "illegal user specified: %u", (unsigned int)uid);
}
