/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver_library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <runguard/meta.h>
#include <runguard/pool.h>
#include <runguard/runguard.h>

#include "config_map.h"
#include "options.h"
#include "settings.h"

#define EXIT_INTERNAL 255

struct lib_command {
	struct rg_cli_options opts;
	struct rg_meta_options meta_options;
	struct rg_config *cfg;
	struct rg_pool *pool; /* opened once when pooled (rg_pool_open) */
};

/* A judge that links the library opens its pool once. */
static int open_pool(struct lib_command *lc,
		     const struct rg_cli_settings *settings,
		     struct rg_error *err)
{
	struct rg_pool_options o = {
		.struct_size = sizeof(o),
		.dir = settings->pool_dir,
		.size = settings->pool_size,
		/* as the CLI: no run of a keeper attaches to a cgroup */
		.favordynmods = settings->favordynmods && !settings->keeper,
	};

	lc->pool = rg_pool_open(&o, err);
	return lc->pool ? 0 : -1;
}

static int configure(struct lib_command *lc, struct rg_error *err)
{
	struct rg_cli_settings settings;

	if (rg_cli_settings_load(&lc->opts, &settings, err) < 0)
		return -1;
	lc->cfg = rg_config_new(err);
	if (!lc->cfg)
		return -1;
	if (rg_cli_build_config(&lc->opts, lc->cfg, err) < 0 ||
	    rg_config_set_pool(lc->cfg, settings.pool_dir, settings.pool_size,
			       err) < 0 ||
	    rg_config_set_pool_v2_memory_peak(lc->cfg, settings.v2_memory_peak,
					      err) < 0)
		return -1;
	rg_config_set_pool_favordynmods(lc->cfg, settings.favordynmods);
	rg_config_set_pool_keeper(lc->cfg, settings.keeper);
	if (settings.pool_size && open_pool(lc, &settings, err) < 0)
		return -1;
	/* a threaded caller: no signal handling, and reaping only its own */
	rg_config_set_handle_signals(lc->cfg, false);
	rg_config_set_reap_all_children(lc->cfg, false);
	rg_cli_meta_options(&lc->opts, &lc->meta_options);
	return 0;
}

struct lib_command *lib_command_new(char **argv, char *why, size_t len)
{
	struct lib_command *lc = calloc(1, sizeof(*lc));
	struct rg_error err = { 0 };
	char text[sizeof(err.message) + 256];
	int argc = 0;

	if (!lc) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	while (argv[argc])
		argc++;
	if (rg_cli_parse(&lc->opts, argc, argv, &err) < 0) {
		free(lc);
		snprintf(why, len, "%s",
			 rg_error_format(&err, text, sizeof(text)));
		return NULL;
	}
	if (configure(lc, &err) < 0) {
		snprintf(why, len, "%s",
			 rg_error_format(&err, text, sizeof(text)));
		lib_command_free(lc);
		return NULL;
	}
	return lc;
}

static long long thread_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

/* As runguard: an exec failure is the submission's, not an error. */
static bool ran_to_completion(enum rg_outcome outcome)
{
	return outcome == RG_OUTCOME_COMPLETED ||
	       outcome == RG_OUTCOME_EXEC_FAILED;
}

/* As runguard: the result, or internal-error followed by what is valid. */
static int write_meta(const struct lib_command *lc, int failed,
		      const struct rg_result *res, const char *line)
{
	FILE *meta = fopen(lc->opts.meta_file, "w");
	int rc = 0;

	if (!meta)
		return -1;
	if (failed)
		rc = rg_meta_write_internal_error(meta, line);
	if (!rc && res->outcome != RG_OUTCOME_ERROR)
		rc = rg_meta_write_result(meta, res, &lc->meta_options);
	return fclose(meta) || rc ? -1 : 0;
}

void lib_command_call(struct lib_command *lc, int in_fd, int out_fd,
		      int err_fd, struct lib_call *call)
{
	struct rg_result res = RG_RESULT_INIT;
	struct rg_error err = { 0 };
	char text[sizeof(err.message) + 256];
	char line[sizeof(text) + 32] = "";
	long long cpu = thread_cpu_ns();
	int failed, exit_code;

	failed = rg_config_set_input_fd(lc->cfg, in_fd, &err) < 0 ||
		 (!lc->opts.stdout_file &&
		  rg_config_set_output_fd(lc->cfg, RG_STDOUT, out_fd, &err) <
			  0) ||
		 !ran_to_completion(lc->pool ? rg_pool_run(lc->pool, lc->cfg,
							   &res, &err) :
					       rg_run(lc->cfg, &res, &err));
	if (failed)
		snprintf(line, sizeof(line), "runguard: %s",
			 rg_error_format(&err, text, sizeof(text)));
	exit_code = failed ? EXIT_INTERNAL : res.exit_code;
	if (lc->opts.meta_file && write_meta(lc, failed, &res, line) < 0) {
		snprintf(line, sizeof(line), "runguard: cannot write `%s'",
			 lc->opts.meta_file);
		exit_code = EXIT_INTERNAL;
	}
	if (line[0])
		dprintf(err_fd, "%s\n", line);
	call->status = (exit_code & 0xff) << 8;
	call->cpu_ns = thread_cpu_ns() - cpu +
		       (long long)((res.user_time + res.sys_time) * 1e9);
}

void lib_command_free(struct lib_command *lc)
{
	if (!lc)
		return;
	rg_pool_close(lc->pool);
	rg_config_free(lc->cfg);
	rg_cli_options_free(&lc->opts);
	free(lc);
}
