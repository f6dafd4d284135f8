/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memhog MIB [HOLD_SECONDS]: allocate MIB MiB, touch every page, optionally
 * hold it for a while, print a line and exit 0.  Progress goes to stderr, so
 * that an OOM kill part way through is visible.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	long mib, page, i;
	double hold = 0;
	size_t len;
	char *p;

	if (argc != 2 && argc != 3)
		die_usage(argv[0], "MIB [HOLD_SECONDS]");
	mib = parse_long(argv[1]);
	if (mib <= 0 || mib > 4096) {
		fprintf(stderr, "memhog: refusing %ld MiB (1..4096)\n", mib);
		return 2;
	}
	if (argc == 3)
		hold = parse_seconds(argv[2]);

	len = (size_t)mib << 20;
	page = sysconf(_SC_PAGESIZE);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		return 1;
	}
	for (i = 0; i < (long)len; i += page) {
		p[i] = (char)i;
		if (i % (16L << 20) == 0) {
			fprintf(stderr, "touched %ld MiB\n", i >> 20);
		}
	}
	if (hold > 0)
		sleep_seconds(hold);
	printf("allocated %ld MiB\n", mib);
	return 0;
}
