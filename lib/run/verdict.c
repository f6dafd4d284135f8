/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A run's verdict from what was measured (verdict.h). */
#include "run/verdict.h"

#include <signal.h>
#include <sys/wait.h>

#include "base/base.h"

/* see rg_verdict_maxrss_is_the_commands */
#define SETUP_MAXRSS_MARGIN_KIB 64

bool rg_verdict_cpu_rlimit_kill(const struct rg_verdict_limits *l, int sig,
				double cpu_used, bool aborting, bool oom_killed)
{
	double rlimit_hard;

	if (sig == SIGXCPU)
		return true;
	if (!l->has_cpu_limit || sig != SIGKILL || aborting || oom_killed)
		return false;
	/* RLIMIT_CPU is whole seconds, its hard value one above the soft */
	rlimit_hard = (double)rg_whole_seconds_up(l->cpu_hard) + 1;
	return cpu_used >= rlimit_hard - 0.05;
}

void rg_verdict_exit(const struct rg_verdict_limits *l, int status,
		     bool aborting, struct rg_result *result)
{
	result->status = status;
	if (WIFEXITED(status)) {
		result->exit_code = WEXITSTATUS(status);
		return;
	}
	result->term_signal = WTERMSIG(status);
	result->exit_code = 128 + result->term_signal;
	if (rg_verdict_cpu_rlimit_kill(l, result->term_signal,
				       result->user_time + result->sys_time,
				       aborting, result->oom_killed))
		result->cpu_limit |= RG_LIMIT_HARD;
}

void rg_verdict_time_limits(const struct rg_verdict_limits *l,
			    bool wall_hard_hit, struct rg_result *result)
{
	if (wall_hard_hit)
		result->wall_limit |= RG_LIMIT_HARD;
	if (l->has_wall_limit && result->wall_time > l->wall_soft)
		result->wall_limit |= RG_LIMIT_SOFT;
	if (l->has_cpu_limit && result->cpu_time > l->cpu_soft)
		result->cpu_limit |= RG_LIMIT_SOFT;
}

bool rg_verdict_memory_limit_reached(const struct rg_verdict_limits *l,
				     bool oom_killed, uint64_t memory_bytes)
{
	uint64_t limit = l->memory_limit;

	return limit != RG_UNLIMITED &&
	       (oom_killed || memory_bytes >= limit - limit / 10);
}

bool rg_verdict_maxrss_is_the_commands(int64_t maxrss_kib, int64_t setup_kib)
{
	return setup_kib < 0 ||
	       maxrss_kib > setup_kib + SETUP_MAXRSS_MARGIN_KIB;
}
