/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Log sinks: a run's, and the process's one for administration. */
#include <stdarg.h>
#include <stdio.h>

#include "base/log_sink.h"

static struct rg_log_sink admin_sink = { .max = RG_LOG_WARNING };

void rg_log_to(const struct rg_log_sink *sink, enum rg_log_level level,
	       const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!sink || !sink->fn || level > sink->max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sink->fn(sink->data, level, buf);
}

const struct rg_log_sink *rg_admin_log(void)
{
	return &admin_sink;
}

void rg_set_log(rg_log_fn fn, void *userdata, enum rg_log_level max_level)
{
	admin_sink = (struct rg_log_sink){
		.fn = fn,
		.data = userdata,
		.max = max_level,
	};
}
