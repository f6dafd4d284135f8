/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spin SECONDS: burn SECONDS of CPU time (process CPU clock), then print the
 * CPU time used and exit 0.  As a safety net it gives up after
 * 4 * SECONDS + 10 seconds of wall time.
 */
#include "common.h"

int main(int argc, char **argv)
{
	volatile unsigned long sink = 0;
	double target, wall_limit, start_wall;
	unsigned long i;

	if (argc != 2)
		die_usage(argv[0], "SECONDS");
	target = parse_seconds(argv[1]);
	start_wall = clock_seconds(CLOCK_MONOTONIC);
	wall_limit = 4 * target + 10;

	while (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) < target) {
		for (i = 0; i < 100000; i++)
			sink += i;
		if (clock_seconds(CLOCK_MONOTONIC) - start_wall > wall_limit) {
			fprintf(stderr,
				"spin: wall-time safety limit reached\n");
			return 3;
		}
	}
	printf("spun %.3f s cpu\n", clock_seconds(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
