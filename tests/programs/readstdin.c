/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * readstdin: read stdin to EOF and print the number of bytes read.
 */
#include <unistd.h>

#include "common.h"

int main(void)
{
	char buf[4096];
	long total = 0;
	ssize_t n;

	for (;;) {
		n = read(0, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("readstdin: read");
			return 1;
		}
		if (n == 0)
			break;
		total += n;
	}
	printf("read %ld bytes\n", total);
	return 0;
}
