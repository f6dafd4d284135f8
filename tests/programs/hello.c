/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hello: one line on stdout, one line on stderr, exit 0.
 */
#include <stdio.h>

int main(void)
{
	fputs("hello stdout\n", stdout);
	fflush(stdout);
	fputs("hello stderr\n", stderr);
	return 0;
}
