/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * uselib: read every page of librgbig.so's 4 MiB of data (the library is
 * found through the RUNPATH $ORIGIN, beside this program), print the sum
 * and exit 0.
 */
#include <stdio.h>

unsigned long rg_big_sum(void);

int main(void)
{
	printf("sum %lu\n", rg_big_sum());
	return 0;
}
