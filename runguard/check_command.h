/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runguard --check [--json]: rg_check() with what this runguard would
 * run with (build settings, /etc/runguard.conf and the environment as
 * settings.c loads them, -u/-g/-P), plus the build's VALID_USERS.
 */
#ifndef RG_CLI_CHECK_H
#define RG_CLI_CHECK_H

#include <stdio.h>

#include "options.h"

/* Prints the report; the exit status (0, 1, 2), or 255 on failure. */
int rg_cli_check(const struct rg_cli_options *o, const char *progname,
		 FILE *out, FILE *errors);

#endif
