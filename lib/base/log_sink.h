/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the library's messages go: a run's own sink (rg_config_set_log) or,
 * for the calls that take no configuration (pool administration, prewarm),
 * the process's administration sink (rg_set_log).
 */
#ifndef RG_LOG_SINK_H
#define RG_LOG_SINK_H

#include <runguard/runguard.h>

struct rg_log_sink {
	rg_log_fn fn; /* NULL: messages are dropped */
	void *data;
	enum rg_log_level max; /* messages above it are dropped */
};

void rg_log_to(const struct rg_log_sink *sink, enum rg_log_level level,
	       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The sink rg_set_log() gave (messages dropped until then). */
const struct rg_log_sink *rg_admin_log(void);

#endif
