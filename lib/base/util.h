/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers every part of the library uses. */
#ifndef RG_UTIL_H
#define RG_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Close *fd if it is open and mark it closed. */
static inline void rg_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static inline void rg_free_ptr(void *ptr)
{
	free(*(void **)ptr);
}

/*
 * Cleanup attributes, so that error paths need no goto ladders: f(&var)
 * runs on every exit from var's scope, after the return value is computed
 * (so "return rg_fail(err, errno, ...)" still reports the right errno).
 * Several run in the reverse order of their declarations.
 */
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_close_ __attribute__((cleanup(rg_close_fd)))
#define _cleanup_free_ __attribute__((cleanup(rg_free_ptr)))

/*
 * Hand *fd over (returned, or stored where it outlives the scope): *fd is
 * left -1, so that its _cleanup_close_ skips it.
 */
static inline int rg_steal_fd(int *fd)
{
	int ret = *fd;

	*fd = -1;
	return ret;
}

/* The struct that holds member at ptr. */
/* clang-format off */
#define rg_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
/* clang-format on */

/*
 * Whole seconds, rounded up, of s in (0, 1e9] (config.c bounds the CPU
 * limit): RLIMIT_CPU's unit. Not ceil(), the one function libm gave us:
 * every runguard call would map and relocate libm for it.
 */
static inline uint64_t rg_whole_seconds_up(double s)
{
	uint64_t whole = (uint64_t)s;

	return (double)whole < s ? whole + 1 : whole;
}

#endif
