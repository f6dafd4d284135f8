/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runguard --pool-create | --pool-show | --pool-destroy[=force] | --pool-prewarm */
#ifndef RG_CLI_POOL_ADMIN_H
#define RG_CLI_POOL_ADMIN_H

#include <stdio.h>

#include "options.h"
#include "settings.h"

/* Run the command; messages go to out/errors. Returns the exit status. */
int rg_cli_pool_admin(const struct rg_cli_options *o,
		      const struct rg_cli_settings *s, const char *progname,
		      FILE *out, FILE *errors);

#endif
