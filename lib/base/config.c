/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration handle and its setters: validation happens here, so a
 * run never starts with a value the kernel would reject half-way. */
#include "base/config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cpuset.h"
#include "base/error.h"
#include "rg-build-config.h"
#include <runguard/pool.h>

static int replace_string(char **slot, const char *value, struct rg_error *err)
{
	char *copy = NULL;

	if (value) {
		copy = strdup(value);
		if (!copy)
			return rg_fail(err, errno, "copying a setting");
	}
	free(*slot);
	*slot = copy;
	return 0;
}

struct rg_config *rg_config_new(struct rg_error *err)
{
	struct rg_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg) {
		rg_fail(err, errno, "allocating the configuration");
		return NULL;
	}
	cfg->memory_limit = RG_UNLIMITED;
	cfg->file_limit = RG_UNLIMITED;
	cfg->process_limit = RG_UNLIMITED;
	cfg->stream_limit = RG_UNLIMITED;
	cfg->output[RG_STDOUT].fd = STDOUT_FILENO;
	cfg->output[RG_STDERR].fd = STDERR_FILENO;
	cfg->input.fd = STDIN_FILENO;
	cfg->syscall_filter = true;
	cfg->kill_grace = 0.1;
	cfg->handle_signals = true;
	cfg->pool_keeper = true;
	cfg->cancel_fd = -1;
	cfg->log.max = RG_LOG_WARNING;
	if (replace_string(&cfg->cgroup_parent, RG_CGROUP_PARENT, err) < 0) {
		free(cfg);
		return NULL;
	}
	return cfg;
}

static void free_vector(char **vec)
{
	if (!vec)
		return;
	for (char **p = vec; *p; p++)
		free(*p);
	free(vec);
}

void rg_config_free(struct rg_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->file);
	free_vector(cfg->argv);
	free(cfg->root);
	free(cfg->root_prefix);
	free(cfg->workdir);
	free(cfg->cpuset);
	free(cfg->output[RG_STDOUT].path);
	free(cfg->output[RG_STDERR].path);
	free(cfg->input.path);
	for (size_t i = 0; i < cfg->env_changes_len; i++)
		free(cfg->env_changes[i]);
	free(cfg->env_changes);
	free(cfg->cgroup_parent);
	free(cfg->pool_dir);
	free(cfg);
}

int rg_config_set_command(struct rg_config *cfg, const char *file,
			  char *const argv[], struct rg_error *err)
{
	size_t n = 0;
	char **copy;

	if (!file || !*file || !argv || !argv[0])
		return rg_fail(err, EINVAL, "no command specified");
	while (argv[n])
		n++;
	copy = calloc(n + 1, sizeof(*copy));
	if (!copy)
		return rg_fail(err, errno, "copying the command");
	for (size_t i = 0; i < n; i++) {
		copy[i] = strdup(argv[i]);
		if (!copy[i]) {
			free_vector(copy);
			return rg_fail(err, ENOMEM, "copying the command");
		}
	}
	if (replace_string(&cfg->file, file, err) < 0) {
		free_vector(copy);
		return -1;
	}
	free_vector(cfg->argv);
	cfg->argv = copy;
	return 0;
}

int rg_config_set_root(struct rg_config *cfg, const char *dir,
		       struct rg_error *err)
{
	if (dir && !*dir)
		return rg_fail(err, EINVAL, "empty root directory");
	return replace_string(&cfg->root, dir, err);
}

int rg_config_set_root_prefix(struct rg_config *cfg, const char *prefix,
			      struct rg_error *err)
{
	return replace_string(&cfg->root_prefix, prefix, err);
}

int rg_config_set_workdir(struct rg_config *cfg, const char *dir,
			  struct rg_error *err)
{
	return replace_string(&cfg->workdir, dir, err);
}

int rg_config_set_user(struct rg_config *cfg, uid_t uid, struct rg_error *err)
{
	if (uid == 0 || uid == (uid_t)-1)
		return rg_fail(err, EINVAL, "illegal user specified");
	cfg->has_uid = true;
	cfg->uid = uid;
	return 0;
}

int rg_config_set_group(struct rg_config *cfg, gid_t gid, struct rg_error *err)
{
	if (gid == (gid_t)-1)
		return rg_fail(err, EINVAL, "illegal group specified");
	cfg->has_gid = true;
	cfg->gid = gid;
	return 0;
}

static int check_time_pair(double soft, double hard, const char *what,
			   struct rg_error *err)
{
	if (!isfinite(soft) || !isfinite(hard) || soft <= 0 || hard < soft)
		return rg_fail(err, EINVAL,
			       "invalid %s limit: need 0 < soft <= hard", what);
	return 0;
}

int rg_config_set_wall_limit(struct rg_config *cfg, double soft, double hard,
			     struct rg_error *err)
{
	if (check_time_pair(soft, hard, "wall time", err) < 0)
		return -1;
	cfg->has_wall_limit = true;
	cfg->wall_soft = soft;
	cfg->wall_hard = hard;
	return 0;
}

int rg_config_set_cpu_limit(struct rg_config *cfg, double soft, double hard,
			    struct rg_error *err)
{
	if (check_time_pair(soft, hard, "cpu time", err) < 0)
		return -1;
	/* RLIMIT_CPU works in whole seconds: ceil(hard) must fit. */
	if (hard > 1e9)
		return rg_fail(err, EINVAL, "cpu time limit too large");
	cfg->has_cpu_limit = true;
	cfg->cpu_soft = soft;
	cfg->cpu_hard = hard;
	return 0;
}

int rg_config_set_memory_limit(struct rg_config *cfg, uint64_t bytes,
			       struct rg_error *err)
{
	if (bytes == 0)
		return rg_fail(err, EINVAL, "memory limit must be positive");
	cfg->memory_limit = bytes;
	return 0;
}

int rg_config_set_file_limit(struct rg_config *cfg, uint64_t bytes,
			     struct rg_error *err)
{
	if (bytes == 0)
		return rg_fail(err, EINVAL, "file size limit must be positive");
	cfg->file_limit = bytes;
	return 0;
}

int rg_config_set_process_limit(struct rg_config *cfg, uint64_t count,
				struct rg_error *err)
{
	if (count == 0)
		return rg_fail(err, EINVAL, "process limit must be positive");
	cfg->process_limit = count;
	return 0;
}

int rg_config_set_cpuset(struct rg_config *cfg, const char *cpus,
			 struct rg_error *err)
{
	if (cpus && *cpus &&
	    (rg_cpuset_validate(cpus, NULL, err) < 0 ||
	     rg_cpuset_to_mask(cpus, &cfg->cpuset_mask, err) < 0))
		return -1;
	return replace_string(&cfg->cpuset, cpus && *cpus ? cpus : NULL, err);
}

void rg_config_set_core_dumps(struct rg_config *cfg, bool allow)
{
	cfg->core_dumps = allow;
}

int rg_config_set_output_file(struct rg_config *cfg, enum rg_stream_id stream,
			      const char *path, struct rg_error *err)
{
	if (stream != RG_STDOUT && stream != RG_STDERR)
		return rg_fail(err, EINVAL, "invalid stream");
	return replace_string(&cfg->output[stream].path, path, err);
}

int rg_config_set_output_fd(struct rg_config *cfg, enum rg_stream_id stream,
			    int fd, struct rg_error *err)
{
	if (stream != RG_STDOUT && stream != RG_STDERR)
		return rg_fail(err, EINVAL, "invalid stream");
	if (fd < 0)
		return rg_fail(err, EBADF, "invalid output fd");
	free(cfg->output[stream].path);
	cfg->output[stream].path = NULL;
	cfg->output[stream].fd = fd;
	return 0;
}

int rg_config_set_input_file(struct rg_config *cfg, const char *path,
			     struct rg_error *err)
{
	return replace_string(&cfg->input.path, path, err);
}

int rg_config_set_input_fd(struct rg_config *cfg, int fd, struct rg_error *err)
{
	if (fd < RG_INPUT_CLOSED)
		return rg_fail(err, EBADF, "invalid input fd");
	free(cfg->input.path);
	cfg->input.path = NULL;
	cfg->input.fd = fd;
	return 0;
}

void rg_config_set_stream_limit(struct rg_config *cfg, uint64_t bytes)
{
	cfg->stream_limit = bytes;
}

void rg_config_set_keep_environment(struct rg_config *cfg, bool keep)
{
	cfg->keep_environment = keep;
}

int rg_config_add_environment(struct rg_config *cfg, const char *assignment,
			      struct rg_error *err)
{
	char **grown;
	char *copy;

	if (!assignment || !*assignment || assignment[0] == '=')
		return rg_fail(err, EINVAL, "invalid environment variable `%s'",
			       assignment ? assignment : "");
	copy = strdup(assignment);
	if (!copy)
		return rg_fail(err, errno, "copying an environment variable");
	grown = realloc(cfg->env_changes,
			(cfg->env_changes_len + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return rg_fail(err, errno, "copying an environment variable");
	}
	grown[cfg->env_changes_len++] = copy;
	cfg->env_changes = grown;
	return 0;
}

void rg_config_set_timeout_notify_pid(struct rg_config *cfg, pid_t pid)
{
	cfg->timeout_notify_pid = pid;
}

void rg_config_set_syscall_filter(struct rg_config *cfg, bool enabled)
{
	cfg->syscall_filter = enabled;
}

int rg_config_set_kill_grace(struct rg_config *cfg, double seconds,
			     struct rg_error *err)
{
	if (!isfinite(seconds) || seconds < 0 || seconds > 60)
		return rg_fail(err, EINVAL, "kill grace must be 0..60 s");
	cfg->kill_grace = seconds;
	return 0;
}

int rg_config_set_cgroup_parent(struct rg_config *cfg, const char *name,
				struct rg_error *err)
{
	if (!name || !*name || name[0] == '/' || strstr(name, ".."))
		return rg_fail(err, EINVAL, "invalid cgroup parent `%s'",
			       name ? name : "");
	return replace_string(&cfg->cgroup_parent, name, err);
}

void rg_config_set_handle_signals(struct rg_config *cfg, bool handle)
{
	cfg->handle_signals = handle;
}

void rg_config_set_cancel_fd(struct rg_config *cfg, int fd)
{
	cfg->cancel_fd = fd;
}

void rg_config_set_reap_all_children(struct rg_config *cfg, bool reap)
{
	cfg->reap_all_children = reap;
}

void rg_config_set_log(struct rg_config *cfg, rg_log_fn fn, void *userdata,
		       enum rg_log_level max_level)
{
	cfg->log = (struct rg_log_sink){
		.fn = fn,
		.data = userdata,
		.max = max_level,
	};
}

void rg_log(const struct rg_config *cfg, enum rg_log_level level,
	    const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rg_log_to(&cfg->log, level, "%s", buf);
}

int rg_config_set_pool(struct rg_config *cfg, const char *dir,
		       unsigned int size, struct rg_error *err)
{
	if (size > RG_POOL_SIZE_MAX)
		return rg_fail(err, EINVAL, "pool size %u: at most %d slots",
			       size, RG_POOL_SIZE_MAX);
	if (dir && dir[0] != '/')
		return rg_fail(err, EINVAL,
			       "pool directory `%s' is not an absolute path",
			       dir);
	if (replace_string(&cfg->pool_dir, dir, err) < 0)
		return -1;
	cfg->pool_size = size;
	return 0;
}

void rg_config_set_pool_keeper(struct rg_config *cfg, bool enable)
{
	cfg->pool_keeper = enable;
}

int rg_config_set_pool_v2_memory_peak(struct rg_config *cfg,
				      enum rg_pool_v2_memory_peak how,
				      struct rg_error *err)
{
	if (how != RG_POOL_V2_PEAK_SAMPLED && how != RG_POOL_V2_PEAK_EXACT)
		return rg_fail(err, EINVAL,
			       "v2 memory peak method %d: "
			       "neither sampled nor exact",
			       (int)how);
	cfg->pool_v2_exact_peak = how == RG_POOL_V2_PEAK_EXACT;
	return 0;
}

void rg_config_set_pool_favordynmods(struct rg_config *cfg, bool enable)
{
	cfg->pool_favordynmods = enable;
}
