/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runguard --pool-show [--json]: the pool's slots, for people or for tools */
#ifndef RG_CLI_POOL_SHOW_H
#define RG_CLI_POOL_SHOW_H

#include <stdbool.h>
#include <stdio.h>

struct rg_error;

/* Print the pool in dir as an aligned table, or as one JSON object. */
int rg_cli_pool_show(const char *dir, bool json, FILE *out,
		     struct rg_error *err);

#endif
