/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --check output: one aligned line per item ("ok|warning|error  item
 * message"), an indented "fix: COMMAND" line under each failing one and
 * a summary; or, with --json, one JSON object. No system calls.
 */
#ifndef RG_CLI_CHECK_FORMAT_H
#define RG_CLI_CHECK_FORMAT_H

#include <stdio.h>

#include <runguard/check.h>

/* 0 when every item is ok, 1 for warnings only, 2 for any error. */
int rg_cli_check_exit_status(const struct rg_check_report *report);

void rg_cli_check_print_text(FILE *out, const struct rg_check_report *report);
void rg_cli_check_print_json(FILE *out, const struct rg_check_report *report);

#endif
