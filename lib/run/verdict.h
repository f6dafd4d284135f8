/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A run's verdict from what was measured: how the command ended, which
 * limits it went over, whether it pressed its memory limit, which memory
 * number stands. Pure functions of plain values (run.c gathers them), so
 * that each rule is unit-tested without running anything
 * (tests/unit/test_verdict.c). docs/meta-file.md states the rules.
 */
#ifndef RG_VERDICT_H
#define RG_VERDICT_H

#include <stdbool.h>
#include <stdint.h>

#include <runguard/runguard.h>

/* What the verdict is decided from, besides the result's measurements. */
struct rg_verdict_limits {
	bool has_cpu_limit;
	double cpu_soft, cpu_hard; /* seconds */
	bool has_wall_limit;
	double wall_soft;      /* seconds */
	uint64_t memory_limit; /* bytes, or RG_UNLIMITED */
};

/*
 * Whether signal sig is the CPU rlimit's: SIGXCPU always (as DOMjudge),
 * and with a CPU limit a SIGKILL that came once the command had used the
 * hard rlimit (a program that ignores SIGXCPU is killed a second later),
 * unless runguard ended the run itself (aborting) or the OOM killer did.
 */
bool rg_verdict_cpu_rlimit_kill(const struct rg_verdict_limits *l, int sig,
				double cpu_used, bool aborting,
				bool oom_killed);

/*
 * From the wait status: exit_code (128 + signal for a signal, as a
 * shell says), term_signal, and the hard CPU limit flag. result's
 * user_time, sys_time and oom_killed must be set.
 */
void rg_verdict_exit(const struct rg_verdict_limits *l, int status,
		     bool aborting, struct rg_result *result);

/*
 * The soft limits from wall_time and cpu_time, and the hard wall limit
 * when the supervisor's timer hit it.
 */
void rg_verdict_time_limits(const struct rg_verdict_limits *l,
			    bool wall_hard_hit, struct rg_result *result);

/*
 * The command pressed its memory limit: OOM-killed, or its peak within
 * 10 % of the limit (the kernel reclaimed to stay below).
 */
bool rg_verdict_memory_limit_reached(const struct rg_verdict_limits *l,
				     bool oom_killed, uint64_t memory_bytes);

/*
 * The command's ru_maxrss (KiB) is its own only above what its process
 * held when it was set up (setup_kib, -1 unknown) and a page or so more:
 * exec folds the image a child was forked from into the high-water mark.
 */
bool rg_verdict_maxrss_is_the_commands(int64_t maxrss_kib, int64_t setup_kib);

#endif
