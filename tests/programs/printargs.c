/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * printargs ARGS...: print argc and then every argument (argv[0] included)
 * on a line of its own, as "argv[i]=VALUE".
 */
#include <stdio.h>

int main(int argc, char **argv)
{
	int i;

	printf("argc=%d\n", argc);
	for (i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	return 0;
}
