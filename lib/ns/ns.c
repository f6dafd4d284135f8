/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Persisted namespaces of pooled slots: nsfs bind mounts in a private pool
 * directory, created by a short-lived helper child, joined per run, scrubbed
 * between runs. See ns.h.
 */
#include "ns/ns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

/* ipc/mqueue.c; not in the uapi headers */
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif

#define PREPARE_LOCK ".ns-prepare.lock"
/* stacked mounts on one piece: only from racing creations, never many */
#define MAX_STACKED 16
/* in-flight unix sockets: how long to wait for the garbage collector */
#define UNIX_GC_WAIT_MS 200
#define UNIX_GC_KICK_MS 20

enum ns_kind_id { KIND_IPC, KIND_NET, KIND_UTS, NR_KINDS };

static const struct ns_kind {
	const char *name;	/* file suffix and /proc/.../ns/<name> */
	const char *self;	/* the helper's own, to bind */
	const char *thread;	/* the calling thread's, to come back */
	int type;		/* CLONE_NEW*, also NS_GET_NSTYPE's answer */
	enum rg_ns_index index;
} kinds[NR_KINDS] = {
	[KIND_IPC] = { "ipc", "/proc/self/ns/ipc", "/proc/thread-self/ns/ipc",
		       CLONE_NEWIPC, RG_NS_IPC },
	[KIND_NET] = { "net", "/proc/self/ns/net", "/proc/thread-self/ns/net",
		       CLONE_NEWNET, RG_NS_NET },
	[KIND_UTS] = { "uts", "/proc/self/ns/uts", "/proc/thread-self/ns/uts",
		       CLONE_NEWUTS, RG_NS_UTS },
};

struct slot_paths {
	char ns[NR_KINDS][PATH_MAX];
	char mq[PATH_MAX];
};

/* ---- paths ---- */

static int check_name(const char *name, struct rg_error *err)
{
	if (!*name || strchr(name, '/'))
		return rg_fail(err, EINVAL, "invalid slot name \"%s\"", name);
	return 0;
}

static int slot_path(char *buf, const char *dir, const char *name,
		     const char *suffix, struct rg_error *err)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s.%s", dir, name, suffix);

	if (n < 0 || n >= PATH_MAX)
		return rg_fail(err, ENAMETOOLONG, "path of %s/%s.%s", dir,
			       name, suffix);
	return 0;
}

static int slot_paths(struct slot_paths *p, const char *dir,
		      const char *name, struct rg_error *err)
{
	int i;

	if (check_name(name, err) < 0)
		return -1;
	for (i = 0; i < NR_KINDS; i++)
		if (slot_path(p->ns[i], dir, name, kinds[i].name, err) < 0)
			return -1;
	return slot_path(p->mq, dir, name, "mq", err);
}

/* ---- the pool directory ---- */

static int mkdir_p(const char *dir, struct rg_error *err)
{
	char buf[PATH_MAX];
	struct stat st;
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return rg_fail(err, ENAMETOOLONG, "%s", dir);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return rg_fail(err, errno, "creating %s", buf);
		*p = '/';
	}
	/*
	 * root's alone: the slots' mqueue mounts below it are mode 1777 (the
	 * kernel's), and a local user planted a queue there for a run
	 */
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return rg_fail(err, errno, "creating %s", buf);
	if (stat(buf, &st) < 0)
		return rg_fail(err, errno, "stat %s", buf);
	if (!S_ISDIR(st.st_mode))
		return rg_fail(err, ENOTDIR, "%s", buf);
	return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

struct mount_entry {
	int id;
	int parent;
	bool private;
};

/*
 * Parse one mountinfo line ("id parent maj:min root mountpoint opts
 * [optional fields] - fstype ..."). Returns 1 if it is a mount on path.
 */
static int parse_mountinfo(char *line, const char *path,
			   struct mount_entry *m)
{
	char *save = NULL, *tok;
	int i;

	m->private = true;
	for (i = 0, tok = strtok_r(line, " \n", &save); tok;
	     i++, tok = strtok_r(NULL, " \n", &save)) {
		if (i == 0) {
			m->id = atoi(tok);
		} else if (i == 1) {
			m->parent = atoi(tok);
		} else if (i == 4) {
			unescape(tok);
			if (strcmp(tok, path))
				return 0;
		} else if (i >= 6 && !strcmp(tok, "-")) {
			return 1;
		} else if (i >= 6 && (!strncmp(tok, "shared:", 7) ||
				      !strncmp(tok, "master:", 7))) {
			m->private = false;
		}
	}
	return 0;
}

/*
 * Is the topmost mount on path private? 1 yes, 0 no (or no mount on
 * path). The topmost is the one no other mount on path is stacked on.
 */
static int top_mount_private(const char *path, struct rg_error *err)
{
	struct mount_entry m[MAX_STACKED], cur;
	size_t cap = 0, n = 0, i, j;
	char *line = NULL;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return rg_fail(err, errno, "opening /proc/self/mountinfo");
	while (getline(&line, &cap, f) > 0)
		if (parse_mountinfo(line, path, &cur) && n < MAX_STACKED)
			m[n++] = cur;
	free(line);
	fclose(f);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n && m[j].parent != m[i].id; j++)
			;
		if (j == n)
			return m[i].private;
	}
	return 0;
}

static int lock_dir(const char *dir, struct rg_error *err)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, PREPARE_LOCK) >=
	    (int)sizeof(path))
		return rg_fail(err, ENAMETOOLONG, "%s/%s", dir, PREPARE_LOCK);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return rg_fail(err, errno, "opening %s", path);
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			rg_fail(err, errno, "locking %s", path);
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int make_private_mount(const char *dir, struct rg_error *err)
{
	int ret = top_mount_private(dir, err);

	if (ret)
		return ret < 0 ? -1 : 0;
	/*
	 * A bind of dir onto itself is a mount of our own, whatever dir's
	 * file system is; its propagation can then be changed without
	 * touching anyone else's mount.
	 */
	if (mount(dir, dir, NULL, MS_BIND, NULL) < 0)
		return rg_fail(err, errno, "bind-mounting %s onto itself", dir);
	if (mount(NULL, dir, NULL, MS_PRIVATE, NULL) < 0) {
		rg_fail(err, errno, "making %s a private mount", dir);
		umount2(dir, MNT_DETACH);
		return -1;
	}
	return 0;
}

int rg_ns_prepare_dir(const char *dir, struct rg_error *err)
{
	char real[PATH_MAX];
	int lock, ret;

	if (mkdir_p(dir, err) < 0)
		goto fail;
	/* mountinfo shows canonical paths */
	if (!realpath(dir, real)) {
		rg_fail(err, errno, "resolving %s", dir);
		goto fail;
	}
	lock = lock_dir(real, err);
	if (lock < 0)
		goto fail;
	ret = make_private_mount(real, err);
	close(lock);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	return rg_fail_context(err, "preparing the namespace directory %s",
			       dir);
}

/* ---- SysV ids ---- */

/*
 * A program sees the ids its SysV objects get, and they must be those of
 * a new IPC namespace: otherwise they tell how many objects earlier runs
 * in the slot made. The kernel places an object at the id in
 * <kind>_next_id when that sysctl is not -1 (CONFIG_CHECKPOINT_RESTORE),
 * and any allocation sets it back to -1 (ipc/util.c, ipc_idr_alloc).
 * Neither the allocation cursor nor the sequence number can be reset.
 *
 * So a slot's IPC namespace is primed when it is made: one object of each
 * kind made and removed (the cursor is then where a new namespace's first
 * object leaves it), then <kind>_next_id set to 0 (where a new namespace
 * places its first object). A run then gets exactly a new namespace's
 * ids, and a <kind>_next_id that reads 0 after the run proves that it
 * made no object of that kind: nothing to scrub, nothing to replace. One
 * that reads -1 makes the scrub remove the objects and ask for a new
 * namespace (rg_ns_refresh). A program can tell a primed namespace only
 * by reading 0 in the sysctl where a new one reads -1.
 */

/* glibc leaves this to the caller */
union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

/*
 * How many objects the calling thread's IPC namespace has: one cheap
 * system call, where listing /proc/sysvipc costs an open, two reads and a
 * close. -1 if it cannot tell (then the listing decides).
 */
static int shm_in_use(void)
{
	struct shm_info info;

	if (shmctl(0, SHM_INFO, (struct shmid_ds *)&info) < 0)
		return -1;
	return info.used_ids;
}

static int sem_in_use(void)
{
	struct seminfo info;
	union semun arg = { .__buf = &info };

	if (semctl(0, 0, SEM_INFO, arg) < 0)
		return -1;
	return info.semusz;
}

static int msg_in_use(void)
{
	struct msginfo info;

	if (msgctl(0, MSG_INFO, (struct msqid_ds *)&info) < 0)
		return -1;
	return info.msgpool;
}

static int make_shm(void)
{
	return shmget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static int make_sem(void)
{
	return semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static int make_msg(void)
{
	return msgget(IPC_PRIVATE, IPC_CREAT | 0600);
}

static int rm_shm(int id)
{
	return shmctl(id, IPC_RMID, NULL);
}

static int rm_sem(int id)
{
	return semctl(id, 0, IPC_RMID);
}

static int rm_msg(int id)
{
	return msgctl(id, IPC_RMID, NULL);
}

enum { SYSV_SHM, SYSV_SEM, SYSV_MSG, NR_SYSV };

/* Paths below /proc show the IPC namespace of the thread that opens them. */
static const struct sysv_kind {
	const char *list;	/* one line per object, after a header */
	const char *next_id;
	int (*in_use)(void);
	int (*make)(void);
	int (*rmid)(int id);
} sysv_kinds[NR_SYSV] = {
	[SYSV_SHM] = { "/proc/sysvipc/shm", "/proc/sys/kernel/shm_next_id",
		       shm_in_use, make_shm, rm_shm },
	[SYSV_SEM] = { "/proc/sysvipc/sem", "/proc/sys/kernel/sem_next_id",
		       sem_in_use, make_sem, rm_sem },
	[SYSV_MSG] = { "/proc/sysvipc/msg", "/proc/sys/kernel/msg_next_id",
		       msg_in_use, make_msg, rm_msg },
};

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
	const char *mq;			/* mount the mqueue fs here */
	bool detach_mq;			/* unmount mq before mounting */
	const char *detach[NR_KINDS];	/* unmount before binding */
	const char *bind[NR_KINDS];	/* bind the new namespace here */
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
	int fd = open("/proc/sys/kernel/shm_rmid_forced",
		      O_WRONLY | O_CLOEXEC);
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
		fd = open(sysv_kinds[i].next_id, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return -1;
		id = sysv_kinds[i].make();
		if (id < 0 || sysv_kinds[i].rmid(id) < 0) {
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
	if (plan->detach_mq && umount2(plan->mq, MNT_DETACH |
				       UMOUNT_NOFOLLOW) < 0 && errno != EINVAL)
		return helper_report(fd, STEP_DETACH, -1);
	/* the mqueue fs mounted here belongs to the mounter's IPC ns */
	if (plan->mq && mount("mqueue", plan->mq, "mqueue",
			      MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return helper_report(fd, STEP_MQUEUE, -1);
	for (i = 0; i < NR_KINDS; i++) {
		const char *to = plan->bind[i];

		if (plan->detach[i] && umount2(plan->detach[i], MNT_DETACH |
					       UMOUNT_NOFOLLOW) < 0 &&
		    errno != EINVAL)
			return helper_report(fd, STEP_DETACH, i);
		if (to && mount(kinds[i].self, to, NULL, MS_BIND, NULL) < 0)
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
		return rg_fail(err, r->errnum, "setting kernel.shm_rmid_forced "
			       "in the new IPC namespace");
	case STEP_PRIME_IPC:
		return rg_fail(err, r->errnum, "setting the SysV id sysctls "
			       "(kernel.*_next_id) in the new IPC namespace");
	case STEP_MQUEUE:
		return rg_fail(err, r->errnum, "mounting the mqueue fs on %s",
			       plan->mq);
	case STEP_DETACH:
		return rg_fail(err, r->errnum, "unmounting %s",
			       r->kind < 0 ? plan->mq : plan->detach[k]);
	case STEP_BIND:
		return rg_fail(err, r->errnum, "bind-mounting %s onto %s",
			       kinds[k].self, plan->bind[k]);
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
static int remove_pieces(const struct slot_paths *p, struct rg_error *err)
{
	int i, ret = 0;

	for (i = 0; i < NR_KINDS; i++)
		if (remove_piece(p->ns[i], false, ret ? NULL : err) < 0)
			ret = -1;
	if (remove_piece(p->mq, true, ret ? NULL : err) < 0)
		ret = -1;
	return ret;
}

static int make_pieces(const struct slot_paths *p, struct rg_error *err)
{
	int i, fd;

	for (i = 0; i < NR_KINDS; i++) {
		fd = open(p->ns[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
			  O_NOFOLLOW, 0600);
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
	struct slot_paths p;
	int i;

	if (slot_paths(&p, dir, name, err) < 0 || remove_pieces(&p, err) < 0)
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
	struct slot_paths p;

	if (slot_paths(&p, dir, name, err) < 0 || remove_pieces(&p, err) < 0)
		return rg_fail_context(err, "removing the namespaces of slot "
				       "%s in %s", name, dir);
	return 0;
}

/* New namespaces of the kinds in flags (CLONE_NEWIPC, CLONE_NEWNET). */
static int replace(const char *dir, const char *name, int flags,
		   struct rg_error *err)
{
	struct helper_plan plan = { .unshare_flags = flags };
	struct slot_paths p;
	int i;

	if (slot_paths(&p, dir, name, err) < 0)
		goto fail;
	for (i = 0; i < NR_KINDS; i++) {
		if (!(flags & kinds[i].type))
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
	return rg_fail_context(err, "replacing the %s%s%s namespace of slot "
			       "%s in %s", flags & CLONE_NEWIPC ? "IPC" : "",
			       (flags & CLONE_NEWIPC) &&
			       (flags & CLONE_NEWNET) ? " and " : "",
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

/* ---- per run: open ---- */

static int open_ns(const char *path, const struct ns_kind *k,
		   struct rg_error *err)
{
	struct statfs sfs;
	int fd, type;

	/* the bind mount itself, never a link put there */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rg_fail(err, errno, "opening %s", path);
	if (fstatfs(fd, &sfs) < 0) {
		rg_fail(err, errno, "fstatfs %s", path);
		goto fail;
	}
	/* the empty file under the mount: after a reboot or an unmount */
	if (sfs.f_type != NSFS_MAGIC) {
		rg_fail(err, ESTALE, "%s is not a mounted namespace", path);
		goto fail;
	}
	type = ioctl(fd, NS_GET_NSTYPE);
	/* ENOTTY: before 4.11, the type cannot be asked */
	if (type < 0 && errno != ENOTTY) {
		rg_fail(err, errno, "NS_GET_NSTYPE on %s", path);
		goto fail;
	}
	if (type >= 0 && type != k->type) {
		rg_fail(err, ESTALE, "%s is not a %s namespace", path, k->name);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

void rg_ns_close(int fds[RG_NS_COUNT])
{
	int i;

	for (i = 0; i < RG_NS_COUNT; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int rg_ns_open(const char *dir, const char *name, int fds[RG_NS_COUNT],
	       struct rg_error *err)
{
	char path[PATH_MAX];
	int i, fd;

	for (i = 0; i < RG_NS_COUNT; i++)
		fds[i] = -1;
	if (check_name(name, err) < 0)
		goto fail;
	for (i = 0; i < NR_KINDS; i++) {
		if (slot_path(path, dir, name, kinds[i].name, err) < 0)
			goto fail;
		fd = open_ns(path, &kinds[i], err);
		if (fd < 0)
			goto fail;
		fds[kinds[i].index] = fd;
	}
	return 0;
fail:
	rg_ns_close(fds);
	return rg_fail_context(err, "opening the namespaces of slot %s", name);
}

/* ---- per run: scrub ---- */

/* Join ns_fd in the calling thread; *home is the way back. */
static int enter_ns(int ns_fd, const struct ns_kind *k, int *home,
		    struct rg_error *err)
{
	*home = open(k->thread, O_RDONLY | O_CLOEXEC);
	if (*home < 0)
		return rg_fail(err, errno, "opening %s", k->thread);
	if (setns(ns_fd, k->type) < 0) {
		rg_fail(err, errno, "joining the slot's %s namespace", k->name);
		close(*home);
		return -1;
	}
	return 0;
}

/* Overrides any earlier error: a thread left in the slot's ns is worse. */
static int leave_ns(int home, const struct ns_kind *k,
		    struct rg_ns_scrub *report, struct rg_error *err)
{
	int ret = setns(home, k->type), saved = errno;

	close(home);
	if (ret == 0)
		return 0;
	report->thread_stranded = true;
	return rg_fail(err, saved,
		       "cannot return to the thread's own %s namespace",
		       k->name);
}

/*
 * Call fn on every line after the first (a header) of the proc file fd,
 * from its current offset. Proc lines are short: one longer than the
 * buffer is E2BIG.
 */
static int for_each_line(int fd, int (*fn)(char *line, void *arg), void *arg)
{
	char buf[4096], *start, *nl;
	bool header = true;
	size_t have = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
		start = buf;
		while ((nl = memchr(start, '\n', buf + have - start))) {
			*nl = '\0';
			if (!header && fn(start, arg) < 0)
				return -1;
			header = false;
			start = nl + 1;
		}
		have -= start - buf;
		memmove(buf, start, have);
		if (have == sizeof(buf) - 1) {
			errno = E2BIG;
			return -1;
		}
	}
	if (n < 0)
		return -1;
	if (have && !header) {
		buf[have] = '\0';
		return fn(buf, arg);
	}
	return 0;
}

struct sysv_pass {
	const struct sysv_kind *kind;
	unsigned int *removed;
	int failed_id;
};

/* One line of /proc/sysvipc/{shm,sem,msg}: "key id perms ...". */
static int remove_sysv_line(char *line, void *arg)
{
	struct sysv_pass *pass = arg;
	char *key_end, *end;
	long id;

	strtol(line, &key_end, 10);
	id = strtol(key_end, &end, 10);
	if (key_end == line || end == key_end || id < 0 || id > INT_MAX) {
		errno = EPROTO;
		pass->failed_id = -1;
		return -1;
	}
	if (pass->kind->rmid((int)id) < 0) {
		/* gone meanwhile: fine */
		if (errno == EINVAL || errno == EIDRM)
			return 0;
		pass->failed_id = (int)id;
		return -1;
	}
	(*pass->removed)++;
	return 0;
}

static int remove_sysv(struct sysv_pass *pass, struct rg_error *err)
{
	const char *path = pass->kind->list;
	int fd, ret, saved;

	if (pass->kind->in_use() == 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rg_fail(err, errno, "opening %s", path);
	pass->failed_id = -1;
	ret = for_each_line(fd, remove_sysv_line, pass);
	saved = errno;
	close(fd);
	if (ret == 0)
		return 0;
	if (pass->failed_id >= 0)
		return rg_fail(err, saved, "removing id %d of %s",
			       pass->failed_id, path);
	return rg_fail(err, saved, "reading %s", path);
}

/* What a kind's <kind>_next_id tells about the run. */
enum sysv_ids {
	IDS_UNTOUCHED,	/* primed, and no object made since */
	IDS_USED,	/* an object was made (or it was never primed) */
	IDS_UNKNOWN,	/* no such sysctl: only objects left show a use */
};

static int sysv_ids_state(const struct sysv_kind *k, enum sysv_ids *state,
			  struct rg_error *err)
{
	int fd = open(k->next_id, O_RDONLY | O_CLOEXEC);
	char buf[16];
	ssize_t n;

	*state = IDS_UNKNOWN;
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return rg_fail(err, errno, "opening %s", k->next_id);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return rg_fail(err, errno, "reading %s", k->next_id);
	*state = n >= 2 && buf[0] == '0' && buf[1] == '\n' ? IDS_UNTOUCHED :
							       IDS_USED;
	return 0;
}

static int scrub_sysv_kind(const struct sysv_kind *k, unsigned int *removed,
			   struct rg_ns_scrub *report, struct rg_error *err)
{
	struct sysv_pass pass = { k, removed, -1 };
	enum sysv_ids state;

	if (sysv_ids_state(k, &state, err) < 0)
		return -1;
	/* every object allocates an id: there is none */
	if (state == IDS_UNTOUCHED)
		return 0;
	if (remove_sysv(&pass, err) < 0)
		return -1;
	if (state == IDS_USED || *removed)
		report->ipc_used = true;
	return 0;
}

/* The SysV objects of the calling thread's IPC namespace. */
static int scrub_sysv_here(struct rg_ns_scrub *report, struct rg_error *err)
{
	unsigned int *removed[NR_SYSV] = {
		[SYSV_SHM] = &report->shm, [SYSV_SEM] = &report->sem,
		[SYSV_MSG] = &report->msg,
	};
	int i, ret = 0;

	for (i = 0; i < NR_SYSV && !ret; i++)
		ret = scrub_sysv_kind(&sysv_kinds[i], removed[i], report, err);
	return ret;
}

static int scrub_sysv(int ipc_fd, struct rg_ns_scrub *report,
		      struct rg_error *err)
{
	const struct ns_kind *k = &kinds[KIND_IPC];
	int home, ret;

	if (enter_ns(ipc_fd, k, &home, err) < 0)
		return -1;
	ret = scrub_sysv_here(report, err);
	if (leave_ns(home, k, report, err) < 0)
		return -1;
	return ret;
}

static bool is_dot(const char *name)
{
	return name[0] == '.' &&
	       (!name[1] || (name[1] == '.' && !name[2]));
}

static int unlink_entries(int dfd, const char *path, unsigned int *removed,
			  struct rg_error *err)
{
	char buf[4096] __attribute__((aligned(8)));
	struct dirent64 *d;
	ssize_t n, off;

	while ((n = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; off += d->d_reclen) {
			d = (struct dirent64 *)(buf + off);
			if (is_dot(d->d_name))
				continue;
			if (unlinkat(dfd, d->d_name, 0) < 0) {
				if (errno == ENOENT)
					continue;
				return rg_fail(err, errno, "removing %s/%s",
					       path, d->d_name);
			}
			(*removed)++;
		}
	}
	if (n < 0)
		return rg_fail(err, errno, "reading %s", path);
	return 0;
}

/* The mqueue fs mounted at creation: no setns needed. */
static int scrub_mqueues(const char *dir, const char *name,
			 unsigned int *removed, struct rg_error *err)
{
	char path[PATH_MAX];
	struct statfs sfs;
	int fd, ret;

	if (slot_path(path, dir, name, "mq", err) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rg_fail(err, errno, "opening %s", path);
	if (fstatfs(fd, &sfs) < 0)
		ret = rg_fail(err, errno, "fstatfs %s", path);
	else if (sfs.f_type != MQUEUE_MAGIC)
		ret = rg_fail(err, ESTALE, "%s is not an mqueue mount", path);
	else
		ret = unlink_entries(fd, path, removed, err);
	close(fd);
	return ret;
}

static int count_line(char *line, void *arg)
{
	(void)line;
	(*(unsigned int *)arg)++;
	return 0;
}

static long elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((now.tv_sec - since->tv_sec) * 1000000000L +
		(now.tv_nsec - since->tv_nsec)) / 1000000;
}

/*
 * The unix garbage collector runs when a unix socket is released while
 * fds are in flight; nothing else may release one soon. Release one of
 * our own (the collector is global, any net ns does).
 */
static void kick_unix_gc(void)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		close(fd);
}

/* fd: the slot's /proc/.../net/unix. Waits boundedly for in-flight ones. */
static int wait_unix_sockets(int fd, unsigned int *left, struct rg_error *err)
{
	const struct timespec step = { .tv_nsec = 1000000 };
	long ms = 0, kicked = -UNIX_GC_KICK_MS, rounds = 0;
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		*left = 0;
		if ((rounds++ && lseek(fd, 0, SEEK_SET) < 0) ||
		    for_each_line(fd, count_line, left) < 0)
			return rg_fail(err, errno,
				       "reading the slot's unix sockets");
		if (!*left || ms >= UNIX_GC_WAIT_MS)
			return 0;
		if (ms - kicked >= UNIX_GC_KICK_MS) {
			kick_unix_gc();
			kicked = ms;
		}
		nanosleep(&step, NULL);
		ms = elapsed_ms(&start);
	}
}

#define UNIX_SOCKETS "/proc/thread-self/net/unix"

static int scrub_net(int net_fd, struct rg_ns_scrub *report,
		     struct rg_error *err)
{
	const struct ns_kind *k = &kinds[KIND_NET];
	int home, fd, saved, ret;

	if (enter_ns(net_fd, k, &home, err) < 0)
		return -1;
	/* shows the opener's net ns, also when read after leaving it */
	fd = open(UNIX_SOCKETS, O_RDONLY | O_CLOEXEC);
	saved = errno;
	if (leave_ns(home, k, report, err) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd < 0)
		return rg_fail(err, saved, "opening " UNIX_SOCKETS
			       " in the slot's net namespace");
	ret = wait_unix_sockets(fd, &report->unix_sockets_left, err);
	close(fd);
	return ret;
}

int rg_ns_settle_unix(int net_fd, unsigned int *left, struct rg_error *err)
{
	struct rg_ns_scrub report = { 0 };

	if (scrub_net(net_fd, &report, err) < 0)
		return -1;
	*left = report.unix_sockets_left;
	return 0;
}

int rg_ns_scrub(const int fds[RG_NS_COUNT], const char *dir, const char *name,
		struct rg_ns_scrub *report, struct rg_error *err)
{
	memset(report, 0, sizeof(*report));
	if (check_name(name, err) < 0 ||
	    scrub_sysv(fds[RG_NS_IPC], report, err) < 0 ||
	    scrub_mqueues(dir, name, &report->mqueues, err) < 0 ||
	    scrub_net(fds[RG_NS_NET], report, err) < 0)
		return rg_fail_context(err,
				       "scrubbing the namespaces of slot %s",
				       name);
	return 0;
}

int rg_ns_scrub_here(struct rg_ns_scrub *report, struct rg_error *err)
{
	int fd, ret;

	memset(report, 0, sizeof(*report));
	if (scrub_sysv_here(report, err) < 0)
		return rg_fail_context(err, "scrubbing the slot's IPC namespace");
	fd = open(UNIX_SOCKETS, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rg_fail(err, errno, "opening " UNIX_SOCKETS);
	ret = wait_unix_sockets(fd, &report->unix_sockets_left, err);
	close(fd);
	return ret;
}

int rg_ns_scrub_mqueues(const char *dir, const char *name,
			struct rg_ns_scrub *report, struct rg_error *err)
{
	if (check_name(name, err) < 0 ||
	    scrub_mqueues(dir, name, &report->mqueues, err) < 0)
		return rg_fail_context(err,
				       "scrubbing the message queues of slot %s",
				       name);
	return 0;
}
