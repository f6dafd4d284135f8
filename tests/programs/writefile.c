/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * writefile PATH BYTES: create PATH and write BYTES bytes to it (at most
 * 64 MiB).  Exceeding RLIMIT_FSIZE kills us with SIGXFSZ (default action).
 */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	static char buf[4096];
	long total, done = 0;
	int fd;

	if (argc != 3)
		die_usage(argv[0], "PATH BYTES");
	total = parse_long(argv[2]);
	if (total < 0 || total > (64L << 20)) {
		fprintf(stderr, "writefile: refusing %ld bytes\n", total);
		return 2;
	}
	memset(buf, 'w', sizeof(buf));
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror("writefile: open");
		return 1;
	}
	while (done < total) {
		size_t len = sizeof(buf);
		ssize_t n;

		if ((long)len > total - done)
			len = (size_t)(total - done);
		n = write(fd, buf, len);
		if (n < 0) {
			perror("writefile: write");
			return 1;
		}
		done += n;
	}
	close(fd);
	printf("wrote %ld bytes\n", done);
	return 0;
}
