/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * -r and -d, checked before anything is made for a run: a root that is
 * missing, not a directory or outside the chroot prefix, or a working
 * directory that is not one inside the root, fails the run at once with
 * the error the child would give (docs/domjudge.md), so that no cgroup,
 * slot or walker acts on it. The child checks again as it enters the
 * root: what is checked here may change before then.
 */
#ifndef RG_ROOT_H
#define RG_ROOT_H

#include <stddef.h>

#include "base/base.h"
/*
 * The realpath of cfg's chroot prefix with a trailing '/' into prefix, so
 * that whole components compare ("/j/" never matches "/j2"); "" without a
 * root or a prefix. An error is the host's (the prefix is configuration).
 */
int rg_root_prefix(const struct rg_config *cfg, char *prefix, size_t len,
		   struct rg_error *err);

/* cfg's root and workdir against prefix (from rg_root_prefix). */
int rg_root_check(const struct rg_config *cfg, const char *prefix,
		  struct rg_error *err);

#endif
