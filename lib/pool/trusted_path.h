/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory root may trust (trusted_path.c): walked from /, every
 * directory on the way root's (or the caller's) and writable by nobody
 * else but sticky ones (/tmp), links followed only where root made them,
 * the directory itself writable by nobody else.
 */
#ifndef RG_TRUSTED_PATH_H
#define RG_TRUSTED_PATH_H

#include <stdbool.h>

#include "base/base.h"

/*
 * dir so checked (what names it in messages: "pool directory"), created
 * 0755 when missing if create; *dir_fd is the O_PATH descriptor of the
 * directory that was checked, or -1 with err set.
 */
int rg_trusted_dir_open(const char *dir, const char *what, bool create,
			int *dir_fd, struct rg_error *err);

#endif
