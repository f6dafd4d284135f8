/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpu100 [MS]: burn MS (default 100) ms of CPU time, calibrated by the
 * process CPU clock rather than a loop count, so that the amount does not
 * depend on the machine; then print the self line (selfreport.h).
 */
#include "selfreport.h"

int main(int argc, char **argv)
{
	long long wall0 = now_ns(CLOCK_MONOTONIC);
	long long target = arg_ms(argc, argv, 100) * 1000000LL;
	volatile unsigned long sink = 0;

	while (now_ns(CLOCK_PROCESS_CPUTIME_ID) < target) {
		/* some work between clock reads, which cost a syscall each */
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * i;
	}
	self_report_exit(wall0);
}
