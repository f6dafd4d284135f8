/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* -u / -g resolution and the build-time VALID_USERS check. */
#ifndef RG_CLI_USERS_H
#define RG_CLI_USERS_H

#include <stdbool.h>
#include <sys/types.h>

#include <runguard/runguard.h>

/* DOMjudge's user name rule: ^[A-Za-z][A-Za-z0-9._-]*$ */
bool rg_cli_username_ok(const char *name);

/* -u: a whole-string decimal uid, else an existing user name. */
int rg_cli_resolve_user(const char *arg, uid_t *uid, struct rg_error *err);

/* -g: a whole-string decimal gid, else an existing group name. */
int rg_cli_resolve_group(const char *arg, gid_t *gid, struct rg_error *err);

/*
 * The group used for -u without -g: the group named like the -u string
 * (DOMjudge does the same, even when -u was numeric).
 */
int rg_cli_default_group(const char *user_arg, gid_t *gid,
			 struct rg_error *err);

/*
 * VALID_USERS: patterns is a comma-separated list. uid passes when it is
 * the uid of the user a pattern names literally, or when user_arg matches
 * a pattern with fnmatch(pattern, user_arg, 0). uid 0 never passes.
 */
int rg_cli_check_valid_user(uid_t uid, const char *user_arg,
			    const char *patterns, struct rg_error *err);

#endif
