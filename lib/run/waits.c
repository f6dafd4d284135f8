/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a run's wall time went (waits.h, docs/meta-file.md). */
#include "run/waits.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "base/base.h"

_Static_assert((int)RG_PSI_CPU == (int)RG_WAIT_CPU &&
		       (int)RG_PSI_IO == (int)RG_WAIT_IO &&
		       (int)RG_PSI_MEMORY == (int)RG_WAIT_MEMORY,
	       "a PSI kind is the wait of the same index");

/*
 * A gap between wall and CPU time this small is nobody's fault: a run's
 * own start and end, a tick of the scheduler.
 */
#define QUIET_GAP_S 0.020
#define QUIET_GAP_SHARE 0.10
/* The waits explain the gap when they cover at least this share of it. */
#define EXPLAINS_SHARE 0.50

void rg_host_waits_init(struct rg_host_waits *h)
{
	rg_psi_init(&h->psi);
}

void rg_host_waits_open(struct rg_host_waits *h)
{
	_cleanup_close_ int dir = open("/proc/pressure",
				       O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	rg_psi_init(&h->psi);
	if (dir >= 0)
		rg_psi_open(&h->psi, dir, true);
}

void rg_host_waits_start(struct rg_host_waits *h)
{
	clock_gettime(CLOCK_MONOTONIC, &h->start);
	rg_psi_start(&h->psi);
}

void rg_host_waits_read(const struct rg_host_waits *h, struct rg_result *res)
{
	int64_t delta_ns[RG_PSI_NR], window_ns;
	struct timespec now;

	if (!rg_psi_any(&h->psi))
		return;
	rg_psi_delta(&h->psi, delta_ns);
	clock_gettime(CLOCK_MONOTONIC, &now);
	window_ns = (now.tv_sec - h->start.tv_sec) * 1000000000LL +
		    (now.tv_nsec - h->start.tv_nsec);
	if (window_ns <= 0)
		return;
	for (int k = 0; k < RG_PSI_NR; k++) {
		if (delta_ns[k] < 0)
			continue;
		res->host_known |= 1u << k;
		res->host_pressure[k] = delta_ns[k] >= window_ns ?
						100.0 :
						100.0 * (double)delta_ns[k] /
							(double)window_ns;
	}
}

void rg_host_waits_close(struct rg_host_waits *h)
{
	rg_psi_close(&h->psi);
}

/* The pid of pidfd's process in /proc's PID namespace (fdinfo); -1. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid:\t%d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

int rg_task_stat_open_pidfd(int pidfd)
{
	return rg_task_stat_open(pidfd_pid(pidfd));
}

int rg_task_stat_open(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int rg_task_stat_open_self(void)
{
	return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

int64_t rg_task_run_delay(int stat_fd)
{
	unsigned long long run_ns, delay_ns;
	char buf[128];
	ssize_t n;

	/* "<on cpu ns> <run queue ns> <timeslices>" */
	if (stat_fd < 0)
		return -1;
	n = pread(stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run_ns, &delay_ns) != 2 ||
	    delay_ns > INT64_MAX)
		return -1;
	return (int64_t)delay_ns;
}

void rg_waits_set(struct rg_result *res, const int64_t wait_ns[RG_PSI_NR],
		  const char *method)
{
	for (int k = 0; k < RG_PSI_NR; k++) {
		if (wait_ns[k] < 0)
			continue;
		res->waits_known |= 1u << k;
		res->wait_time[k] = (double)wait_ns[k] / 1e9;
		/* time during which some task waited: never more than all */
		if (res->wall_time > 0 && res->wait_time[k] > res->wall_time)
			res->wait_time[k] = res->wall_time;
	}
	if (res->waits_known && method)
		snprintf(res->wait_method, sizeof(res->wait_method), "%s",
			 method);
}

static bool known(const struct rg_result *res, int wait)
{
	return res->waits_known & (1u << wait);
}

/* Big enough to matter: more than a quiet gap, in seconds and in share. */
static bool matters(double seconds, double wall)
{
	return seconds > QUIET_GAP_S && seconds > QUIET_GAP_SHARE * wall;
}

static const char *blame(const struct rg_result *res, bool memory_limited)
{
	double cpu = res->cpu_time >= 0 ? res->cpu_time :
					  res->user_time + res->sys_time;
	double gap = res->wall_time - cpu, top = 0, sum = 0;
	int worst = -1;

	/*
	 * Memory first: a run's reclaim is also CPU time (its own, in the
	 * kernel), so a run fighting its limit can lose its time with no
	 * gap between wall and CPU time.
	 */
	if (known(res, RG_WAIT_MEMORY) &&
	    matters(res->wait_time[RG_WAIT_MEMORY], res->wall_time))
		return memory_limited ? "own-memory-limit" : "host-memory";
	if (!matters(gap, res->wall_time))
		return "none";
	for (int k = 0; k < RG_NR_WAITS; k++) {
		if (k == RG_WAIT_MEMORY || !known(res, k))
			continue;
		sum += res->wait_time[k];
		if (res->wait_time[k] > top) {
			top = res->wait_time[k];
			worst = k;
		}
	}
	/* neither running nor waiting for the host: sleep, input, a pipe */
	if (worst < 0 || sum < EXPLAINS_SHARE * gap)
		return "program";
	switch (worst) {
	case RG_WAIT_CPU:
		return "host-cpu";
	case RG_WAIT_IO:
		return "host-io";
	default:
		return "cpu-quota";
	}
}

void rg_waits_blame(struct rg_result *res, bool memory_limited)
{
	if (!res->waits_known)
		return;
	snprintf(res->wall_time_cause, sizeof(res->wall_time_cause), "%s",
		 blame(res, memory_limited));
}
