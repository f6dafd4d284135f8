/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Making, removing and replacing a slot's namespaces: a short-lived
 * helper child unshares them and binds them into the pool directory.
 */
#include "ns/ns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "ns/kinds.h"

/* ---- the helper child ---- */

enum helper_step {
	STEP_DONE,
	STEP_UNSHARE,
	STEP_SHM_RMID_FORCED,
	STEP_PRIME_IPC,
	STEP_MQUEUE,
	STEP_DETACH,
	STEP_BIND,
};

struct helper_report {
	int step;
	int kind;
	int errnum;
};

/* Everything the helper does; paths are built before the fork. */
struct helper_plan {
	int unshare_flags;
	const char *mq;		      /* mount the mqueue fs here */
	bool detach_mq;		      /* unmount mq before mounting */
	const char *detach[NR_KINDS]; /* unmount before binding */
	const char *bind[NR_KINDS];   /* bind the new namespace here */
};

static int helper_report(int fd, int step, int kind)
{
	struct helper_report r = { step, kind, errno };

	if (write(fd, &r, sizeof(r)) != sizeof(r))
		return 2;
	return step == STEP_DONE ? 0 : 1;
}

/* ipc sysctls are per IPC namespace: this writes the helper's new one. */
static int set_shm_rmid_forced(void)
{
	int fd = open("/proc/sys/kernel/shm_rmid_forced", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, "1\n", 2);
	close(fd);
	if (n == 2)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

/*
 * Prime a new IPC namespace (see "SysV ids" above): for each kind, one
 * object made and removed, then <kind>_next_id set to 0. Without the
 * sysctls (no CONFIG_CHECKPOINT_RESTORE) the namespace is left new.
 */
static int prime_ipc(void)
{
	int i, fd, id;
	ssize_t n;

	for (i = 0; i < NR_SYSV; i++) {
		fd = open(rg_ns_sysv_kinds[i].next_id, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return -1;
		id = rg_ns_sysv_kinds[i].make();
		if (id < 0 || rg_ns_sysv_kinds[i].rmid(id) < 0) {
			close(fd);
			return -1;
		}
		n = write(fd, "0\n", 2);
		close(fd);
		if (n != 2) {
			if (n >= 0)
				errno = EIO;
			return -1;
		}
	}
	return 0;
}

/* Runs in the forked child: system calls only (the caller may be threaded). */
static int helper_main(const struct helper_plan *plan, int fd)
{
	int i;

	if (unshare(plan->unshare_flags) < 0)
		return helper_report(fd, STEP_UNSHARE, -1);
	if ((plan->unshare_flags & CLONE_NEWIPC) && set_shm_rmid_forced() < 0)
		return helper_report(fd, STEP_SHM_RMID_FORCED, -1);
	if ((plan->unshare_flags & CLONE_NEWIPC) && prime_ipc() < 0)
		return helper_report(fd, STEP_PRIME_IPC, -1);
	if (plan->detach_mq &&
	    umount2(plan->mq, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 &&
	    errno != EINVAL)
		return helper_report(fd, STEP_DETACH, -1);
	/* the mqueue fs mounted here belongs to the mounter's IPC ns */
	if (plan->mq && mount("mqueue", plan->mq, "mqueue",
			      MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return helper_report(fd, STEP_MQUEUE, -1);
	for (i = 0; i < NR_KINDS; i++) {
		const char *to = plan->bind[i];

		if (plan->detach[i] &&
		    umount2(plan->detach[i], MNT_DETACH | UMOUNT_NOFOLLOW) < 0 &&
		    errno != EINVAL)
			return helper_report(fd, STEP_DETACH, i);
		if (to &&
		    mount(rg_ns_kinds[i].self, to, NULL, MS_BIND, NULL) < 0)
			return helper_report(fd, STEP_BIND, i);
	}
	return helper_report(fd, STEP_DONE, -1);
}

static int helper_error(const struct helper_report *r,
			const struct helper_plan *plan, struct rg_error *err)
{
	int k = r->kind >= 0 && r->kind < NR_KINDS ? r->kind : KIND_IPC;

	switch (r->step) {
	case STEP_UNSHARE:
		return rg_fail(err, r->errnum, "unshare");
	case STEP_SHM_RMID_FORCED:
		return rg_fail(err, r->errnum,
			       "setting kernel.shm_rmid_forced "
			       "in the new IPC namespace");
	case STEP_PRIME_IPC:
		return rg_fail(err, r->errnum,
			       "setting the SysV id sysctls "
			       "(kernel.*_next_id) in the new IPC namespace");
	case STEP_MQUEUE:
		return rg_fail(err, r->errnum, "mounting the mqueue fs on %s",
			       plan->mq);
	case STEP_DETACH:
		return rg_fail(err, r->errnum, "unmounting %s",
			       r->kind < 0 ? plan->mq : plan->detach[k]);
	case STEP_BIND:
		return rg_fail(err, r->errnum, "bind-mounting %s onto %s",
			       rg_ns_kinds[k].self, plan->bind[k]);
	}
	return rg_fail(err, 0, "namespace helper: unknown step %d", r->step);
}

/*
 * Run plan in a forked child and reap it. The child reports success too, so
 * the outcome is known even if another thread's waitpid(-1) reaps it first.
 */
static int run_helper(const struct helper_plan *plan, struct rg_error *err)
{
	struct helper_report r = { .step = -1 };
	int pipefd[2], status = 0, saved;
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return rg_fail(err, errno, "creating a pipe");
	pid = fork();
	if (pid < 0) {
		saved = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return rg_fail(err, saved, "forking the namespace helper");
	}
	if (pid == 0) {
		close(pipefd[0]);
		_exit(helper_main(plan, pipefd[1]));
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != sizeof(r))
		return rg_fail(err, 0, "namespace helper died (status 0x%x)",
			       status);
	if (r.step != STEP_DONE)
		return helper_error(&r, plan, err);
	return 0;
}

/* ---- creation and removal ---- */

/* Unmount everything on path (a half-done creation may have stacked). */
static int detach_all(const char *path, struct rg_error *err)
{
	int i;

	for (i = 0; i < MAX_STACKED; i++) {
		if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			continue;
		if (errno == EINVAL || errno == ENOENT)
			return 0;
		return rg_fail(err, errno, "unmounting %s", path);
	}
	return rg_fail(err, EBUSY, "unmounting %s: still mounted", path);
}

static int remove_piece(const char *path, bool is_dir, struct rg_error *err)
{
	if (detach_all(path, err) < 0)
		return -1;
	if ((is_dir ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		return rg_fail(err, errno, "removing %s", path);
	return 0;
}

/* Remove every piece, also after a failure; the first error is reported. */
static int remove_pieces(const struct rg_ns_paths *p, struct rg_error *err)
{
	int i, ret = 0;

	for (i = 0; i < NR_KINDS; i++)
		if (remove_piece(p->ns[i], false, ret ? NULL : err) < 0)
			ret = -1;
	if (remove_piece(p->mq, true, ret ? NULL : err) < 0)
		ret = -1;
	return ret;
}

static int make_pieces(const struct rg_ns_paths *p, struct rg_error *err)
{
	int i, fd;

	for (i = 0; i < NR_KINDS; i++) {
		fd = open(p->ns[i],
			  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			  0600);
		if (fd < 0)
			return rg_fail(err, errno, "creating %s", p->ns[i]);
		close(fd);
	}
	if (mkdir(p->mq, 0700) < 0)
		return rg_fail(err, errno, "creating %s", p->mq);
	return 0;
}

int rg_ns_create(const char *dir, const char *name, struct rg_error *err)
{
	struct helper_plan plan = {
		.unshare_flags = CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS,
	};
	struct rg_ns_paths p;
	int i;

	if (rg_ns_slot_paths(&p, dir, name, err) < 0 ||
	    remove_pieces(&p, err) < 0)
		goto fail;
	if (make_pieces(&p, err) < 0)
		goto undo;
	plan.mq = p.mq;
	for (i = 0; i < NR_KINDS; i++)
		plan.bind[i] = p.ns[i];
	if (run_helper(&plan, err) < 0)
		goto undo;
	return 0;
undo:
	remove_pieces(&p, NULL);
fail:
	return rg_fail_context(err, "creating the namespaces of slot %s in %s",
			       name, dir);
}

int rg_ns_remove(const char *dir, const char *name, struct rg_error *err)
{
	struct rg_ns_paths p;

	if (rg_ns_slot_paths(&p, dir, name, err) < 0 ||
	    remove_pieces(&p, err) < 0)
		return rg_fail_context(err,
				       "removing the namespaces of slot "
				       "%s in %s",
				       name, dir);
	return 0;
}

/* New namespaces of the kinds in flags (CLONE_NEWIPC, CLONE_NEWNET). */
static int replace(const char *dir, const char *name, int flags,
		   struct rg_error *err)
{
	struct helper_plan plan = { .unshare_flags = flags };
	struct rg_ns_paths p;
	int i;

	if (rg_ns_slot_paths(&p, dir, name, err) < 0)
		goto fail;
	for (i = 0; i < NR_KINDS; i++) {
		if (!(flags & rg_ns_kinds[i].type))
			continue;
		plan.detach[i] = p.ns[i];
		plan.bind[i] = p.ns[i];
	}
	/* the mqueue fs shows the queues of the IPC ns that mounted it */
	if (flags & CLONE_NEWIPC) {
		plan.mq = p.mq;
		plan.detach_mq = true;
	}
	if (run_helper(&plan, err) < 0)
		goto fail;
	return 0;
fail:
	return rg_fail_context(err,
			       "replacing the %s%s%s namespace of slot "
			       "%s in %s",
			       flags & CLONE_NEWIPC ? "IPC" : "",
			       (flags & CLONE_NEWIPC) && (flags & CLONE_NEWNET) ?
				       " and " :
				       "",
			       flags & CLONE_NEWNET ? "net" : "", name, dir);
}

int rg_ns_replace_net(const char *dir, const char *name, struct rg_error *err)
{
	return replace(dir, name, CLONE_NEWNET, err);
}

int rg_ns_replace_ipc(const char *dir, const char *name, struct rg_error *err)
{
	return replace(dir, name, CLONE_NEWIPC, err);
}

int rg_ns_refresh(const char *dir, const char *name,
		  const struct rg_ns_scrub *report, int fds[RG_NS_COUNT],
		  struct rg_error *err)
{
	int flags = (report->ipc_used ? CLONE_NEWIPC : 0) |
		    (report->unix_sockets_left ? CLONE_NEWNET : 0);

	if (!flags)
		return 0;
	/* the fds would keep the old namespaces alive */
	rg_ns_close(fds);
	if (replace(dir, name, flags, err) < 0)
		return -1;
	return rg_ns_open(dir, name, fds, err);
}
