/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * output BYTES [stdout|stderr|both]: write BYTES bytes of a fixed pattern to
 * the chosen stream(s) (default stdout), then exit 0.  The pattern is byte
 * i = 'a' + i % 26, with a newline every 64 bytes, so tests can regenerate it.
 */
#include <unistd.h>

#include "common.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void fill(char *buf, long off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		long pos = off + (long)i;

		buf[i] = (pos % 64 == 63) ? '\n' : (char)('a' + pos % 26);
	}
}

int main(int argc, char **argv)
{
	static char buf[8192];
	int to_out = 1, to_err = 0;
	long total, off;

	if (argc != 2 && argc != 3)
		die_usage(argv[0], "BYTES [stdout|stderr|both]");
	total = parse_long(argv[1]);
	if (total < 0 || total > (1L << 30)) {
		fprintf(stderr, "output: refusing %ld bytes\n", total);
		return 2;
	}
	if (argc == 3) {
		if (strcmp(argv[2], "stdout") == 0) {
			to_out = 1;
		} else if (strcmp(argv[2], "stderr") == 0) {
			to_out = 0;
			to_err = 1;
		} else if (strcmp(argv[2], "both") == 0) {
			to_err = 1;
		} else {
			die_usage(argv[0], "BYTES [stdout|stderr|both]");
		}
	}

	for (off = 0; off < total; off += (long)sizeof(buf)) {
		size_t len = sizeof(buf);

		if ((long)len > total - off)
			len = (size_t)(total - off);
		fill(buf, off, len);
		if (to_out && write_all(1, buf, len) < 0)
			return 1;
		if (to_err && write_all(2, buf, len) < 0)
			return 1;
	}
	return 0;
}
