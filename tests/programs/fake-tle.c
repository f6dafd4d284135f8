/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fake-tle: print runguard's time-limit messages itself and exit 0 (cf.
 * DOMjudge's test-timelimit-bug): the meta file, not stderr, is authoritative.
 */
#include <stdio.h>

int main(void)
{
	fputs("timelimit exceeded (hard wall time): aborting command\n",
	      stderr);
	fputs("timelimit exceeded (soft cpu time)\n", stderr);
	return 0;
}
