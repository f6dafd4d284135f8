/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Borrowing a pool slot for one run, and giving it back clean. This is the
 * per-run path: a few opens, flocks and preads on small files, no cgroup,
 * namespace or mount created or destroyed (except to repair a slot that
 * lost its namespaces, or to recycle a cgroup whose peak cannot be reset
 * when the exact peak is asked for).
 */
#include "pool/pool.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "base/base.h"
#include "pool/keeper.h"
#include "ns/ns.h"
#include "pool/prewarm.h"
#include "run/run.h"
static const struct rg_slot_ops pooled_slot_ops;
static const struct rg_slot_ops resident_slot_ops;

/* how long a stopped keeper's namespace may take to empty its cgroup */
#define KEEPER_GONE_TIMEOUT_MS 5000

/* how long one wait for a free slot sleeps at most */
#define WAIT_MAX_MS 20

/* Compared as CPU sets: any -P list that is valid unpooled fits. */
static bool same_cpus(const struct slot_record *rec,
		      const struct rg_config *cfg)
{
	cpu_set_t none;

	CPU_ZERO(&none);
	return CPU_EQUAL(&rec->cpus, cfg->cpuset ? &cfg->cpuset_mask : &none);
}

static void record_cpuset(struct slot_record *rec,
			  const struct rg_config *cfg)
{
	const char *list = cfg->cpuset ? cfg->cpuset : "";
	size_t max = sizeof(rec->cpuset) - 1;

	CPU_ZERO(&rec->cpus);
	if (cfg->cpuset)
		rec->cpus = cfg->cpuset_mask;
	snprintf(rec->cpuset, sizeof(rec->cpuset), "%s", list);
	if (strlen(list) > max)
		memcpy(rec->cpuset + max - 3, "...", 3);
}

static bool settings_match(const struct slot_record *rec,
			   const struct rg_config *cfg)
{
	return (rec->flags & SLOT_SETTINGS_KNOWN) &&
	       rec->memory_limit == cfg->memory_limit && same_cpus(rec, cfg);
}

/* Lower is better: clean and matching, clean, then dirty or unknown. */
static int preference(const struct slot_record *rec,
		      const struct rg_config *cfg)
{
	if (rec->magic != RG_SLOT_MAGIC || rec->state != SLOT_CLEAN)
		return 2;
	return settings_match(rec, cfg) ? 0 : 1;
}

static int read_table(int dir_fd, struct slot_record *recs, unsigned int n)
{
	int fd = openat(dir_fd, "slots.table",
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t len;

	memset(recs, 0, n * sizeof(*recs));
	if (fd < 0)
		return -1;
	len = pread(fd, recs, n * sizeof(*recs), 0);
	close(fd);
	return len < 0 ? -1 : 0;
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
	return rg_fail(err, EPERM, "refusing pool directory: slot-%u.lock "
		       "(uid %u, mode %04o, %u links) is not the root-only "
		       "file runguard makes: remove the pool "
		       "(runguard --pool-destroy=force) and let the next run "
		       "make it again", index, (unsigned)st.st_uid,
		       (unsigned)(st.st_mode & 07777), (unsigned)st.st_nlink);
}

/* The slot's lock fd, locked; -1 when busy, -2 (err set) when refused. */
static int try_lock_slot(int dir_fd, unsigned int index, struct rg_error *err)
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
 * slot's lock fd and index, or -1 when all are busy.
 */
static int pick_slot(int dir_fd, const struct pool_header *h,
		     const struct rg_config *cfg, unsigned int *index,
		     struct rg_error *err)
{
	struct slot_record *recs = calloc(h->size, sizeof(*recs));
	unsigned int start = (unsigned int)getpid() % h->size;
	const struct slot_record unknown = { 0 };
	int fd = -1;

	/* without the table (no memory), every slot is worth a try */
	if (recs)
		read_table(dir_fd, recs, h->size);
	for (int pref = 0; pref <= 2 && fd == -1; pref++) {
		for (unsigned int k = 0; k < h->size && fd == -1; k++) {
			unsigned int i = (start + k) % h->size;

			if (preference(recs ? &recs[i] : &unknown, cfg) != pref)
				continue;
			fd = try_lock_slot(dir_fd, i, err);
			if (fd >= 0)
				*index = i;
		}
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
	if (*delay_ms < WAIT_MAX_MS)
		*delay_ms *= 2;
	return true;
}

static void pool_options(const struct rg_config *cfg,
			 struct rg_pool_options *o)
{
	memset(o, 0, sizeof(*o));
	o->dir = cfg->pool_dir ? cfg->pool_dir : RG_POOL_DIR_DEFAULT;
	o->size = cfg->pool_size;
	o->cgroup_parent = cfg->cgroup_parent;
	/* with keepers no run attaches to a cgroup: nothing to speed up */
	o->favordynmods = cfg->pool_favordynmods && !cfg->pool_keeper;
}

/*
 * The pool lock, shared, and the header: 1 when the pool is complete (at
 * least size slots), 0 when it must be created first (also when a destroy
 * removed the pool or its directory meanwhile), -1 on error.
 */
static int lock_pool_shared(int dir_fd, unsigned int size, int *pool_lock,
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
static int lock_a_slot(const struct rg_config *cfg, int wake_fd,
		       struct rg_pool_lease *l, struct pool_header *h,
		       struct rg_error *err)
{
	struct rg_pool_options o;
	int creations = 0, delay_ms = 1;
	bool logged = false;
	int pool_lock, rc;

	pool_options(cfg, &o);
	for (;;) {
		rc = lock_pool_shared(l->dir_fd, o.size, &pool_lock, h, err);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			rg_close_fd(&pool_lock);
			/* a destroy racing with us can undo one creation */
			if (++creations > 3)
				return rg_fail(err, EAGAIN, "the pool in `%s' "
					       "keeps disappearing", o.dir);
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
		l->lock_fd = pick_slot(l->dir_fd, h, cfg, &l->index, err);
		close(pool_lock);
		if (l->lock_fd >= 0)
			return 0;
		if (l->lock_fd == -2) {
			l->lock_fd = -1;
			return -1;
		}
		if (!logged) {
			rg_log(cfg, RG_LOG_NOTICE, "all %u slots busy, waiting",
			       h->size);
			logged = true;
		}
		if (!wait_a_little(wake_fd, cfg->cancel_fd, &delay_ms))
			return rg_fail(err, EINTR, "interrupted while waiting "
				       "for a free slot (signal or cancel fd)");
	}
}

/*
 * Opened only when needed: a slot whose keeper forks the run and scrubs
 * its namespaces never needs their fds.
 */
static int open_namespaces(struct rg_pool_lease *l, struct rg_error *err)
{
	if (l->slot.ns_fd[RG_NS_IPC] >= 0)
		return 0;
	if (rg_ns_open(l->ns_dir, l->name, l->slot.ns_fd, err) == 0)
		return 0;
	if (err->errnum != ESTALE && err->errnum != ENOENT)
		return -1;
	/* lost (unmounted, rebooted): this slot gets new ones */
	if (rg_ns_prepare_dir(l->ns_dir, err) < 0 ||
	    rg_ns_remove(l->ns_dir, l->name, err) < 0 ||
	    rg_ns_create(l->ns_dir, l->name, err) < 0)
		return -1;
	return rg_ns_open(l->ns_dir, l->name, l->slot.ns_fd, err);
}

/*
 * The slot without its keeper (stopped, dead, or about to die with the
 * cgroup): served plainly pooled until a new one starts. The limit in
 * force has the keeper's share: written again by the next run.
 */
static void forget_keeper(struct rg_pool_lease *l)
{
	rg_close_fd(&l->keeper_conn);
	l->slot.ops = &pooled_slot_ops;
	l->keeper_bytes = l->keeper_pages = 0;
	if (l->slot.cgroup)
		rg_cgroup_set_resident(l->slot.cgroup, 0);
	l->rec.flags &= ~SLOT_SETTINGS_KNOWN;
}

/* Remove the slot's cgroup: whoever opens it next makes a new one. */
static int drop_cgroup(struct rg_pool_lease *l, struct rg_error *err)
{
	struct rg_cgroup *old = l->slot.cgroup;

	forget_keeper(l);
	l->slot.cgroup = NULL;
	if (rg_cgroup_destroy(old, err) < 0)
		return -1;
	/* a new cgroup gets every setting written */
	l->rec.flags &= ~(SLOT_SETTINGS_KNOWN | SLOT_USED);
	return 0;
}

/*
 * Pages a run left (on the LRU lists: not the kernel's own objects, whose
 * charge swings by a MiB with slab pages and per-CPU batches whatever the
 * run did, and which the next run's numbers do not count as its pages).
 */
static int recycle_if_charged(struct rg_pool_lease *l, struct rg_error *err)
{
	uint64_t pages;

	if (rg_cgroup_user_memory(l->slot.cgroup, &pages, err) < 0)
		return -1;
	/* a keeper's own pages are no run's (more under a sanitizer) */
	if (pages <= RG_RECYCLE_ABOVE_BYTES + l->keeper_pages &&
	    !rg_cgroup_needs_recycle(l->slot.cgroup))
		return 0;
	return drop_cgroup(l, err);
}

/*
 * The keeper and all in its PID namespace (the slot's cgroup holds nothing
 * else), killed by pid. The next holder starts a new one.
 */
static int stop_keeper(struct rg_pool_lease *l, struct rg_error *err)
{
	int rc;

	forget_keeper(l);
	if (rg_keeper_stop(l->keeper_pid, err) < 0)
		return -1;
	/* the namespace's last tasks may still be on their way out */
	for (int waited_ms = 0; (rc = rg_cgroup_populated(l->slot.cgroup,
							  err)) > 0;
	     waited_ms++) {
		if (waited_ms >= KEEPER_GONE_TIMEOUT_MS)
			return rg_fail(err, EBUSY, "the tasks of slot %u's "
				       "keeper outlive it", l->index);
		usleep(1000);
	}
	return rc;
}

/* A keeper lives in the slot's namespaces: it scrubs them without setns. */
static int scrub_namespaces(struct rg_pool_lease *l,
			    struct rg_ns_scrub *report, struct rg_error *err)
{
	if (l->keeper_conn >= 0) {
		if (rg_keeper_scrub(l->keeper_conn, report, err) < 0)
			return -1;
		if (rg_ns_scrub_mqueues(l->ns_dir, l->name, report, err) == 0)
			return 0;
		if (err->errnum != ESTALE && err->errnum != ENOENT)
			return -1;
		/*
		 * The slot's namespace files are gone (unmounted, the pool
		 * directory made again): the keeper lives in namespaces no
		 * one else can reach. It goes with them, and the slot gets
		 * new ones, scrubbed as without a keeper.
		 */
		if (stop_keeper(l, err) < 0)
			return -1;
	}
	if (open_namespaces(l, err) < 0)
		return -1;
	return rg_ns_scrub(l->slot.ns_fd, l->ns_dir, l->name, report, err);
}

/* Everything a previous run could have left, removed. */
static int clean_slot(struct rg_pool_lease *l, struct rg_error *err)
{
	struct rg_ns_scrub report;

	if (rg_slot_kill_run(&l->slot, err) < 0)
		return -1;
	if (scrub_namespaces(l, &report, err) < 0)
		return -1;
	/* a keeper lives in the namespaces being replaced: it goes too */
	if ((report.ipc_used || report.unix_sockets_left) &&
	    l->keeper_conn >= 0 && stop_keeper(l, err) < 0)
		return -1;
	/*
	 * Sockets stuck in flight, or SysV ids the run moved on: the next
	 * run gets a new net or IPC namespace.
	 */
	if (rg_ns_refresh(l->ns_dir, l->name, &report, l->slot.ns_fd, err) < 0)
		return -1;
	return rg_cgroup_reset(l->slot.cgroup, err);
}

/*
 * Runs through a pool handle keep their slot's cgroup for the next. Not
 * with the exact v2 peak: on 5.19-6.11 a run that samples closes the
 * cgroup's memory.peak, and such a run's cgroup must not serve one that
 * asked for the exact peak (which gets a new cgroup per run there anyway).
 */
static bool kept_for_handle(const struct rg_pool_lease *l)
{
	return l->pool && l->index < l->pool->size && !l->exact_v2_peak;
}

/*
 * The slot's cgroup as this process's pool handle kept it after its last
 * run here, if it still is the slot's: another process may have replaced
 * it since (recycled, or the pool made again, maybe elsewhere), and the
 * files of a removed cgroup fail with ENODEV.
 */
static bool take_kept_cgroup(struct rg_pool_lease *l,
			     const struct pool_header *h)
{
	struct rg_error ignored;
	struct rg_cgroup *cg;
	char label[PATH_MAX];
	uint64_t usage;

	if (!kept_for_handle(l))
		return false;
	cg = __atomic_exchange_n(&l->pool->slot_cgroups[l->index], NULL,
				 __ATOMIC_ACQ_REL);
	if (!cg)
		return false;
	__atomic_sub_fetch(&l->pool->kept, 1, __ATOMIC_RELAXED);
	snprintf(label, sizeof(label), "%s/%s", h->cgroup_path, l->name);
	if (strcmp(rg_cgroup_label(cg), label) != 0 ||
	    rg_cgroup_memory_usage(cg, &usage, &ignored) < 0) {
		rg_cgroup_close(cg);
		return false;
	}
	/* as opened: other processes may have run in it since */
	rg_cgroup_expect_tasks(cg);
	rg_cgroup_set_resident(cg, 0);
	l->slot.cgroup = cg;
	return true;
}

/* Kept by the pool handle for the slot's next run here, or closed. */
static void put_cgroup(struct rg_pool_lease *l)
{
	struct rg_cgroup *cg = l->slot.cgroup;
	struct rg_pool *pool = l->pool;

	l->slot.cgroup = NULL;
	if (cg && kept_for_handle(l) && l->cgroup_reusable &&
	    !rg_cgroup_needs_recycle(cg)) {
		/* within the handle's fd budget, or closed */
		if (__atomic_add_fetch(&pool->kept, 1, __ATOMIC_RELAXED) <=
		    pool->kept_max) {
			/* the slot is ours: nobody else put one there */
			cg = __atomic_exchange_n(&pool->slot_cgroups[l->index],
						 cg, __ATOMIC_ACQ_REL);
		} else {
			__atomic_sub_fetch(&pool->kept, 1, __ATOMIC_RELAXED);
		}
	}
	rg_cgroup_close(cg);
}

static int open_cgroup(struct rg_pool_lease *l, const struct pool_header *h,
		       struct rg_error *err)
{
	bool created = false;

	if (!take_kept_cgroup(l, h)) {
		/* the mounts saved with the pool spare libcgroup's search */
		rg_pool_use_mount_table(l->dir_fd, h);
		if (rg_pool_open_slot_cgroup(h, l->name, &l->slot.cgroup,
					     &created, err) < 0)
			return -1;
	}
	if (created)
		l->rec.flags &= ~(SLOT_SETTINGS_KNOWN | SLOT_USED);
	/*
	 * A v2 peak that cannot be reset (5.19-6.11) covers every run since
	 * the cgroup was made. By default the run samples memory.current
	 * instead and the slot keeps its cgroup, as on every other kernel;
	 * for the exact peak, a cgroup anything was charged to (the kernel
	 * says so, whatever the slot record says) is replaced by a new one.
	 */
	if (!l->exact_v2_peak)
		rg_cgroup_sample_unresettable_peak(l->slot.cgroup);
	if (!rg_cgroup_peak_clean(l->slot.cgroup)) {
		if (drop_cgroup(l, err) < 0 ||
		    rg_pool_open_slot_cgroup(h, l->name, &l->slot.cgroup, &created,
					     err) < 0)
			return -1;
	}
	return 0;
}

/* RG_CG_SET_* of the settings that differ from those in force. */
static unsigned int settings_to_write(const struct rg_pool_lease *l,
				      const struct rg_config *cfg)
{
	bool known = l->rec.flags & SLOT_SETTINGS_KNOWN;
	unsigned int set = 0;

	if (!known || l->rec.memory_limit != cfg->memory_limit)
		set |= RG_CG_SET_MEMORY;
	if (!known || !same_cpus(&l->rec, cfg))
		set |= RG_CG_SET_CPUSET;
	return set;
}

/*
 * The limit written for a run: its own, plus what a keeper that stays
 * through it holds (rounded up to whole charge batches), so that the run
 * gets all of its limit (docs/pool.md). The record keeps the run's own.
 */
static uint64_t slot_memory_limit(const struct rg_pool_lease *l,
				  const struct rg_config *cfg)
{
	if (cfg->memory_limit == RG_UNLIMITED || l->keeper_conn < 0)
		return cfg->memory_limit;
	return cfg->memory_limit + rg_charge_batches(l->keeper_bytes);
}

static int apply_settings(struct rg_pool_lease *l, const struct rg_config *cfg,
			  struct rg_error *err)
{
	struct rg_cgroup_limits limits = {
		.memory_bytes = slot_memory_limit(l, cfg),
		.cpuset = cfg->cpuset,
		.set = settings_to_write(l, cfg),
	};

	if (limits.set && rg_cgroup_apply_limits(l->slot.cgroup, &limits, err) < 0)
		return -1;
	l->rec.memory_limit = cfg->memory_limit;
	record_cpuset(&l->rec, cfg);
	l->rec.flags |= SLOT_SETTINGS_KNOWN | SLOT_USED;
	return 0;
}

/*
 * Below this memory limit a run is not given to a keeper: the keeper's own
 * pages (about 40 KiB) and the fork of the run's child count towards the
 * slot's limit, and a limit that small (-m 1) would OOM-kill the keeper
 * instead of the run. Such a run is pooled as without keepers.
 */
#define KEEPER_MIN_MEMORY_LIMIT (4u << 20)

static bool wants_keeper(const struct rg_config *cfg)
{
	return cfg->pool_keeper && cfg->memory_limit >= KEEPER_MIN_MEMORY_LIMIT;
}

/*
 * What a slot with a keeper must hold below a memory limit written over
 * the keeper: closer, the write would reclaim, fail with EBUSY (v1) or
 * OOM-kill the keeper (v2).
 */
#define KEEPER_LIMIT_HEADROOM (1u << 20)

/*
 * Whether the slot's live keeper can stay through this run's settings. A
 * new memory limit is written over it when the slot holds well below the
 * limit: DOMjudge's compile, run and compare calls alternate two limits,
 * and a keeper restarted for each would attach to a cgroup every call. A
 * new or unknown cpuset is written with the slot empty (v2 refuses to
 * empty the cpuset of a populated cgroup).
 */
static int keeper_can_stay(struct rg_pool_lease *l,
			   const struct rg_config *cfg, bool *stay,
			   struct rg_error *err)
{
	unsigned int set = settings_to_write(l, cfg);
	uint64_t usage;

	*stay = wants_keeper(cfg) && !(set & RG_CG_SET_CPUSET);
	if (!*stay || !(set & RG_CG_SET_MEMORY) ||
	    cfg->memory_limit == RG_UNLIMITED)
		return 0;
	if (rg_cgroup_memory_usage(l->slot.cgroup, &usage, err) < 0)
		return -1;
	*stay = usage + KEEPER_LIMIT_HEADROOM <= cfg->memory_limit;
	l->keeper_bytes = usage; /* for the limit written over it */
	return 0;
}

/*
 * Before the settings are written: the slot's keeper if it is alive and
 * can stay (keeper_can_stay), none otherwise. A keeper nobody can reach
 * (the pool directory was made again) is killed with the cgroup, which is
 * then replaced (cgroup.h: rg_cgroup_needs_recycle).
 */
static int settle_keeper(struct rg_pool_lease *l, const struct rg_config *cfg,
			 const struct pool_header *h, struct rg_error *err)
{
	bool stay;

	if (l->keeper_conn >= 0 ||
	    rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
			      &l->keeper_pid, err) == 0) {
		l->slot.ops = &resident_slot_ops;
		if (keeper_can_stay(l, cfg, &stay, err) < 0)
			return -1;
		return stay ? 0 : stop_keeper(l, err);
	}
	if (err->errnum != ECONNREFUSED && err->errnum != ENOENT)
		return -1;
	if (rg_cgroup_kill_all(l->slot.cgroup, err) < 0)
		return -1;
	if (rg_cgroup_needs_recycle(l->slot.cgroup) &&
	    (drop_cgroup(l, err) < 0 || open_cgroup(l, h, err) < 0))
		return -1;
	return 0;
}

/*
 * A slot whose keeper cannot start (its executable missing, say) serves
 * this run as a pooled slot without one: a warning, never an internal
 * error, on which DOMjudge would disable the judgehost.
 */
static int go_without_keeper(struct rg_pool_lease *l,
			     const struct rg_config *cfg, struct rg_error *err)
{
	rg_log(cfg, RG_LOG_WARNING, "slot %u: no keeper (%s: %s): this run "
	       "is pooled without one", l->index, err->message,
	       strerror(err->errnum));
	rg_close_fd(&l->keeper_conn);
	return rg_cgroup_kill_all(l->slot.cgroup, err);
}

/* After the settings: a keeper for the slot, started if it has none. */
static int use_keeper(struct rg_pool_lease *l, const struct rg_config *cfg,
		      struct rg_error *err)
{
	bool started = l->keeper_conn < 0;

	if (started) {
		if (open_namespaces(l, err) < 0)
			return rg_fail_context(err, "slot %u", l->index);
		if (rg_keeper_start(l->dir_fd, l->name, l->slot.ns_fd,
				    l->slot.cgroup, err) < 0 ||
		    rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
				      &l->keeper_pid, err) < 0)
			return go_without_keeper(l, cfg, err);
	}
	rg_cgroup_expect_tasks(l->slot.cgroup);
	l->slot.ops = &resident_slot_ops;
	/* the slot is reset: what is charged now is the keeper's */
	if (rg_cgroup_memory_usage(l->slot.cgroup, &l->keeper_bytes, err) < 0 ||
	    rg_cgroup_user_memory(l->slot.cgroup, &l->keeper_pages, err) < 0)
		return -1;
	rg_cgroup_set_resident(l->slot.cgroup, l->keeper_bytes);
	/* the limit was written without it: once per keeper */
	if (started && cfg->memory_limit != RG_UNLIMITED) {
		struct rg_cgroup_limits limits = {
			.memory_bytes = slot_memory_limit(l, cfg),
			.set = RG_CG_SET_MEMORY,
		};

		return rg_cgroup_apply_limits(l->slot.cgroup, &limits, err);
	}
	return 0;
}

/* The slot's keeper, connected, if it lives (and is of our build). */
static bool reach_keeper(struct rg_pool_lease *l)
{
	struct rg_error ignored;

	return rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
				 &l->keeper_pid, &ignored) == 0;
}

/*
 * The common call: its keeper serves the slot with this run's settings in
 * force, and resets it itself. Nothing to open or write but the record.
 */
static bool resident_as_is(struct rg_pool_lease *l,
			   const struct rg_config *cfg)
{
	return wants_keeper(cfg) && !l->exact_v2_peak &&
	       l->keeper_conn >= 0 && settings_match(&l->rec, cfg);
}

static int prepare_slot(struct rg_pool_lease *l, const struct rg_config *cfg,
			const struct pool_header *h, struct rg_error *err)
{
	bool dirty;

	rg_pool_slot_name(l->index, l->name, sizeof(l->name));
	dirty = rg_pool_read_record(l->dir_fd, l->index, &l->rec) < 0 ||
		l->rec.state != SLOT_CLEAN;
	/* clean only if the keeper that was to reset it lives */
	if (!dirty && (l->rec.flags & SLOT_KEEPER_RESETS) && !reach_keeper(l))
		dirty = true;
	l->rec.flags &= ~SLOT_KEEPER_RESETS;
	/* from here until release, a crash leaves the slot marked dirty */
	l->rec.magic = RG_SLOT_MAGIC;
	l->rec.state = SLOT_IN_USE;
	l->rec.holder = getpid();
	if (dirty)
		l->rec.flags &= ~SLOT_SETTINGS_KNOWN;
	if (rg_pool_write_record(l->dir_fd, l->index, &l->rec, err) < 0)
		return -1;
	if (!dirty && resident_as_is(l, cfg)) {
		l->slot.ops = &resident_slot_ops;
		return 0;
	}
	if (open_cgroup(l, h, err) < 0)
		return -1;
	/*
	 * The holder died: its watchdog killed the run with cgroup.kill on
	 * v2 (which poisons the cgroup on some kernels, see recycle) or the
	 * freezer, in a state nobody recorded. A new cgroup is certain.
	 */
	if (dirty && (clean_slot(l, err) < 0 || drop_cgroup(l, err) < 0 ||
		      open_cgroup(l, h, err) < 0))
		return rg_fail_context(err, "cleaning slot %u after its "
				       "holder died", l->index);
	if (cfg->pool_keeper && settle_keeper(l, cfg, h, err) < 0)
		return -1;
	if (apply_settings(l, cfg, err) < 0) {
		/* a limit below what is charged: start over in a new cgroup */
		if (err->errnum != EBUSY)
			return -1;
		if (drop_cgroup(l, err) < 0 || open_cgroup(l, h, err) < 0 ||
		    apply_settings(l, cfg, err) < 0)
			return -1;
	}
	if (wants_keeper(cfg) ? use_keeper(l, cfg, err) < 0 :
				open_namespaces(l, err) < 0)
		return -1;
	return rg_pool_write_record(l->dir_fd, l->index, &l->rec, err);
}

static void free_lease(struct rg_pool_lease *l)
{
	rg_close_fd(&l->keeper_conn);
	put_cgroup(l);
	rg_ns_close(l->slot.ns_fd);
	rg_close_fd(&l->lock_fd); /* unlocks */
	rg_close_fd(&l->dir_fd);
	free(l);
}

/* The pool directory as trusted when the pool was opened, or now. */
static int open_pool_dir(struct rg_pool_lease *l, const struct rg_config *cfg,
			 struct rg_pool *pool, struct rg_error *err)
{
	const char *dir = cfg->pool_dir ? cfg->pool_dir : RG_POOL_DIR_DEFAULT;

	if (!pool) {
		if (rg_pool_open_dir(dir, true, &l->dir_fd, err) < 0)
			return -1;
		return rg_pool_ns_dir(l->dir_fd, l->ns_dir, sizeof(l->ns_dir),
				      err);
	}
	l->threads_share_fds = true;
	l->pool = pool;
	l->dir_fd = fcntl(pool->dir_fd, F_DUPFD_CLOEXEC, 3);
	if (l->dir_fd < 0)
		return rg_fail(err, errno, "duplicating the pool's fd");
	memcpy(l->ns_dir, pool->ns_dir, sizeof(l->ns_dir));
	return 0;
}

static struct rg_pool_lease *new_lease(const struct rg_config *cfg,
				       struct rg_pool *pool,
				       struct rg_error *err)
{
	struct rg_pool_lease *l = calloc(1, sizeof(*l));

	if (!l) {
		rg_fail(err, errno, "allocating a slot lease");
		return NULL;
	}
	rg_slot_init(&l->slot, &pooled_slot_ops);
	l->slot.namespaces_outlive_run = true;
	l->exact_v2_peak = cfg->pool_v2_exact_peak;
	l->lock_fd = -1;
	l->keeper_conn = -1;
	l->dir_fd = -1;
	if (open_pool_dir(l, cfg, pool, err) < 0) {
		free_lease(l);
		return NULL;
	}
	return l;
}

int rg_slot_acquire_pooled(const struct rg_config *cfg,
			   struct rg_pool *pool, int wake_fd,
			   struct rg_slot **out, struct rg_error *err)
{
	struct rg_pool_lease *l = new_lease(cfg, pool, err);
	struct pool_header h;

	if (!l)
		return -1;
	if (lock_a_slot(cfg, wake_fd, l, &h, err) < 0 ||
	    prepare_slot(l, cfg, &h, err) < 0) {
		/* the record stays "in use": the next holder cleans up */
		free_lease(l);
		return -1;
	}
	l->slot.pool_index = (int)l->index;
	*out = &l->slot;
	return 0;
}

/* Scrub, reset and mark the slot clean: the run's processes are dead. */
static int reset_and_record(struct rg_pool_lease *l, struct rg_error *err)
{
	int rc = clean_slot(l, err);

	if (rc == 0)
		rc = recycle_if_charged(l, err);
	if (rc == 0) {
		l->rec.state = SLOT_CLEAN;
		l->rec.holder = 0;
		l->rec.runs++;
		l->rec.last_reset = time(NULL);
		rc = rg_pool_write_record(l->dir_fd, l->index, &l->rec, err);
	}
	l->cgroup_reusable = rc == 0;
	return rc;
}

/*
 * A reset that must reclaim page cache the run left (files it wrote, for
 * one) took 110-220 ms on v1 whenever a dirty page was among them: the
 * kernel throttles reclaim that cannot reach zero. The caller need not
 * wait: a detached process (rg_detach) finishes the release and holds the
 * slot's lock, an open file it shares, until the slot is clean. Runs
 * meanwhile take other slots or wait for this one. If it fails, the slot
 * stays marked in use and its next holder cleans it. Not for a pool
 * opened by a judge whose threads run at once (rg_pool_open): a process
 * forked from it would hold the other threads' slot locks and pipes as
 * long as it lives, so their slots stay taken and their streams open.
 */
static int reset_detached(void *arg)
{
	struct rg_pool_lease *l = arg;
	struct rg_error ignored;
	int rc = reset_and_record(l, &ignored);

	/*
	 * Unlocked now, not when the process exits: the kernel tears down
	 * the memory map first, and meanwhile the slot would read "held"
	 * by nobody (PoolQueueTest saw that).
	 */
	rg_close_fd(&l->lock_fd);
	return rc < 0;
}

/* Kill leftovers, scrub, reset and give the slot back. */
static int pooled_release(struct rg_slot *slot, struct rg_error *err)
{
	struct rg_pool_lease *l =
		rg_container_of(slot, struct rg_pool_lease, slot);
	int rc;

	/* nothing of the run outlives the call, whoever resets */
	rc = rg_slot_kill_run(&l->slot, err);
	if (rc == 0 && !l->threads_share_fds &&
	    rg_cgroup_reset_is_slow(l->slot.cgroup) &&
	    rg_detach(reset_detached, l, (const int[]){ l->dir_fd, l->lock_fd,
							 l->keeper_conn }, 3)) {
		free_lease(l);
		return 0;
	}
	if (rc == 0)
		rc = reset_and_record(l, err);
	if (rc < 0)
		rg_fail_context(err, "resetting pool slot %u", l->index);
	free_lease(l);
	return rc;
}

/* what all runs read, charged to us (prewarm.c) */
static void pooled_prewarm(struct rg_slot *slot, const struct rg_config *cfg)
{
	rg_prewarm_for_run(cfg, rg_container_of(slot, struct rg_pool_lease,
						slot)->dir_fd);
}

/* runguard died mid-run: the run dies; the slot's next holder resets it */
static void pooled_abandon(struct rg_slot *slot)
{
	struct rg_error ignored;

	rg_cgroup_kill_all(slot->cgroup, &ignored);
}

static const struct rg_slot_ops pooled_slot_ops = {
	.prewarm = pooled_prewarm,
	.release = pooled_release,
	.abandon = pooled_abandon,
};

/* Resident slots: the keeper's runner runs it all (keeper.h). */

static struct rg_pool_lease *to_lease(struct rg_slot *slot)
{
	return rg_container_of(slot, struct rg_pool_lease, slot);
}

static int resident_run(struct rg_slot *slot, const struct rg_config *cfg,
			const struct rg_child_plan *plan, const int dest[2],
			int signal_fd, struct rg_result *result,
			struct rg_error *err)
{
	struct rg_pool_lease *l = to_lease(slot);
	struct rg_keeper_run_request req = {
		.cfg = cfg,
		.plan = plan,
		.dest = dest,
		/* what the runner cannot tell in a cgroup it lives in */
		.peak_unused = slot->cgroup && rg_cgroup_peak_clean(slot->cgroup),
		.signal_fd = signal_fd,
	};

	if (rg_keeper_run(l->keeper_conn, &req, result, err) < 0)
		return -1;
	l->ran = true;
	return 0;
}

/* A slot whose holder died: anything of its run, ended. */
static int resident_kill(struct rg_slot *slot, struct rg_error *err)
{
	struct rg_pool_lease *l = to_lease(slot);
	bool gone;

	if (rg_keeper_kill(l->keeper_conn, &gone, err) < 0)
		return -1;
	if (gone) {
		forget_keeper(l);
		return rg_cgroup_kill_all(slot->cgroup, err);
	}
	return 0;
}

/*
 * The keeper resets the slot after the run, before it serves its next
 * client (keeper_slot.h): the slot is marked clean for as long as the
 * keeper lives, and the next holder, talking to the keeper first, waits
 * for the reset.
 * Without a result the run's end is unknown: the slot stays marked in use,
 * and its next holder cleans it.
 */
static int resident_release(struct rg_slot *slot, struct rg_error *err)
{
	struct rg_pool_lease *l = to_lease(slot);
	int rc = 0;

	if (l->ran) {
		l->rec.state = SLOT_CLEAN;
		l->rec.holder = 0;
		l->rec.runs++;
		l->rec.last_reset = time(NULL);
		l->rec.flags |= SLOT_KEEPER_RESETS;
		rc = rg_pool_write_record(l->dir_fd, l->index, &l->rec, err);
	}
	free_lease(l);
	return rc;
}

static const struct rg_slot_ops resident_slot_ops = {
	.prewarm = pooled_prewarm,
	.run = resident_run,
	.kill_run = resident_kill,
	.release = resident_release,
	/* no watchdog: the runner sees its client die and kills the run */
};

/* -- keepers started with the pool (rg_pool_create) ------------------ */

/*
 * Slot `index`, if it is free and has no live keeper, prepared as its
 * first run with keepers would prepare it (no memory limit, no cpuset:
 * the next run writes its own over the keeper), then marked clean without
 * counting a run. A held slot is left to its holder.
 */
static int start_keeper_in(const struct rg_config *cfg, unsigned int index,
			   struct rg_error *err)
{
	struct rg_pool_lease *l = new_lease(cfg, NULL, err);
	struct pool_header h;
	int pool_lock, rc;

	if (!l)
		return -1;
	rc = lock_pool_shared(l->dir_fd, index + 1, &pool_lock, &h, err);
	if (rc > 0)
		l->lock_fd = try_lock_slot(l->dir_fd, index, err);
	rg_close_fd(&pool_lock);
	if (l->lock_fd == -2) {
		l->lock_fd = -1;
		rc = -1;
	}
	if (rc == 0)
		rc = rg_fail(err, ENOENT, "the pool was destroyed meanwhile");
	rg_pool_slot_name(index, l->name, sizeof(l->name));
	if (rc > 0 && l->lock_fd >= 0 &&
	    rg_keeper_connect(l->dir_fd, l->name, &l->keeper_conn,
			      &l->keeper_pid, err) < 0) {
		l->index = index;
		rc = prepare_slot(l, cfg, &h, err);
		l->rec.state = SLOT_CLEAN;
		l->rec.holder = 0;
		if (rc == 0)
			rc = rg_pool_write_record(l->dir_fd, index, &l->rec,
						  err);
		if (rc == 0)
			rg_log(cfg, RG_LOG_NOTICE, "slot %u: keeper started",
			       index);
	} else if (rc > 0) {
		rg_log(cfg, RG_LOG_NOTICE, "slot %u: %s", index,
		       l->lock_fd < 0 ? "held by a run, left to it" :
					"its keeper is alive");
	}
	free_lease(l);
	if (rc < 0)
		return rg_fail_context(err, "starting the keeper of slot %u",
				       index);
	return 0;
}

int rg_pool_start_keepers(const struct rg_pool_options *o,
			  struct rg_error *err)
{
	struct rg_config *cfg = rg_config_new(err);
	int rc = 0;

	if (!cfg)
		return -1;
	if (rg_config_set_pool(cfg, o->dir, o->size, err) < 0 ||
	    (o->cgroup_parent &&
	     rg_config_set_cgroup_parent(cfg, o->cgroup_parent, err) < 0))
		rc = -1;
	cfg->pool_keeper = true;
	cfg->pool_favordynmods = o->favordynmods;
	cfg->log = *rg_admin_log();
	for (unsigned int i = 0; rc == 0 && i < o->size; i++)
		rc = start_keeper_in(cfg, i, err);
	rg_config_free(cfg);
	return rc;
}
