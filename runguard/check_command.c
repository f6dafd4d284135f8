/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check_command.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <runguard/check.h>

#include "check_format.h"
#include "base/base.h"
#include "rg-build-config.h"
#include "settings.h"
#include "users.h"

#define EXIT_INTERNAL 255

struct check_input {
	struct rg_cli_settings settings;
	struct rg_error settings_err;
	bool settings_failed;
	char pool_source[2 * PATH_MAX + 96];
};

/* A broken configuration is an item of the report, not the end. */
static void load_settings(const struct rg_cli_options *o,
			  struct check_input *in)
{
	if (rg_cli_settings_load(o, &in->settings, &in->settings_err) < 0) {
		in->settings_failed = true;
		rg_cli_settings_defaults(&in->settings);
	}
	snprintf(in->pool_source, sizeof(in->pool_source),
		 "pool-size from %s, pool-dir from %s", in->settings.size_from,
		 in->settings.dir_from);
}

static int add_settings_item(struct rg_check_report *r,
			     const struct check_input *in, struct rg_error *err)
{
	char text[sizeof(in->settings_err.message) + 256];

	if (!in->settings_failed)
		return 0;
	/* EPERM: the file's owner or mode (settings.c), not a line of it */
	return rg_check_report_add(
		r, "settings", RG_CHECK_ERROR,
		rg_error_format(&in->settings_err, text, sizeof(text)),
		in->settings_err.errnum == EPERM ?
			"chown root FILE; chmod go-w FILE; the check went on with the defaults" :
			"correct that line or variable (keys: pool-size, pool-dir, pool-keeper, v1-favordynmods, v2-memory-peak); the check went on with the defaults",
		err);
}

/*
 * -u as the build's VALID_USERS admits it (a name -u did not resolve is
 * the library's user item already).
 */
static int add_valid_users_item(struct rg_check_report *r,
				const struct rg_cli_options *o,
				struct rg_error *err)
{
	char text[sizeof(err->message) + 256];
	struct rg_error why = { 0 };

	if (!o->user || o->uid == (uid_t)-1)
		return 0;
	if (rg_cli_check_valid_user(o->uid, o->user, RG_VALID_USERS, &why) == 0)
		return rg_check_report_add(r, "valid-users", RG_CHECK_OK,
					   "admitted by VALID_USERS (" RG_VALID_USERS
					   ")",
					   NULL, err);
	return rg_check_report_add(r, "valid-users", RG_CHECK_ERROR,
				   rg_error_format(&why, text, sizeof(text)),
				   "use a user VALID_USERS (" RG_VALID_USERS
				   ") admits, or rebuild with -Dvalid_users=...",
				   err);
}

/*
 * -g, which the library's user items do not know; without -g the build's
 * RUNGROUP, which DOMjudge passes as -g to every run.
 */
static int add_group_item(struct rg_check_report *r,
			  const struct rg_cli_options *o, struct rg_error *err)
{
	const char *group = o->group ? o->group : RG_RUNGROUP;
	char item[300], fix[300], text[sizeof(err->message) + 256];
	struct rg_error why = { 0 };
	gid_t gid;

	snprintf(item, sizeof(item), "group.%s", group);
	if (rg_cli_resolve_group(group, &gid, &why) == 0) {
		snprintf(text, sizeof(text), "gid %u%s", (unsigned int)gid,
			 o->group ? "" :
				    " (RUNGROUP: DOMjudge runs with -g "
				    "it)");
		return rg_check_report_add(r, item, RG_CHECK_OK, text, NULL,
					   err);
	}
	snprintf(fix, sizeof(fix), "groupadd %s", group);
	return rg_check_report_add(r, item, RG_CHECK_ERROR,
				   rg_error_format(&why, text, sizeof(text)),
				   fix, err);
}

static void fill_options(const struct rg_cli_options *o,
			 const struct check_input *in,
			 struct rg_check_options *co)
{
	memset(co, 0, sizeof(*co));
	co->struct_size = sizeof(*co);
	co->cgroup_parent = RG_CGROUP_PARENT;
	co->want_cpuset = o->cpuset && *o->cpuset;
	co->chroot_prefix = RG_CHROOT_PREFIX;
	co->run_users = o->user ? o->user : RG_VALID_USERS;
	co->pool_dir = in->settings.pool_dir;
	co->pool_size = in->settings.pool_size;
	co->pool_keepers = in->settings.keeper;
	co->pool_source = in->pool_source;
}

int rg_cli_check(const struct rg_cli_options *o, const char *progname,
		 FILE *out, FILE *errors)
{
	struct rg_check_report *report = NULL;
	struct rg_check_options co;
	struct rg_error err = { 0 };
	struct check_input in = { 0 };
	char text[sizeof(err.message) + 256];
	int status;

	load_settings(o, &in);
	fill_options(o, &in, &co);
	if (rg_check(&co, &report, &err) < 0 ||
	    add_settings_item(report, &in, &err) < 0 ||
	    add_group_item(report, o, &err) < 0 ||
	    add_valid_users_item(report, o, &err) < 0) {
		fprintf(errors, "%s: %s\n", progname,
			rg_error_format(&err, text, sizeof(text)));
		rg_check_report_free(report);
		return EXIT_INTERNAL;
	}
	if (o->json)
		rg_cli_check_print_json(out, report);
	else
		rg_cli_check_print_text(out, report);
	status = rg_cli_check_exit_status(report);
	rg_check_report_free(report);
	return status;
}
