/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interpreting a run result the way DOMjudge does. */
#include <string.h>

#include <runguard/runguard.h>

#include "base/abi.h"
#include "rg-build-config.h"
#include "base/result.h"

int rg_result_copy_in(struct rg_result *own, const struct rg_result *result)
{
	if (!result ||
	    rg_abi_struct_size(result) <
		    RG_SIZE_THROUGH(struct rg_result, stream_truncated))
		return -1;
	rg_abi_copy_in(own, sizeof(*own), result);
	return own->outcome == RG_OUTCOME_ERROR ? -1 : 0;
}

void rg_result_init(struct rg_result *result)
{
	memset(result, 0, sizeof(*result));
	result->struct_size = sizeof(*result);
	result->outcome = RG_OUTCOME_ERROR;
	result->cpu_time = -1.0;
}

const char *rg_time_result(const struct rg_result *result,
			   enum rg_time_type selected)
{
	struct rg_result own;
	unsigned int mask;

	if (rg_result_copy_in(&own, result) < 0)
		return "";
	/* A soft overrun counts only for the time type the caller reports... */
	mask = selected == RG_TIME_WALL ? own.wall_limit : own.cpu_limit;
	/* ...but a hard one of either type always does. */
	if ((own.wall_limit | own.cpu_limit) & RG_LIMIT_HARD)
		mask |= RG_LIMIT_HARD;
	if (mask & RG_LIMIT_HARD)
		return "hard-timelimit";
	if (mask & RG_LIMIT_SOFT)
		return "soft-timelimit";
	return "";
}

const char *rg_outcome_name(enum rg_outcome outcome)
{
	switch (outcome) {
	case RG_OUTCOME_ERROR:
		return "error";
	case RG_OUTCOME_COMPLETED:
		return "completed";
	case RG_OUTCOME_EXEC_FAILED:
		return "exec-failed";
	case RG_OUTCOME_SETUP_FAILED:
		return "setup-failed";
	case RG_OUTCOME_CLEANUP_FAILED:
		return "cleanup-failed";
	}
	return "unknown";
}

const char *rg_version(void)
{
	return RG_VERSION;
}
