/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading shared files into the page cache from outside the slots. */
#ifndef RG_PREWARM_H
#define RG_PREWARM_H

#include <runguard/pool.h>

#include "base/base.h"

/*
 * Before a pooled run: the command's file and a regular file on stdin
 * start reading (their pages are charged to the caller as they are
 * allocated; nobody waits for the disk), and the -r root's code directories,
 * once per 10 minutes per set of directories (a stamp in the pool
 * directory), read by a walker in the background at the lowest priority.
 * The command and the root are skipped when this process warmed the same
 * ones (root, command, directory, user) in the last 2 s. Call before
 * becoming a child subreaper. Best effort.
 */
void rg_prewarm_for_run(const struct rg_config *cfg, int pool_dir_fd);

#endif
