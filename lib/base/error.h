/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RG_ERROR_H
#define RG_ERROR_H

#include <errno.h>
#include <runguard/runguard.h>

/*
 * Fill *err (if not NULL) and return -1, so that error paths read
 * "return rg_fail(err, errno, "opening %s", path);".
 */
int rg_fail(struct rg_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix an existing error message with more context; returns -1. */
int rg_fail_context(struct rg_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
