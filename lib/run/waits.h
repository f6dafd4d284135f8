/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a run's wall time went: its cgroup's waits (cgroup.h, psi.h) and
 * the host's pressure over the same window become rg_result's wait_time,
 * host_pressure and wall_time_cause. The rules are docs/meta-file.md's.
 */
#ifndef RG_WAITS_H
#define RG_WAITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <runguard/runguard.h>

#include "cgroup/cgroup.h"

/* The host's totals, open for the whole run (before the timed window). */
struct rg_host_waits {
	struct rg_psi psi;
	struct timespec start;
};

/* Nothing open yet: rg_host_waits_close() is harmless. */
void rg_host_waits_init(struct rg_host_waits *h);

void rg_host_waits_open(struct rg_host_waits *h);
/* With the run's own baselines, as the timed window opens. */
void rg_host_waits_start(struct rg_host_waits *h);
/* The host's pressure since then into res (host_known, host_pressure). */
void rg_host_waits_read(const struct rg_host_waits *h, struct rg_result *res);
void rg_host_waits_close(struct rg_host_waits *h);

/*
 * One task's own time waiting on a run queue (ns), from the fd of its
 * /proc/<pid>/schedstat: exact also when the task moved between CPUs,
 * where a cgroup's PSI total weighs each CPU by the time the cgroup was
 * busy on it (psi.h). Readable until the task is reaped; -1 unknown.
 */
int rg_task_stat_open(pid_t pid);
/*
 * The same for pidfd's task, for a caller whose PID namespace is not its
 * /proc's (a resident slot's runner: the child is pid 2 to it).
 */
int rg_task_stat_open_pidfd(int pidfd);
/* The calling thread's own (/proc/thread-self/schedstat). */
int rg_task_stat_open_self(void);
int64_t rg_task_run_delay(int stat_fd);

/*
 * The run's own waits (ns by enum rg_psi_kind, -1 unknown) into res, at
 * most its wall time each (res->wall_time, when set).
 */
void rg_waits_set(struct rg_result *res, const int64_t wait_ns[RG_PSI_NR],
		  const char *method);

/*
 * res->wall_time_cause from res's times, waits and host pressure;
 * memory_limited: the run had a memory limit and reached (nearly) all of
 * it. Pure: no system call.
 */
void rg_waits_blame(struct rg_result *res, bool memory_limited);

#endif
