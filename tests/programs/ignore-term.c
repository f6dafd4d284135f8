/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ignore-term [SECONDS]: ignore SIGTERM (and SIGINT/SIGHUP), then sleep
 * SECONDS (default 20).
 */
#include <signal.h>

#include "common.h"

int main(int argc, char **argv)
{
	double secs = 20;

	if (argc > 2)
		die_usage(argv[0], "[SECONDS]");
	if (argc == 2)
		secs = parse_seconds(argv[1]);
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	printf("ignoring SIGTERM\n");
	fflush(stdout);
	sleep_seconds(secs);
	printf("done\n");
	return 0;
}
