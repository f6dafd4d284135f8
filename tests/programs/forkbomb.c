/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * forkbomb [SECONDS]: a bounded fork bomb.  For SECONDS (default 1) every
 * process keeps forking; children join in.  Safety caps independent of any
 * RLIMIT_NPROC: each process forks at most 4 children and the tree is at most
 * 3 levels deep (so at most 85 processes ever exist).  After the deadline the
 * non-main processes sleep 30 s (so that they must be killed by the
 * supervisor) and the main process prints the totals of successful and
 * failed forks of the whole tree and exits 0.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define MAX_CHILDREN 4
#define MAX_DEPTH 3

struct counters {
	long forks;
	long fails;
	int first_errno;
};

int main(int argc, char **argv)
{
	struct counters *cnt;
	double deadline, secs = 1;
	int depth = 0, children = 0;
	pid_t main_pid = getpid();

	if (argc > 2)
		die_usage(argv[0], "[SECONDS]");
	if (argc == 2)
		secs = parse_seconds(argv[1]);
	if (secs > 10)
		secs = 10;

	cnt = mmap(NULL, sizeof(*cnt), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED) {
		perror("forkbomb: mmap");
		return 1;
	}
	fflush(stdout);
	deadline = clock_seconds(CLOCK_MONOTONIC) + secs;

	while (clock_seconds(CLOCK_MONOTONIC) < deadline) {
		pid_t pid;

		if (children >= MAX_CHILDREN || depth >= MAX_DEPTH) {
			sleep_seconds(0.01);
			continue;
		}
		pid = fork();
		if (pid < 0) {
			if (__atomic_fetch_add(&cnt->fails, 1,
					       __ATOMIC_SEQ_CST) == 0)
				cnt->first_errno = errno;
			sleep_seconds(0.005);
			continue;
		}
		if (pid == 0) {
			depth++;
			children = 0;
			continue;
		}
		children++;
		__atomic_fetch_add(&cnt->forks, 1, __ATOMIC_SEQ_CST);
	}

	if (getpid() != main_pid) {
		sleep_seconds(30);
		_exit(0);
	}
	printf("forks=%ld fails=%ld errno=%s\n",
	       __atomic_load_n(&cnt->forks, __ATOMIC_SEQ_CST),
	       __atomic_load_n(&cnt->fails, __ATOMIC_SEQ_CST),
	       cnt->first_errno ? strerrorname_np(cnt->first_errno) : "none");
	return 0;
}
