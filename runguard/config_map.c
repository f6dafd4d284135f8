/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config_map.h"

#include <limits.h>

#include "rg-build-config.h"

static int map_command(const struct rg_cli_options *o, struct rg_config *cfg,
		       struct rg_error *err)
{
	return rg_config_set_command(cfg, o->command[0], o->command, err);
}

/* -d means something only inside a new root: ignored without -r. */
static int map_root(const struct rg_cli_options *o, struct rg_config *cfg,
		    struct rg_error *err)
{
	if (!o->root)
		return 0;
	if (rg_config_set_root_prefix(cfg, RG_CHROOT_PREFIX, err) ||
	    rg_config_set_root(cfg, o->root, err))
		return -1;
	if (o->workdir && rg_config_set_workdir(cfg, o->workdir, err))
		return -1;
	return 0;
}

static int map_identity(const struct rg_cli_options *o, struct rg_config *cfg,
			struct rg_error *err)
{
	if (o->user && rg_config_set_user(cfg, o->uid, err))
		return -1;
	if (o->has_gid && rg_config_set_group(cfg, o->gid, err))
		return -1;
	return 0;
}

static int map_time(const struct rg_cli_options *o, struct rg_config *cfg,
		    struct rg_error *err)
{
	if (o->has_wall_limit &&
	    rg_config_set_wall_limit(cfg, o->wall_soft, o->wall_hard, err))
		return -1;
	if (o->has_cpu_limit &&
	    rg_config_set_cpu_limit(cfg, o->cpu_soft, o->cpu_hard, err))
		return -1;
	return 0;
}

/* A kB value that overflowed means "unlimited", i.e. no limit at all. */
static int map_resources(const struct rg_cli_options *o, struct rg_config *cfg,
			 struct rg_error *err)
{
	if (o->has_memory_limit && o->memory_bytes != RG_UNLIMITED &&
	    rg_config_set_memory_limit(cfg, o->memory_bytes, err))
		return -1;
	if (o->has_file_limit && o->file_bytes != RG_UNLIMITED &&
	    rg_config_set_file_limit(cfg, o->file_bytes, err))
		return -1;
	if (o->has_process_limit &&
	    rg_config_set_process_limit(cfg, o->processes, err))
		return -1;
	if (o->cpuset && *o->cpuset && rg_config_set_cpuset(cfg, o->cpuset, err))
		return -1;
	/* -c wins over --allow-core-dumps: it asks for less. */
	rg_config_set_core_dumps(cfg, o->allow_core_dumps && !o->no_core);
	return 0;
}

static int map_streams(const struct rg_cli_options *o, struct rg_config *cfg,
		       struct rg_error *err)
{
	if (o->stdout_file &&
	    rg_config_set_output_file(cfg, RG_STDOUT, o->stdout_file, err))
		return -1;
	if (o->stderr_file &&
	    rg_config_set_output_file(cfg, RG_STDERR, o->stderr_file, err))
		return -1;
	if (o->has_stream_limit)
		rg_config_set_stream_limit(cfg, o->stream_bytes);
	return 0;
}

static int map_environment(const struct rg_cli_options *o,
			   struct rg_config *cfg, struct rg_error *err)
{
	rg_config_set_keep_environment(cfg, o->keep_environment);
	for (size_t i = 0; i < o->env_len; i++)
		if (rg_config_add_environment(cfg, o->env[i], err))
			return -1;
	return 0;
}

static void map_process(const struct rg_cli_options *o, struct rg_config *cfg)
{
	/* DOMjudge signals the runpipe only for a positive pid. */
	if (o->notify_pid > 0 && o->notify_pid <= INT_MAX)
		rg_config_set_timeout_notify_pid(cfg, (pid_t)o->notify_pid);
	rg_config_set_syscall_filter(cfg, o->syscall_filter);
	/* We have no other children: reap every escaped descendant. */
	rg_config_set_reap_all_children(cfg, true);
	rg_config_set_handle_signals(cfg, true);
}

int rg_cli_build_config(const struct rg_cli_options *o, struct rg_config *cfg,
			struct rg_error *err)
{
	if (map_command(o, cfg, err) || map_root(o, cfg, err) ||
	    map_identity(o, cfg, err) || map_time(o, cfg, err) ||
	    map_resources(o, cfg, err) || map_streams(o, cfg, err) ||
	    map_environment(o, cfg, err))
		return -1;
	map_process(o, cfg);
	return 0;
}

void rg_cli_meta_options(const struct rg_cli_options *o,
			 struct rg_meta_options *meta)
{
	*meta = (struct rg_meta_options){
		.struct_size = sizeof(*meta),
		.time_used = o->time_used,
		.stream_limit_given = o->has_stream_limit,
		/* memory-method after DOMjudge's keys, which ignore it */
		.extra_keys = true,
	};
}
