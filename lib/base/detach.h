/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Work that must outlive the call without holding anyone up: a process
 * forked twice (so that init adopts and reaps it, unless the caller is a
 * subreaper already), with /dev/null on its stdio, so that a caller
 * reading our stdout or stderr through a pipe sees EOF when we exit.
 */
#ifndef RG_DETACH_H
#define RG_DETACH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Run fn(arg) in a detached process and return once it has started; its
 * exit status is fn's return value. It works in / with /dev/null on its
 * stdio, and of the caller's fds it has only keep[] and the kernel's own
 * objects (cgroup, nsfs, mqueue, proc and anonymous-inode files): what
 * the caller had open (the meta file, a judging's files, a pipe whose
 * reader waits for EOF) is no longer held when rg_detach() returns.
 * False when it could not be started: then fn did not run.
 */
bool rg_detach(int (*fn)(void *arg), void *arg, const int keep[], size_t nkeep);

/* What rg_detach does with the fds: close all but those (and 0-2). */
void rg_detach_close_foreign(const int keep[], size_t nkeep);

#endif
