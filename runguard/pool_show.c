/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool_show.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <runguard/pool.h>

#include "base/base.h"
#include "json.h"

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

/* ISO 8601 in local time; false for "never" (0) */
static bool format_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	return t > 0 && localtime_r(&tt, &tm) &&
	       strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

/* The keeper as the keeper answers: a pid, 0 none, -1 alive but busy. */
static pid_t slot_keeper(const char *dir, unsigned int index)
{
	struct rg_error ignored;
	pid_t pid;

	return rg_pool_slot_keeper(dir, index, &pid, &ignored) < 0 ? 0 : pid;
}

/* /proc/stat's btime: seconds since the epoch at boot, 0 if unknown. */
static int64_t boot_time(void)
{
	char line[256];
	long long btime = 0;
	FILE *f = fopen("/proc/stat", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	if (f)
		fclose(f);
	return btime;
}

/*
 * When pid started (seconds since the epoch; 0 if unknown): boot time
 * plus its stat's starttime (field 22, clock ticks after boot), the same
 * second on every call, where "now minus uptime" could straddle one.
 */
static int64_t process_started(pid_t pid)
{
	unsigned long long ticks = 0;
	char path[64], buf[1024], *p;
	int64_t booted;
	int field = 3;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	if (f)
		fclose(f);
	for (p = p ? strchr(p, ' ') : NULL; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &ticks) != 1)
		return 0;
	booted = boot_time();
	if (!booted)
		return 0;
	return booted +
	       (int64_t)(ticks / (unsigned long long)sysconf(_SC_CLK_TCK));
}

/* -- the table ------------------------------------------------------- */

static void format_pid(pid_t pid, char *buf, size_t size)
{
	if (pid > 0)
		snprintf(buf, size, "%d", (int)pid);
	else
		snprintf(buf, size, "%s", pid < 0 ? "busy" : "-");
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

static void table_slot(FILE *out, const char *dir,
		       const struct rg_pool_slot_info *s)
{
	char reset[40] = "-", since[40] = "-", limit[32], holder[16];
	char keeper[16];
	pid_t pid = slot_keeper(dir, s->index);

	format_time(s->last_reset, reset, sizeof(reset));
	if (pid > 0)
		format_time(process_started(pid), since, sizeof(since));
	format_limit(s, limit, sizeof(limit));
	format_pid(s->holder, holder, sizeof(holder));
	format_pid(pid, keeper, sizeof(keeper));
	fprintf(out,
		"%-5u %-6s %-8s %-8s %-25s %-8" PRIu64 " %-25s %-13s "
		"%s\n",
		s->index, state_name(s->state), holder, keeper, since, s->runs,
		reset, limit,
		s->settings_known && s->cpuset[0] ? s->cpuset : "-");
}

static void table(FILE *out, const char *dir, const struct rg_pool_info *info,
		  const struct rg_pool_slot_info *slots)
{
	char created[40] = "-";

	format_time(info->created, created, sizeof(created));
	fprintf(out,
		"pool %s: %u slots, cgroup v%d, cgroups %s, created %s%s\n",
		dir, info->size, info->cgroup_version, info->cgroup_path,
		created, info->favordynmods ? ", favordynmods" : "");
	fprintf(out, "%-5s %-6s %-8s %-8s %-25s %-8s %-25s %-13s %s\n", "slot",
		"state", "holder", "keeper", "keeper-since", "runs",
		"last-reset", "memory-limit", "cpuset");
	for (unsigned int i = 0; i < info->size; i++)
		table_slot(out, dir, &slots[i]);
}

/* -- JSON ------------------------------------------------------------ */

/* A time as a JSON string, null for never. */
static void json_time(FILE *out, int64_t t)
{
	char buf[40];

	if (format_time(t, buf, sizeof(buf)))
		rg_cli_json_string(out, buf);
	else
		fputs("null", out);
}

static void json_keeper(FILE *out, pid_t pid)
{
	if (pid > 0) {
		fprintf(out,
			"\"keeper\": %d, \"keeper_state\": \"alive\", "
			"\"keeper_since\": ",
			(int)pid);
		json_time(out, process_started(pid));
	} else {
		fprintf(out,
			"\"keeper\": null, \"keeper_state\": \"%s\", "
			"\"keeper_since\": null",
			pid < 0 ? "busy" : "none");
	}
}

/* Unknown settings and "no limit" are null; settings_known tells which. */
static void json_settings(FILE *out, const struct rg_pool_slot_info *s)
{
	fprintf(out, "\"settings_known\": %s, \"memory_limit\": ",
		s->settings_known ? "true" : "false");
	if (s->settings_known && s->memory_limit != RG_UNLIMITED)
		fprintf(out, "%" PRIu64, s->memory_limit);
	else
		fputs("null", out);
	fputs(", \"cpuset\": ", out);
	if (s->settings_known && s->cpuset[0])
		rg_cli_json_string(out, s->cpuset);
	else
		fputs("null", out);
}

static void json_slot(FILE *out, const char *dir,
		      const struct rg_pool_slot_info *s)
{
	fprintf(out,
		"    {\"slot\": %u, \"state\": \"%s\", \"holder\": ", s->index,
		state_name(s->state));
	if (s->holder > 0)
		fprintf(out, "%d", (int)s->holder);
	else
		fputs("null", out);
	fputs(", ", out);
	json_keeper(out, slot_keeper(dir, s->index));
	fprintf(out, ", \"runs\": %" PRIu64 ", \"last_reset\": ", s->runs);
	json_time(out, s->last_reset);
	fputs(", ", out);
	json_settings(out, s);
	fputc('}', out);
}

static void json(FILE *out, const char *dir, const struct rg_pool_info *info,
		 const struct rg_pool_slot_info *slots)
{
	fputs("{\n  \"dir\": ", out);
	rg_cli_json_string(out, dir);
	fprintf(out,
		",\n  \"size\": %u,\n  \"cgroup_version\": %d,\n"
		"  \"cgroup_path\": ",
		info->size, info->cgroup_version);
	rg_cli_json_string(out, info->cgroup_path);
	fputs(",\n  \"created\": ", out);
	json_time(out, info->created);
	fprintf(out, ",\n  \"favordynmods\": %s,\n  \"slots\": [",
		info->favordynmods ? "true" : "false");
	for (unsigned int i = 0; i < info->size; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_slot(out, dir, &slots[i]);
	}
	fputs(info->size ? "\n  ]\n}\n" : "]\n}\n", out);
}

int rg_cli_pool_show(const char *dir, bool as_json, FILE *out,
		     struct rg_error *err)
{
	struct rg_pool_info info = RG_POOL_INFO_INIT;
	struct rg_pool_slot_info *slots;

	if (rg_pool_show(dir, &info, &slots, sizeof(*slots), err) < 0)
		return -1;
	if (as_json)
		json(out, dir, &info, slots);
	else
		table(out, dir, &info, slots);
	free(slots);
	return 0;
}
