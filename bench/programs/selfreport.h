/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a benchmark program measured of itself, for the fidelity scenarios
 * of bench/run: one line "self wall_ns=N cpu_ns=N" on stdout, written with
 * write(2) so that no stdio buffering or atexit work follows the clock.
 */
#ifndef RG_BENCH_SELFREPORT_H
#define RG_BENCH_SELFREPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static inline long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Milliseconds from argv[1], else def. */
static inline long long arg_ms(int argc, char **argv, long long def)
{
	return argc > 1 ? strtoll(argv[1], NULL, 10) : def;
}

/* Print the self line for a run whose main() started at wall0, and exit. */
static inline void self_report_exit(long long wall0)
{
	long long wall = now_ns(CLOCK_MONOTONIC) - wall0;
	long long cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	char line[96];
	int n;

	n = snprintf(line, sizeof(line), "self wall_ns=%lld cpu_ns=%lld\n",
		     wall, cpu);
	if (write(1, line, (size_t)n) != n)
		_exit(1);
	_exit(0);
}

#endif
