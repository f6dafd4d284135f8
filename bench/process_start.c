/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What starting a program costs, apart from anything it does: fork, exec,
 * exit and wait of each PROGRAM run as "PROGRAM --version", in turn, 10 ms
 * apart (as bench/run's spaced calls), stdout to /dev/null.
 *
 *   process_start RUNS PROGRAM...
 *
 * E.g. the floor's static program against the runguard binary: the part
 * of a resident command-line call that is runguard's own process, next to
 * bench/run's library-resident (the same call without that process).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "microseconds.h"

#define PAUSE_US 10000

/* One start of path, in microseconds; -1 when it did not exit 0. */
static double start_once(const char *path, int devnull)
{
	char *argv[] = { (char *)path, "--version", NULL };
	double t0 = now_us();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(devnull, STDOUT_FILENO);
		execv(path, argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return now_us() - t0;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[1]) : 0, n = argc - 2;
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	double *us, first = 0;

	if (runs < 1 || devnull < 0) {
		fprintf(stderr, "usage: %s RUNS PROGRAM...\n", argv[0]);
		return 2;
	}
	us = calloc((size_t)runs * (size_t)n, sizeof(*us));
	if (!us)
		return 1;
	for (int r = 0; r < runs; r++)
		for (int p = 0; p < n; p++) {
			usleep(PAUSE_US);
			us[p * runs + r] = start_once(argv[2 + p], devnull);
			if (us[p * runs + r] < 0) {
				fprintf(stderr, "%s --version failed\n",
					argv[2 + p]);
				return 1;
			}
		}
	printf("%-8s %8s %8s %8s %6s  program\n", "runs", "p10 us", "median",
	       "p90", "x 1st");
	for (int p = 0; p < n; p++) {
		double *d = us + p * runs, median;

		qsort(d, (size_t)runs, sizeof(*d), compare_us);
		median = d[runs / 2];
		if (p == 0)
			first = median;
		printf("%-8d %8.0f %8.0f %8.0f %6.2f  %s\n", runs, d[runs / 10],
		       median, d[runs * 9 / 10], median / first, argv[2 + p]);
	}
	free(us);
	return 0;
}
