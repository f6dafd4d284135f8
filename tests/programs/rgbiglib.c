/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A shared library with 4 MiB of read-only data in the file, for
 * uselib: no other process maps it, so a test can evict it from the page
 * cache and see who pays for bringing it in again.
 */
#include <stddef.h>

#define RG_BIG_SIZE (4u << 20)

/* a non-zero initializer keeps every byte in the file (.rodata) */
static const unsigned char big_data[RG_BIG_SIZE] = { 1 };

/* the project builds with -fvisibility=hidden */
__attribute__((visibility("default"))) unsigned long rg_big_sum(void);

/* reads every page of the data */
unsigned long rg_big_sum(void)
{
	const volatile unsigned char *p = big_data;
	unsigned long sum = 0;

	for (size_t i = 0; i < RG_BIG_SIZE; i += 4096)
		sum += p[i];
	return sum;
}
