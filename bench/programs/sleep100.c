/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sleep100 [MS]: sleep MS (default 100) ms on CLOCK_MONOTONIC, using no
 * CPU, then print the self line (selfreport.h).
 */
#include <errno.h>

#include "selfreport.h"

int main(int argc, char **argv)
{
	long long wall0 = now_ns(CLOCK_MONOTONIC);
	long long end = wall0 + arg_ms(argc, argv, 100) * 1000000LL;
	struct timespec ts = {
		.tv_sec = end / 1000000000LL,
		.tv_nsec = end % 1000000000LL,
	};

	/* absolute deadline: a signal cannot stretch the sleep */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	self_report_exit(wall0);
}
