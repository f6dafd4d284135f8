/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int rg_fail(struct rg_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

int rg_fail_context(struct rg_error *err, const char *fmt, ...)
{
	char prefix[256];
	char old[sizeof(err->message)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof(old));
	/* bounded explicitly: the combined message may be cut, never overrun */
	snprintf(err->message, sizeof(err->message), "%.255s: %.760s", prefix,
		 old);
	return -1;
}

const char *rg_error_format(const struct rg_error *err, char *buf, size_t len)
{
	if (!len)
		return buf;
	if (err->errnum)
		snprintf(buf, len, "%s: %s", err->message,
			 strerror(err->errnum));
	else
		snprintf(buf, len, "%s", err->message);
	return buf;
}
