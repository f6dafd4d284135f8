/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON output of the administrative commands (--pool-show, --check). */
#ifndef RG_CLI_JSON_H
#define RG_CLI_JSON_H

#include <stdio.h>

/*
 * s as a JSON string: paths and messages may hold quotes, backslashes
 * or control bytes.
 */
void rg_cli_json_string(FILE *out, const char *s);

#endif
