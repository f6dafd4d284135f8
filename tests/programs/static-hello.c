/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * static-hello: a statically linked program for chroot tests.
 *   static-hello               print "hello from static", cwd and uid/gid
 *   static-hello cat           copy stdin to stdout, cwd to stderr
 *   static-hello compile OUT IN...
 *                              concatenate the INs into OUT (mode 0755) and
 *                              print $ENTRY_POINT (a stand-in compile script)
 *   static-hello exit N        exit with status N
 *   static-hello stderr-first  write a line to stderr, then one to stdout
 * Invoked under another name (argv[0] basename), it plays a DOMjudge part:
 *   program                    like "cat" (a submission echoing its input)
 *   run OUT MEMLIMIT IN...     like "compile OUT IN..." (a compile script)
 */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

static int copy_fd(int in, int out)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		ssize_t off = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (off < n) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0)
				return -1;
			off += w;
		}
	}
	return 0;
}

static void print_cwd(FILE *f)
{
	char cwd[4096];

	if (getcwd(cwd, sizeof(cwd)))
		fprintf(f, "cwd: %s\n", cwd);
	else
		fprintf(f, "cwd: error %s\n", strerror(errno));
}

static int do_compile(const char *outname, char **ins, int nins)
{
	const char *ep = getenv("ENTRY_POINT");
	int out, i;

	out = open(outname, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0) {
		fprintf(stderr, "cannot create %s: %s\n", outname,
			strerror(errno));
		return 1;
	}
	for (i = 0; i < nins; i++) {
		int in = open(ins[i], O_RDONLY);

		if (in < 0 || copy_fd(in, out) < 0) {
			fprintf(stderr, "cannot copy %s: %s\n", ins[i],
				strerror(errno));
			return 1;
		}
		close(in);
	}
	close(out);
	printf("compiled %s\n", outname);
	printf("ENTRY_POINT=%s\n", ep ? ep : "(unset)");
	print_cwd(stdout);
	fprintf(stderr, "compiler warning: none\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');

	base = base ? base + 1 : argv[0];
	if (strcmp(base, "program") == 0) {
		if (copy_fd(0, 1) < 0)
			return 1;
		print_cwd(stderr);
		return 0;
	}
	if (strcmp(base, "run") == 0) {
		/* run OUT MEMLIMIT IN...: MEMLIMIT is ignored. */
		if (argc < 4)
			die_usage(argv[0], "OUT MEMLIMIT IN...");
		return do_compile(argv[1], argv + 3, argc - 3);
	}
	if (argc >= 2 && strcmp(argv[1], "cat") == 0) {
		if (copy_fd(0, 1) < 0)
			return 1;
		print_cwd(stderr);
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "compile") == 0)
		return do_compile(argv[2], argv + 3, argc - 3);
	if (argc == 3 && strcmp(argv[1], "exit") == 0)
		return (int)(parse_long(argv[2]) & 0xff);
	if (argc == 2 && strcmp(argv[1], "stderr-first") == 0) {
		/* at once: the streams' order must not depend on our pace */
		return write(2, "stderr\n", 7) != 7 ||
		       write(1, "stdout\n", 7) != 7;
	}
	if (argc != 1)
		die_usage(argv[0],
			  "[cat | compile OUT IN... | exit N | stderr-first]");

	printf("hello from static\n");
	print_cwd(stdout);
	printf("uid: %d gid: %d\n", (int)getuid(), (int)getgid());
	return 0;
}
