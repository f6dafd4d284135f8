/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * forker [N [SECONDS]]: start N (default 3) children that each call setsid()
 * and fork once more, so that a grandchild in a new session outlives both
 * them and us; the grandchildren sleep SECONDS (default 20) and keep the
 * inherited stdout/stderr open.  The main process waits until every
 * grandchild is set up, prints their pids and exits 0 immediately.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	double secs = 20;
	long n = 3, i;
	int sync_pipe[2];
	char c;

	if (argc > 3)
		die_usage(argv[0], "[N [SECONDS]]");
	if (argc >= 2)
		n = parse_long(argv[1]);
	if (argc >= 3)
		secs = parse_seconds(argv[2]);
	if (n < 1 || n > 16) {
		fprintf(stderr, "forker: N must be 1..16\n");
		return 2;
	}
	if (pipe(sync_pipe) < 0) {
		perror("forker: pipe");
		return 1;
	}
	fflush(stdout);

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("forker: fork");
			return 1;
		}
		if (pid == 0) {
			pid_t gc;

			close(sync_pipe[0]);
			if (setsid() < 0)
				perror("forker: setsid");
			gc = fork();
			if (gc < 0)
				_exit(1);
			if (gc > 0)
				_exit(0);
			/* Grandchild: orphaned, in its own session. */
			printf("grandchild %d sid %d\n", (int)getpid(),
			       (int)getsid(0));
			fflush(stdout);
			if (write(sync_pipe[1], "x", 1) != 1)
				_exit(1);
			close(sync_pipe[1]);
			sleep_seconds(secs);
			printf("grandchild %d still alive after %.1f s\n",
			       (int)getpid(), secs);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	close(sync_pipe[1]);
	for (i = 0; i < n; i++) {
		if (read(sync_pipe[0], &c, 1) != 1) {
			fprintf(stderr, "forker: grandchild set-up failed\n");
			return 1;
		}
	}
	printf("forker main exiting\n");
	return 0;
}
