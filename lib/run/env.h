/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RG_ENV_H
#define RG_ENV_H

#include "base/base.h"

/*
 * The command's environment, built before the child exists (the child must
 * not allocate): the caller's environment or just its PATH, then every
 * change in order ("NAME=VALUE" sets, "NAME" unsets, as putenv does).
 */
int rg_env_build(const struct rg_config *cfg, char ***out,
		 struct rg_error *err);
void rg_env_free(char **env);

#endif
