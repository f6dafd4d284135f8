/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sleep SECONDS: sleep (fractional seconds allowed), print "slept", exit 0.
 */
#include "common.h"

int main(int argc, char **argv)
{
	if (argc != 2)
		die_usage(argv[0], "SECONDS");
	sleep_seconds(parse_seconds(argv[1]));
	printf("slept\n");
	return 0;
}
