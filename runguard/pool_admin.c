/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool_admin.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

#include <runguard/pool.h>

#include "error.h"
#include "rg-build-config.h"

static const char *state_name(enum rg_pool_slot_state state)
{
	switch (state) {
	case RG_POOL_SLOT_HELD:
		return "held";
	case RG_POOL_SLOT_DIRTY:
		return "dirty";
	default:
		return "free";
	}
}

static void format_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", &tm))
		snprintf(buf, len, "-");
}

static void format_limit(const struct rg_pool_slot_info *s, char *buf,
			 size_t len)
{
	if (!s->settings_known)
		snprintf(buf, len, "-");
	else if (s->memory_limit == RG_UNLIMITED)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRIu64, s->memory_limit);
}

/* A pid, "-" for none (0), "busy" for alive but unknown (-1). */
static void format_pid(pid_t pid, char *buf, size_t size)
{
	if (pid > 0)
		snprintf(buf, size, "%d", (int)pid);
	else
		snprintf(buf, size, "%s", pid < 0 ? "busy" : "-");
}

static void print_slot(FILE *out, const char *dir,
		       const struct rg_pool_slot_info *s)
{
	char reset[40], limit[32], holder[16], keeper[16];
	struct rg_error ignored;
	pid_t keeper_pid;

	format_time(s->last_reset, reset, sizeof(reset));
	format_limit(s, limit, sizeof(limit));
	format_pid(s->holder, holder, sizeof(holder));
	if (rg_pool_slot_keeper(dir, s->index, &keeper_pid, &ignored) < 0)
		keeper_pid = 0;
	format_pid(keeper_pid, keeper, sizeof(keeper));
	fprintf(out, "%-5u %-6s %-8s %-8s %-8" PRIu64 " %-25s %-13s %s\n",
		s->index, state_name(s->state), holder, keeper, s->runs, reset,
		limit, s->settings_known && s->cpuset[0] ? s->cpuset : "-");
}

static int show(const char *dir, FILE *out, struct rg_error *err)
{
	struct rg_pool_slot_info *slots;
	struct rg_pool_info info;
	char created[40];

	if (rg_pool_show(dir, &info, &slots, err) < 0)
		return -1;
	format_time(info.created, created, sizeof(created));
	fprintf(out, "pool %s: %u slots, cgroup v%d, cgroups %s, created %s%s\n",
		dir, info.size, info.cgroup_version, info.cgroup_path, created,
		info.favordynmods ? ", favordynmods" : "");
	fprintf(out, "%-5s %-6s %-8s %-8s %-8s %-25s %-13s %s\n", "slot",
		"state", "holder", "keeper", "runs", "last-reset",
		"memory-limit", "cpuset");
	for (unsigned int i = 0; i < info.size; i++)
		print_slot(out, dir, &slots[i]);
	free(slots);
	return 0;
}

static int create(const struct rg_cli_settings *s, struct rg_error *err)
{
	struct rg_pool_options o = {
		.dir = s->pool_dir,
		.size = s->pool_size,
		.cgroup_parent = RG_CGROUP_PARENT,
		/* keepers attach once per slot, not per run (docs/pool.md) */
		.favordynmods = s->favordynmods && !s->keeper,
		.keepers = s->keeper,
	};

	if (s->pool_size == 0)
		return rg_fail(err, 0, "no pool size: give --pool-size, "
			       "RUNGUARD_POOL_SIZE or pool-size in the "
			       "configuration file");
	return rg_pool_create(&o, err);
}

static int prewarm(const struct rg_cli_options *o, FILE *out,
		   struct rg_error *err)
{
	struct rg_prewarm_stats stats;

	if (o->command_argc == 0)
		return rg_fail(err, 0, "--pool-prewarm needs at least one path");
	if (rg_pool_prewarm((const char *const *)o->command,
			    (size_t)o->command_argc, &stats, err) < 0)
		return -1;
	fprintf(out, "prewarmed %" PRIu64 " files, %" PRIu64 " bytes\n",
		stats.files, stats.bytes);
	return 0;
}

int rg_cli_pool_admin(const struct rg_cli_options *o,
		      const struct rg_cli_settings *s, const char *progname,
		      FILE *out, FILE *errors)
{
	struct rg_error err = { 0 };
	char text[sizeof(err.message) + 256];
	int rc;

	switch (o->pool_command) {
	case RG_CLI_POOL_CREATE:
		rc = create(s, &err);
		break;
	case RG_CLI_POOL_SHOW:
		rc = show(s->pool_dir, out, &err);
		break;
	case RG_CLI_POOL_DESTROY:
	case RG_CLI_POOL_DESTROY_FORCE:
		rc = rg_pool_destroy(s->pool_dir,
				     o->pool_command == RG_CLI_POOL_DESTROY_FORCE,
				     &err);
		break;
	case RG_CLI_POOL_PREWARM:
		rc = prewarm(o, out, &err);
		break;
	default:
		rc = 0;
	}
	if (rc == 0)
		return 0;
	fprintf(errors, "%s: %s\n", progname,
		rg_error_format(&err, text, sizeof(text)));
	return 1;
}
