/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which slot a run gets, and the wait for one: the slots tried in order of
 * preference (slot_choice.h), the first free one locked, under the pool
 * lock held shared so that a destroy waits for us. Made first when there
 * is no pool; the wait ends on the run's signals or cancel fd.
 */
#include "pool/lease.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool/slot_choice.h"

/* The table, kept open for the lease's record (one open a run). */
static int read_table(struct rg_pool_lease *l, struct slot_record *recs,
		      unsigned int n)
{
	memset(recs, 0, n * sizeof(*recs));
	rg_close_fd(&l->table_fd); /* of a pass before a creation */
	l->table_fd = rg_pool_open_table(l->dir_fd);
	if (l->table_fd < 0)
		return -1;
	return pread(l->table_fd, recs, n * sizeof(*recs), 0) < 0 ? -1 : 0;
}

/*
 * A slot lock is root's file, mode 0600 as the pool makes it: one that
 * another user owns or may write is someone else's way to hold the slot
 * (a run user holding it kept runs out for seconds). -2 with err then.
 */
static int check_slot_lock(int fd, unsigned int index, struct rg_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return rg_fail(err, errno, "stat slot-%u.lock", index);
	if (rg_pool_file_ok(&st, S_IFREG))
		return 0;
	return rg_fail(err, EPERM,
		       "refusing pool directory: slot-%u.lock "
		       "(uid %u, mode %04o, %u links) is not the root-only "
		       "file runguard makes: remove the pool "
		       "(runguard --pool-destroy=force) and let the next run "
		       "make it again",
		       index, (unsigned)st.st_uid,
		       (unsigned)(st.st_mode & 07777), (unsigned)st.st_nlink);
}

int rg_lease_try_lock_slot(int dir_fd, unsigned int index, struct rg_error *err)
{
	char lock[32];
	int fd;

	snprintf(lock, sizeof(lock), "slot-%u.lock", index);
	fd = openat(dir_fd, lock,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (check_slot_lock(fd, index, err) < 0) {
		close(fd);
		return -2;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One pass over the slots in order of preference, starting at a
 * pid-dependent slot so that equal judges spread out. Returns the locked
 * slot's lock fd (its index in l->index; the table stays open in
 * l->table_fd), or -1 when all are busy.
 */
static int pick_slot(struct rg_pool_lease *l, const struct pool_header *h,
		     const struct rg_config *cfg, struct rg_error *err)
{
	struct slot_record *recs = calloc(h->size, sizeof(*recs));
	unsigned int start = (unsigned int)getpid() % h->size;
	struct rg_slot_walk walk;
	unsigned int i;
	int fd = -1;

	/* without the table (no memory), every slot is worth a try */
	if (recs)
		read_table(l, recs, h->size);
	rg_slot_walk_init(&walk, recs, h->size, start);
	while (fd == -1 && rg_slot_walk_next(&walk, cfg, &i)) {
		fd = rg_lease_try_lock_slot(l->dir_fd, i, err);
		if (fd >= 0)
			l->index = i;
	}
	free(recs);
	return fd;
}

/*
 * Sleep until the next try; false when wake_fd (the run's signals) or the
 * run's cancel fd became readable. A negative fd is ignored by poll().
 */
static bool wait_a_little(int wake_fd, int cancel_fd, int *delay_ms)
{
	struct pollfd p[2] = {
		{ .fd = wake_fd, .events = POLLIN },
		{ .fd = cancel_fd, .events = POLLIN },
	};

	if (poll(p, 2, *delay_ms) > 0)
		return false;
	*delay_ms = rg_slot_next_wait_ms(*delay_ms);
	return true;
}

static void pool_options(const struct rg_config *cfg, struct rg_pool_options *o)
{
	memset(o, 0, sizeof(*o));
	o->dir = cfg->pool_dir ? cfg->pool_dir : RG_POOL_DIR_DEFAULT;
	o->size = cfg->pool_size;
	o->cgroup_parent = cfg->cgroup_parent;
	/* with keepers no run attaches to a cgroup: nothing to speed up */
	o->favordynmods = cfg->pool_favordynmods && !cfg->pool_keeper;
}

int rg_lease_lock_pool_shared(int dir_fd, unsigned int size, int *pool_lock,
			      struct pool_header *h, struct rg_error *err)
{
	struct stat st;

	*pool_lock = openat(dir_fd, "pool.lock",
			    O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (*pool_lock < 0 && errno == ENOENT)
		return 0; /* the directory is gone */
	if (*pool_lock < 0 || flock(*pool_lock, LOCK_SH) < 0) {
		rg_fail(err, errno, "locking pool.lock");
		rg_close_fd(pool_lock);
		return -1;
	}
	/* a destroy unlinks it when done: this lock guards nothing */
	if (fstat(*pool_lock, &st) == 0 && st.st_nlink == 0)
		return 0;
	return rg_pool_read_header(dir_fd, h) == 0 && h->size >= size;
}

/* The directory of dir_fd was removed (by a destroy). */
static bool dir_removed(int dir_fd)
{
	struct stat st;

	return fstat(dir_fd, &st) == 0 && st.st_nlink == 0;
}

/* Shared pool lock held while picking, so destroy waits for us. */
int rg_lease_lock_a_slot(const struct rg_config *cfg, int wake_fd,
			 struct rg_pool_lease *l, struct pool_header *h,
			 struct rg_error *err)
{
	struct rg_pool_options o;
	int creations = 0, delay_ms = 1;
	bool logged = false;
	int pool_lock, rc;

	pool_options(cfg, &o);
	for (;;) {
		rc = rg_lease_lock_pool_shared(l->dir_fd, o.size, &pool_lock,
					       h, err);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			rg_close_fd(&pool_lock);
			/* a destroy racing with us can undo one creation */
			if (++creations > 3)
				return rg_fail(err, EAGAIN,
					       "the pool in `%s' "
					       "keeps disappearing",
					       o.dir);
			/* a destroy may have removed the directory, too */
			if (rg_pool_reopen_dir(o.dir, &l->dir_fd, err) < 0)
				return -1;
			/* or may remove it now (ENOENT): then again */
			if (rg_pool_ensure(l->dir_fd, o.dir, &o, &cfg->log, h,
					   err) < 0 &&
			    !(err->errnum == ENOENT && dir_removed(l->dir_fd)))
				return -1;
			continue;
		}
		l->lock_fd = pick_slot(l, h, cfg, err);
		close(pool_lock);
		if (l->lock_fd >= 0)
			return 0;
		if (l->lock_fd == -2) {
			l->lock_fd = -1;
			return -1;
		}
		if (!logged) {
			rg_log(cfg, RG_LOG_NOTICE,
			       "all %u slots busy, waiting", h->size);
			logged = true;
		}
		if (!wait_a_little(wake_fd, cfg->cancel_fd, &delay_ms))
			return rg_fail(err, EINTR,
				       "interrupted while waiting "
				       "for a free slot (signal or cancel fd)");
	}
}
