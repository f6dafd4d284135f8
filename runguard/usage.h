/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --help and --version texts. */
#ifndef RG_CLI_USAGE_H
#define RG_CLI_USAGE_H

#include <stdbool.h>
#include <stdio.h>

/* Both return 0, or -1 if writing to out failed. */
int rg_cli_print_help(FILE *out, const char *progname);
int rg_cli_print_version(FILE *out);

/*
 * Act on --help / --version; help wins, as in DOMjudge. Returns 1 when
 * neither was asked for, else as above.
 */
int rg_cli_print_info(FILE *out, const char *progname, bool help, bool version);

#endif
