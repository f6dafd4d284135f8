/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration behind the opaque struct rg_config. */
#ifndef RG_CONFIG_H
#define RG_CONFIG_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <runguard/runguard.h>

#include "base/log_sink.h"

struct rg_output {
	char *path; /* created at run start, or NULL */
	int fd;	    /* used when path is NULL */
};

struct rg_config {
	char *file;
	char **argv;

	char *root;
	char *root_prefix;
	char *workdir;

	bool has_uid, has_gid;
	uid_t uid;
	gid_t gid;

	bool has_wall_limit, has_cpu_limit;
	double wall_soft, wall_hard;
	double cpu_soft, cpu_hard;

	uint64_t memory_limit;
	uint64_t file_limit;
	uint64_t process_limit;
	char *cpuset;
	cpu_set_t cpuset_mask; /* the same CPUs, for the child's affinity */
	bool core_dumps;

	struct rg_output output[2];
	struct rg_output input; /* the command's stdin, opened read-only */
	uint64_t stream_limit;

	bool keep_environment;
	char **env_changes;
	size_t env_changes_len;

	pid_t timeout_notify_pid;
	bool syscall_filter;
	double kill_grace;
	char *cgroup_parent;
	char *pool_dir;		/* NULL: RG_POOL_DIR_DEFAULT */
	unsigned int pool_size; /* 0: a transient slot per run */
	bool pool_favordynmods;
	bool pool_keeper; /* resident slots (keeper.h) */
	/* v2 5.19-6.11: a memory cgroup per run (rg_pool_v2_memory_peak) */
	bool pool_v2_exact_peak;
	bool handle_signals;
	int cancel_fd;
	bool reap_all_children;

	struct rg_log_sink log;
};

/*
 * cfg's plain data, for a process that has none of its pointers, fds or
 * callbacks (a resident slot's runner, keeper_wire.h): all cleared. A
 * field of that kind added above must be cleared here too; the size check
 * stops the build until this function has been looked at.
 */
static inline void rg_config_plain(const struct rg_config *in,
				   struct rg_config *out)
{
#if defined(__x86_64__) && defined(__LP64__)
	_Static_assert(sizeof(struct rg_config) == 408,
		       "struct rg_config changed: review rg_config_plain()");
#endif
	*out = *in;
	out->file = out->root = out->root_prefix = out->workdir = NULL;
	out->argv = NULL;
	out->cpuset = NULL;
	for (int i = 0; i < 2; i++)
		out->output[i] = (struct rg_output){ .path = NULL, .fd = -1 };
	out->input = (struct rg_output){ .path = NULL, .fd = -1 };
	out->env_changes = NULL;
	out->env_changes_len = 0;
	out->cgroup_parent = out->pool_dir = NULL;
	out->cancel_fd = -1;
	out->log.fn = NULL; /* its level stays */
	out->log.data = NULL;
}

void rg_log(const struct rg_config *cfg, enum rg_log_level level,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
