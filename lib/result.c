/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interpreting a run result the way DOMjudge does. */
#include <runguard/runguard.h>

#include "rg-build-config.h"

const char *rg_time_result(const struct rg_result *result,
			   enum rg_time_type selected)
{
	unsigned int mask;

	/* A soft overrun counts only for the time type the caller reports... */
	mask = selected == RG_TIME_WALL ? result->wall_limit
					: result->cpu_limit;
	/* ...but a hard one of either type always does. */
	if ((result->wall_limit | result->cpu_limit) & RG_LIMIT_HARD)
		mask |= RG_LIMIT_HARD;
	if (mask & RG_LIMIT_HARD)
		return "hard-timelimit";
	if (mask & RG_LIMIT_SOFT)
		return "soft-timelimit";
	return "";
}

const char *rg_version(void)
{
	return RG_VERSION;
}
