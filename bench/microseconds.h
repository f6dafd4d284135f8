/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The small C benchmarks' clock and sort order, in microseconds. */
#ifndef RG_BENCH_MICROSECONDS_H
#define RG_BENCH_MICROSECONDS_H

#include <time.h>

static inline double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* qsort() order of doubles */
static inline int compare_us(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
