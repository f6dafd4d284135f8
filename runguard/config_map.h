/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* From parsed DOMjudge options to a librunguard configuration. */
#ifndef RG_CLI_CONFIG_MAP_H
#define RG_CLI_CONFIG_MAP_H

#include <runguard/meta.h>
#include <runguard/runguard.h>

#include "options.h"

/* Apply every option to cfg (a fresh rg_config_new()). */
int rg_cli_build_config(const struct rg_cli_options *o, struct rg_config *cfg,
			struct rg_error *err);

/* What the meta file needs to know about the options. */
void rg_cli_meta_options(const struct rg_cli_options *o,
			 struct rg_meta_options *meta);

#endif
