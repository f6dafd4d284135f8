/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * envdump: print every environment entry, one per line.
 */
#include <stdio.h>

extern char **environ;

int main(void)
{
	char **e;

	for (e = environ; *e; e++)
		printf("%s\n", *e);
	return 0;
}
