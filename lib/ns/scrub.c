/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per run: what a run left in its slot's namespaces removed before the
 * next one (SysV objects, POSIX message queues, unix sockets in flight).
 */
#include "ns/ns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ns/kinds.h"

/* in-flight unix sockets: how long to wait for the garbage collector */
#define UNIX_GC_WAIT_MS 200
#define UNIX_GC_KICK_MS 20

/* ---- per run: scrub ---- */

/* Join ns_fd in the calling thread; *home is the way back. */
static int enter_ns(int ns_fd, const struct rg_ns_kind *k, int *home,
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
static int leave_ns(int home, const struct rg_ns_kind *k,
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
	const struct rg_ns_sysv_kind *kind;
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
	IDS_UNTOUCHED, /* primed, and no object made since */
	IDS_USED,      /* an object was made (or it was never primed) */
	IDS_UNKNOWN,   /* no such sysctl: only objects left show a use */
};

static int sysv_ids_state(const struct rg_ns_sysv_kind *k,
			  enum sysv_ids *state, struct rg_error *err)
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

static int scrub_sysv_kind(const struct rg_ns_sysv_kind *k,
			   unsigned int *removed, struct rg_ns_scrub *report,
			   struct rg_error *err)
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
		[SYSV_SHM] = &report->shm,
		[SYSV_SEM] = &report->sem,
		[SYSV_MSG] = &report->msg,
	};
	int i, ret = 0;

	for (i = 0; i < NR_SYSV && !ret; i++)
		ret = scrub_sysv_kind(&rg_ns_sysv_kinds[i], removed[i], report,
				      err);
	return ret;
}

static int scrub_sysv(int ipc_fd, struct rg_ns_scrub *report,
		      struct rg_error *err)
{
	const struct rg_ns_kind *k = &rg_ns_kinds[KIND_IPC];
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
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
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

	if (rg_ns_slot_path(path, dir, name, "mq", err) < 0)
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
		(now.tv_nsec - since->tv_nsec)) /
	       1000000;
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
	const struct rg_ns_kind *k = &rg_ns_kinds[KIND_NET];
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
		return rg_fail(err, saved,
			       "opening " UNIX_SOCKETS
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
	if (rg_ns_check_name(name, err) < 0 ||
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
		return rg_fail_context(err,
				       "scrubbing the slot's IPC namespace");
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
	if (rg_ns_check_name(name, err) < 0 ||
	    scrub_mqueues(dir, name, &report->mqueues, err) < 0)
		return rg_fail_context(err,
				       "scrubbing the message queues of slot %s",
				       name);
	return 0;
}
