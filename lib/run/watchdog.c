/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watchdog is created with CLONE_VM | CLONE_FILES: no page tables or
 * fd table to copy (about 20 us), and it always sees runguard's current
 * fds and slot, so a library caller's other runs lose no fd to it. It is
 * its own thread group, so a SIGKILL of runguard leaves it alive; it
 * waits on a pidfd of runguard and acts only once runguard has exited.
 * Until then it touches nothing, and runguard dismisses it with SIGKILL
 * before releasing the slot.
 */
#include "run/watchdog.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "run/slot.h"

/* kill_all and the v1 freezer wait are shallow; ASan needs more */
#define WATCHDOG_STACK_SIZE (256 * 1024)

/*
 * The watchdog task. Until runguard has exited it shares runguard's memory
 * and thread pointer (CLONE_VM, no TLS of its own), and runguard may
 * SIGKILL it at any instruction: a lock it held then would stay taken for
 * good (the prctl interceptor of an ASan build took the sanitizer's thread
 * registry lock, and runguard hung in its exit-time leak check). So it
 * makes raw system calls only, uninstrumented, with every signal blocked
 * (SIGKILL aside, so a Ctrl-C to the process group does not take it down
 * with runguard); errno, runguard's own, is never read (a failed call
 * would write it; none of these fails with valid arguments).
 */
__attribute__((no_sanitize("address", "undefined"))) static int watch(void *arg)
{
	struct rg_watchdog *w = arg;
	uint64_t all = ~(uint64_t)0; /* the kernel's sigset_t */
	struct pollfd p = { .fd = w->pidfd, .events = POLLIN };

	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
	syscall(SYS_prctl, PR_SET_NAME, "runguard-watch", 0, 0, 0);
	for (;;) {
		long n = syscall(SYS_ppoll, &p, 1, NULL, NULL, 0);

		if (n == 1 && (p.revents & POLLIN))
			break;
		if (n == 1) /* POLLNVAL: cannot watch; sleep until killed */
			syscall(SYS_ppoll, NULL, 0, NULL, NULL, 0);
	}
	/* runguard is gone: nothing else uses this memory any more */
	if (w->slot)
		rg_slot_abandon(w->slot);
	_exit(0);
}

static void free_stack(struct rg_watchdog *w)
{
	if (w->stack)
		munmap(w->stack, WATCHDOG_STACK_SIZE);
	w->stack = NULL;
}

static int map_stack(struct rg_watchdog *w, struct rg_error *err)
{
	w->stack = mmap(NULL, WATCHDOG_STACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (w->stack == MAP_FAILED) {
		w->stack = NULL;
		return rg_fail(err, errno, "watchdog stack");
	}
	/* an overflow faults instead of writing into runguard's memory */
	if (mprotect(w->stack, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE) < 0) {
		free_stack(w);
		return rg_fail(err, errno, "watchdog stack guard");
	}
	return 0;
}

/* For _cleanup_: undo a start that failed half-way (NULL once started). */
static void undo_start(struct rg_watchdog **w)
{
	if (!*w)
		return;
	free_stack(*w);
	close((*w)->pidfd);
	memset(*w, 0, sizeof(**w));
}

int rg_watchdog_start(struct rg_watchdog *w, struct rg_slot *slot,
		      struct rg_error *err)
{
	_cleanup_(undo_start) struct rg_watchdog *undo = NULL;

	memset(w, 0, sizeof(*w));
	w->pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	/* before 5.3, or refused by a container's filter: run unwatched */
	if (w->pidfd < 0 && (errno == ENOSYS || errno == EPERM))
		return 0;
	if (w->pidfd < 0)
		return rg_fail(err, errno, "watchdog: pidfd_open");
	undo = w;
	if (map_stack(w, err) < 0)
		return -1;
	/* from the clone on, the table grows only after an RCU grace period */
	rg_fd_table_reserve(w->pidfd);
	w->slot = slot;
	w->pid = clone(watch, (char *)w->stack + WATCHDOG_STACK_SIZE,
		       CLONE_VM | CLONE_FILES | SIGCHLD, w);
	if (w->pid < 0)
		return rg_fail(err, errno, "starting the watchdog");
	undo = NULL; /* running: rg_watchdog_stop() ends it */
	return 0;
}

void rg_watchdog_stop(struct rg_watchdog *w)
{
	if (w->pid <= 0)
		return;
	/* it is our child and unreaped: the pid cannot have been reused */
	kill(w->pid, SIGKILL);
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free_stack(w);
	close(w->pidfd);
	memset(w, 0, sizeof(*w));
}
