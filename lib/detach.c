/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "detach.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static _Noreturn void detached_main(int (*fn)(void *arg), void *arg)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0)
		_exit(1);
	_exit(fn(arg));
}

bool rg_detach(int (*fn)(void *arg), void *arg)
{
	pid_t mid = fork(), pid;
	int status;

	if (mid < 0)
		return false;
	if (mid == 0) {
		pid = fork();
		if (pid == 0)
			detached_main(fn, arg);
		_exit(pid < 0);
	}
	while ((pid = waitpid(mid, &status, 0)) < 0 && errno == EINTR)
		;
	return pid == mid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
