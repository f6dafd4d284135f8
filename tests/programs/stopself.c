/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stopself: stop ourselves with SIGSTOP; print a line if ever continued.
 */
#include <signal.h>
#include <stdio.h>

int main(void)
{
	printf("stopping\n");
	fflush(stdout);
	raise(SIGSTOP);
	printf("continued\n");
	return 0;
}
