/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers shared by the integration test programs.
 */
#ifndef RG_TEST_PROGRAMS_COMMON_H
#define RG_TEST_PROGRAMS_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline void die_usage(const char *prog, const char *usage)
{
	fprintf(stderr, "usage: %s %s\n", prog, usage);
	exit(2);
}

static inline double parse_seconds(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || v < 0) {
		fprintf(stderr, "invalid number of seconds: %s\n", s);
		exit(2);
	}
	return v;
}

static inline long parse_long(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0') {
		fprintf(stderr, "invalid number: %s\n", s);
		exit(2);
	}
	return v;
}

static inline double clock_seconds(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void sleep_seconds(double secs)
{
	struct timespec ts;

	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

#endif /* RG_TEST_PROGRAMS_COMMON_H */
