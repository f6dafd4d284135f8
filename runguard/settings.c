/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <runguard/pool.h>

#include "base/base.h"
#include "parse.h"

void rg_cli_settings_defaults(struct rg_cli_settings *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->pool_dir, sizeof(s->pool_dir), "%s", RG_POOL_DIR_DEFAULT);
	s->favordynmods = false;
	/* resident slots: no cgroup attach or setns per run (pool.md) */
	s->keeper = true;
	s->v2_memory_peak = RG_POOL_V2_PEAK_SAMPLED;
	snprintf(s->size_from, sizeof(s->size_from), "default");
	snprintf(s->dir_from, sizeof(s->dir_from), "default");
}

static int set_pool_size(struct rg_cli_settings *s, const char *value,
			 const char *where, struct rg_error *err)
{
	long n;

	if (rg_parse_long(value, 0, RG_POOL_SIZE_MAX, &n))
		return rg_fail(err, 0, "%s: invalid pool size `%s' (0 to %d)",
			       where, value, RG_POOL_SIZE_MAX);
	s->pool_size = (unsigned int)n;
	snprintf(s->size_from, sizeof(s->size_from), "%s", where);
	return 0;
}

static int set_pool_dir(struct rg_cli_settings *s, const char *value,
			const char *where, struct rg_error *err)
{
	if (value[0] != '/' || strlen(value) >= sizeof(s->pool_dir) - 16)
		return rg_fail(err, 0,
			       "%s: pool directory `%s' must be an "
			       "absolute path",
			       where, value);
	snprintf(s->pool_dir, sizeof(s->pool_dir), "%s", value);
	snprintf(s->dir_from, sizeof(s->dir_from), "%s", where);
	return 0;
}

static int set_yes_no(bool *flag, const char *value, const char *where,
		      struct rg_error *err)
{
	if (!strcmp(value, "yes") || !strcmp(value, "true")) {
		*flag = true;
		return 0;
	}
	if (!strcmp(value, "no") || !strcmp(value, "false")) {
		*flag = false;
		return 0;
	}
	if (!rg_parse_on_off(value, flag))
		return 0;
	return rg_fail(err, 0, "%s: `%s' is not yes or no", where, value);
}

static int set_v2_memory_peak(struct rg_cli_settings *s, const char *value,
			      const char *where, struct rg_error *err)
{
	if (!strcmp(value, "sampled"))
		s->v2_memory_peak = RG_POOL_V2_PEAK_SAMPLED;
	else if (!strcmp(value, "exact"))
		s->v2_memory_peak = RG_POOL_V2_PEAK_EXACT;
	else
		return rg_fail(err, 0,
			       "%s: v2-memory-peak `%s' is not "
			       "sampled or exact",
			       where, value);
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int apply_line(struct rg_cli_settings *s, char *line, const char *where,
		      struct rg_error *err)
{
	char *eq, *key, *value;

	line[strcspn(line, "#")] = '\0';
	line = trim(line);
	if (!*line)
		return 0;
	eq = strchr(line, '=');
	if (!eq)
		return rg_fail(err, 0, "%s: expected `key = value'", where);
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!strcmp(key, "pool-size"))
		return set_pool_size(s, value, where, err);
	if (!strcmp(key, "pool-dir"))
		return set_pool_dir(s, value, where, err);
	if (!strcmp(key, "pool-keeper"))
		return set_yes_no(&s->keeper, value, where, err) ?
			       rg_fail_context(err, "pool-keeper") :
			       0;
	if (!strcmp(key, "v1-favordynmods"))
		return set_yes_no(&s->favordynmods, value, where, err) ?
			       rg_fail_context(err, "v1-favordynmods") :
			       0;
	if (!strcmp(key, "v2-memory-peak"))
		return set_v2_memory_peak(s, value, where, err);
	return rg_fail(err, 0, "%s: unknown setting `%s'", where, key);
}

int rg_cli_settings_parse(FILE *file, const char *name,
			  struct rg_cli_settings *s, struct rg_error *err)
{
	char line[PATH_MAX + 64], where[PATH_MAX + 32];
	unsigned int lineno = 0;

	while (fgets(line, sizeof(line), file)) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", name, lineno);
		if (!strchr(line, '\n') && !feof(file))
			return rg_fail(err, 0, "%s: line too long", where);
		if (apply_line(s, line, where, err) < 0)
			return -1;
	}
	if (ferror(file))
		return rg_fail(err, errno, "reading `%s'", name);
	return 0;
}

/*
 * The file says where the pool lives: one another user may write would
 * have root make and trust a pool where that user chooses. /dev/null is
 * "no settings", as tests and scripts use it.
 */
static int check_file(int fd, const char *path, struct rg_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return rg_fail(err, errno, "cannot read configuration `%s'",
			       path);
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
		return 0;
	if (S_ISREG(st.st_mode) && (st.st_uid == 0 || st.st_uid == geteuid()) &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	return rg_fail(err, EPERM,
		       "refusing configuration `%s' (uid %u, "
		       "mode %04o): it must be a file of root's that nobody "
		       "else may write",
		       path, (unsigned)st.st_uid,
		       (unsigned)(st.st_mode & 07777));
}

static int load_file(struct rg_cli_settings *s, struct rg_error *err)
{
	const char *path = getenv("RUNGUARD_CONFIG");
	bool explicit = path && *path;
	FILE *file;
	int fd, rc;

	if (!explicit)
		path = RG_CLI_CONFIG_FILE;
	/* not blocking: a FIFO there must not hold root up */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && !explicit)
			return 0;
		return rg_fail(err, errno, "cannot read configuration `%s'",
			       path);
	}
	if (check_file(fd, path, err) < 0) {
		close(fd);
		return -1;
	}
	file = fdopen(fd, "r");
	if (!file) {
		close(fd);
		return rg_fail(err, errno, "cannot read configuration `%s'",
			       path);
	}
	rc = rg_cli_settings_parse(file, path, s, err);
	fclose(file);
	return rc;
}

static int load_environment(struct rg_cli_settings *s, struct rg_error *err)
{
	const char *size = getenv("RUNGUARD_POOL_SIZE");
	const char *dir = getenv("RUNGUARD_POOL_DIR");
	const char *keeper = getenv("RUNGUARD_POOL_KEEPER");
	const char *peak = getenv("RUNGUARD_V2_MEMORY_PEAK");

	/* set but empty is an error, as an empty value in the file */
	if (size && set_pool_size(s, size, "RUNGUARD_POOL_SIZE", err))
		return -1;
	if (dir && set_pool_dir(s, dir, "RUNGUARD_POOL_DIR", err))
		return -1;
	if (keeper &&
	    set_yes_no(&s->keeper, keeper, "RUNGUARD_POOL_KEEPER", err))
		return -1;
	if (peak && set_v2_memory_peak(s, peak, "RUNGUARD_V2_MEMORY_PEAK", err))
		return -1;
	return 0;
}

int rg_cli_settings_load(const struct rg_cli_options *o,
			 struct rg_cli_settings *s, struct rg_error *err)
{
	rg_cli_settings_defaults(s);
	if (load_file(s, err) < 0 || load_environment(s, err) < 0)
		return -1;
	if (o->pool_size >= 0) {
		s->pool_size = (unsigned int)o->pool_size;
		snprintf(s->size_from, sizeof(s->size_from), "--pool-size");
	}
	if (o->pool_dir && set_pool_dir(s, o->pool_dir, "--pool-dir", err))
		return -1;
	if (o->pool_keeper &&
	    set_yes_no(&s->keeper, o->pool_keeper, "--pool-keeper", err))
		return -1;
	return 0;
}
