/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How long a process's first cgroup.procs write (moving itself into a
 * cgroup) takes after the machine did no cgroup move for a while: on
 * cgroup v1 without favordynmods it waits for an RCU grace period.
 *
 *   attach_after_idle CGROUP_PROCS_FILE [RUNS [IDLE_MS]]
 *
 * Each run forks a child that writes its pid to the file, timed, and exits.
 * Use a cgroup of your own, e.g. /sys/fs/cgroup/cpuacct/runguard/bench.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "microseconds.h"

/* Child: time one write of "0" (this process) to the file. */
static void __attribute__((noreturn)) attach_once(const char *file, int out)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	double start, took;

	if (fd < 0)
		_exit(1);
	start = now_us();
	if (write(fd, "0", 1) != 1)
		_exit(1);
	took = now_us() - start;
	_exit(write(out, &took, sizeof(took)) == sizeof(took) ? 0 : 1);
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 30;
	int idle_ms = argc > 3 ? atoi(argv[3]) : 200;
	double *us;
	int status;

	if (argc < 2 || runs < 1 || idle_ms < 0) {
		fprintf(stderr,
			"usage: %s CGROUP_PROCS_FILE [RUNS [IDLE_MS]]\n",
			argv[0]);
		return 2;
	}
	us = calloc((size_t)runs, sizeof(*us));
	if (!us)
		return 1;
	for (int i = 0; i < runs; i++) {
		int p[2];
		pid_t pid;

		usleep((useconds_t)idle_ms * 1000);
		if (pipe(p) < 0)
			return 1;
		pid = fork();
		if (pid == 0)
			attach_once(argv[1], p[1]);
		close(p[1]);
		if (pid < 0 || read(p[0], &us[i], sizeof(us[i])) !=
				       (ssize_t)sizeof(us[i])) {
			fprintf(stderr, "attach failed\n");
			return 1;
		}
		close(p[0]);
		waitpid(pid, &status, 0);
	}
	qsort(us, (size_t)runs, sizeof(*us), compare_us);
	printf("attach after %d ms idle, %d runs: median %.1f us, "
	       "p90 %.1f us, max %.1f us\n",
	       idle_ms, runs, us[runs / 2], us[runs * 9 / 10], us[runs - 1]);
	free(us);
	return 0;
}
