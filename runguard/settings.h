/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Settings that DOMjudge's scripts do not pass (the pool), so that they
 * can be given without changing them: command-line option, then
 * environment variable, then configuration file, in that precedence.
 *
 *   option              environment              config file (key = value)
 *   --pool-size=N       RUNGUARD_POOL_SIZE       pool-size
 *   --pool-dir=DIR      RUNGUARD_POOL_DIR        pool-dir
 *   --pool-keeper=Y|N   RUNGUARD_POOL_KEEPER     pool-keeper (yes|no)
 *                       RUNGUARD_V2_MEMORY_PEAK  v2-memory-peak (sampled|exact)
 *                                                v1-favordynmods (yes|no)
 *
 * The file is $RUNGUARD_CONFIG if set (it must then exist), else
 * /etc/runguard.conf if it exists.
 */
#ifndef RG_CLI_SETTINGS_H
#define RG_CLI_SETTINGS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include <runguard/pool.h>
#include <runguard/runguard.h>

#include "options.h"

#define RG_CLI_CONFIG_FILE "/etc/runguard.conf"

struct rg_cli_settings {
	unsigned int pool_size; /* 0: no pool */
	char pool_dir[PATH_MAX];
	bool favordynmods;
	bool keeper; /* resident slots */
	enum rg_pool_v2_memory_peak v2_memory_peak;
	/* where pool-size and pool-dir were set: "default", "FILE:LINE", ... */
	char size_from[PATH_MAX + 32];
	char dir_from[PATH_MAX + 32];
};

void rg_cli_settings_defaults(struct rg_cli_settings *s);

/* Apply the lines of a configuration file; name is used in messages. */
int rg_cli_settings_parse(FILE *file, const char *name,
			  struct rg_cli_settings *s, struct rg_error *err);

/* Defaults, then the file, the environment and the options. */
int rg_cli_settings_load(const struct rg_cli_options *o,
			 struct rg_cli_settings *s, struct rg_error *err);

#endif
