/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RG_RESULT_H
#define RG_RESULT_H

#include <runguard/runguard.h>

/*
 * The caller's result as this version's struct (fields it does not know
 * are zero); -1 when it is too small or describes no run.
 */
int rg_result_copy_in(struct rg_result *own, const struct rg_result *result);

/* A result before anything is known: RG_OUTCOME_ERROR, cpu_time -1. */
void rg_result_init(struct rg_result *result);

#endif
