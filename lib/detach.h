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

/*
 * Run fn(arg) in a detached process and return once it has started; its
 * exit status is fn's return value. It inherits every other fd (locks
 * included). False when it could not be started: then fn did not run.
 */
bool rg_detach(int (*fn)(void *arg), void *arg);

#endif
