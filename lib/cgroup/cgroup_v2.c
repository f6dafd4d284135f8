/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2 backend: one directory below the cgroup2 root. The child is
 * meant to be created in it with clone3(CLONE_INTO_CGROUP, clone_fd()),
 * which costs no migration.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup_backend.h"
#include "base/base.h"

/* Control files kept open for the per-run calls. */
enum v2_file {
	F_PROCS,      /* cgroup.procs, for attach */
	F_EVENTS,     /* cgroup.events: populated, frozen */
	F_KILL,	      /* cgroup.kill, 5.14+ */
	F_FREEZE,     /* cgroup.freeze, 5.2+: kill without cgroup.kill */
	F_CPU_STAT,   /* cpu.stat: usage_usec, even without +cpu */
	F_MEM_MAX,    /* memory.max */
	F_SWAP_MAX,   /* memory.swap.max, missing without swap accounting */
	F_PEAK,	      /* memory.peak, 5.19+; resettable per fd from 6.12 */
	F_CURRENT,    /* memory.current: sampled where there is no peak */
	F_MEM_EVENTS, /* memory.events: oom_kill */
	F_MEM_STAT,   /* memory.stat: pgmajfault */
	F_RECLAIM,    /* memory.reclaim, 5.19+ */
	F_HIGH,	      /* memory.high: reclaim without memory.reclaim */
	F_CPUS,	      /* cpuset.cpus */
	F_MEMS,	      /* cpuset.mems */
	V2_NR_FILES
};

struct v2_file_spec {
	unsigned int ctrl; /* RG_CG_* needed, 0 for always */
	const char *name;
	int flags;
	bool optional;
};

static const struct v2_file_spec v2_files[V2_NR_FILES] = {
	[F_PROCS] = { 0, "cgroup.procs", O_WRONLY, false },
	[F_EVENTS] = { 0, "cgroup.events", O_RDONLY, false },
	[F_KILL] = { 0, "cgroup.kill", O_WRONLY, true },
	[F_FREEZE] = { 0, "cgroup.freeze", O_WRONLY, true },
	[F_CPU_STAT] = { 0, "cpu.stat", O_RDONLY, true },
	[F_MEM_MAX] = { RG_CG_MEMORY, "memory.max", O_RDWR, false },
	[F_SWAP_MAX] = { RG_CG_MEMORY, "memory.swap.max", O_RDWR, true },
	/* Writable only from 6.12 (see v2_open_peak). */
	[F_PEAK] = { RG_CG_MEMORY, "memory.peak", O_RDWR, true },
	[F_CURRENT] = { RG_CG_MEMORY, "memory.current", O_RDONLY, false },
	[F_MEM_EVENTS] = { RG_CG_MEMORY, "memory.events", O_RDONLY, false },
	[F_MEM_STAT] = { RG_CG_MEMORY, "memory.stat", O_RDONLY, false },
	[F_RECLAIM] = { RG_CG_MEMORY, "memory.reclaim", O_WRONLY, true },
	/* Opened only without memory.reclaim (see v2_open_files). */
	[F_HIGH] = { RG_CG_MEMORY, "memory.high", O_WRONLY, true },
	[F_CPUS] = { RG_CG_CPUSET, "cpuset.cpus", O_RDWR, false },
	[F_MEMS] = { RG_CG_CPUSET, "cpuset.mems", O_RDWR, false },
};

static const char *const v2_ctrl_name[] = { "memory", "cpuset" };
#define V2_NR_CTRL (sizeof(v2_ctrl_name) / sizeof(v2_ctrl_name[0]))

struct rg_cgroup_v2 {
	struct rg_cgroup base;
	char name[NAME_MAX + 1];
	unsigned int ctrl;
	int parent_fd;
	int dir_fd; /* -1 until created by us */
	int fd[V2_NR_FILES];

	bool peak_writable; /* memory.peak takes "reset" (6.12+) */
	bool peak_reset;    /* ... and the last start() reset it */
	bool peak_unused;   /* nothing was ever charged: memory.peak is 0 */
	bool peak_stale;    /* memory.peak may be an earlier run's */
	uint64_t cpu_base;
	uint64_t oom_base;
	uint64_t max_events_base; /* memory.events "max": limit reached */
	uint64_t majflt_base;	  /* memory.stat pgmajfault */
	uint64_t sampled_peak;	  /* without memory.peak */
};

/* Often enough to see a test case's allocation, rare enough to be free. */
#define V2_SAMPLE_INTERVAL_MS 5

static const struct rg_cgroup_ops v2_ops;
static int v2_remove(struct rg_cgroup *base, struct rg_error *err);
static void v2_release(struct rg_cgroup *base);

static struct rg_cgroup_v2 *to_v2(const struct rg_cgroup *cg)
{
	return rg_container_of(cg, struct rg_cgroup_v2, base);
}

int rg_cgroup_v2_root_missing(int root_fd, unsigned int ctrl,
			      unsigned int *unavailable,
			      unsigned int *disabled, struct rg_error *err)
{
	char avail[RG_CG_BUF], enabled[RG_CG_BUF];
	size_t i;

	*unavailable = *disabled = 0;
	if (rg_cg_read_file(root_fd, "cgroup.controllers", avail,
			    sizeof(avail), err) < 0 ||
	    rg_cg_read_file(root_fd, "cgroup.subtree_control", enabled,
			    sizeof(enabled), err) < 0)
		return -1;
	for (i = 0; i < V2_NR_CTRL; i++) {
		if (!(ctrl & (1u << i)))
			continue;
		if (!rg_cg_list_has(avail, v2_ctrl_name[i]))
			*unavailable |= 1u << i;
		else if (!rg_cg_list_has(enabled, v2_ctrl_name[i]))
			*disabled |= 1u << i;
	}
	return 0;
}

/* The lowest bit of mask, as a controller name. */
static const char *v2_first_ctrl(unsigned int mask)
{
	size_t i;

	for (i = 0; i < V2_NR_CTRL; i++)
		if (mask & (1u << i))
			return v2_ctrl_name[i];
	return "?";
}

/*
 * We do not touch the root's subtree_control (the admin's business, and
 * systemd's): only check it and say what to run.
 */
static int v2_check_root(int root_fd, const char *root, unsigned int ctrl,
			 struct rg_error *err)
{
	unsigned int unavailable, disabled;
	const char *c;

	if (rg_cgroup_v2_root_missing(root_fd, ctrl, &unavailable, &disabled,
				      err) < 0)
		return rg_fail_context(err, "cgroup v2 root %s", root);
	if (unavailable) {
		c = v2_first_ctrl(unavailable);
		return rg_fail(err, ENODEV,
			       "cgroup v2 controller %s is not available in %s (see its cgroup.controllers)",
			       c, root);
	}
	if (disabled) {
		c = v2_first_ctrl(disabled);
		return rg_fail(err, ENODEV,
			       "cgroup v2 controller %s is not enabled for %s's children; as root run: echo +%s > %s/cgroup.subtree_control",
			       c, root, c, root);
	}
	return 0;
}

/* Every level of the parent passes the controllers on to its children. */
static int v2_enable(int up_fd, int dir_fd, void *data, struct rg_error *err)
{
	unsigned int ctrl = *(unsigned int *)data;
	char enabled[RG_CG_BUF], plus[32];
	size_t i;

	(void)up_fd;
	if (rg_cg_read_file(dir_fd, "cgroup.subtree_control", enabled,
			    sizeof(enabled), err) < 0)
		return -1;
	for (i = 0; i < V2_NR_CTRL; i++) {
		if (!(ctrl & (1u << i)) ||
		    rg_cg_list_has(enabled, v2_ctrl_name[i]))
			continue;
		snprintf(plus, sizeof(plus), "+%s", v2_ctrl_name[i]);
		/* EBUSY: the parent holds processes (no internal tasks). */
		if (rg_cg_write_file(dir_fd, "cgroup.subtree_control", plus,
				     err) < 0)
			return -1;
	}
	return 0;
}

/*
 * Without a reset (5.19-6.11) memory.peak is a run's own only in a cgroup
 * nothing was charged to before: one we just made, or one whose peak is
 * still 0 (made by the pool's creator or a racing opener, never run in).
 * Every run charges its pages, so a used cgroup's peak is never 0.
 */
static int v2_check_unused(struct rg_cgroup_v2 *cg, struct rg_error *err)
{
	uint64_t peak;
	int ret;

	if (cg->base.fresh) {
		cg->peak_unused = true;
		return 0;
	}
	ret = rg_cg_read_u64(cg->fd[F_PEAK], &peak);
	if (ret < 0)
		return rg_fail(err, -ret, "reading memory.peak");
	cg->peak_unused = peak == 0;
	return 0;
}

/* memory.peak's mode says whether it takes "reset": 0644 from 6.12. */
static bool v2_peak_mode_resettable(mode_t mode)
{
	return mode & S_IWUSR;
}

int rg_cgroup_v2_features(int dir_fd, struct rg_cgroup_v2_features *f)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->memory = faccessat(dir_fd, "memory.current", F_OK, 0) == 0;
	f->peak = fstatat(dir_fd, "memory.peak", &st, 0) == 0;
	f->peak_resettable = f->peak && v2_peak_mode_resettable(st.st_mode);
	f->kill = faccessat(dir_fd, "cgroup.kill", F_OK, 0) == 0;
	f->freeze = faccessat(dir_fd, "cgroup.freeze", F_OK, 0) == 0;
	f->swap = faccessat(dir_fd, "memory.swap.max", F_OK, 0) == 0;
	f->reclaim = faccessat(dir_fd, "memory.reclaim", F_OK, 0) == 0;
	return f->memory ? 0 : -1;
}

/*
 * memory.peak takes the per-fd "reset" write from 6.12 on, and its mode
 * says so (0644, 0444 before). The open does not: root's O_RDWR open of a
 * read-only cgroup file succeeds, and only the write fails.
 */
static int v2_open_peak(struct rg_cgroup_v2 *cg, struct rg_error *err)
{
	int *fd = &cg->fd[F_PEAK];
	struct stat st;

	*fd = openat(cg->dir_fd, "memory.peak", O_RDWR | O_CLOEXEC);
	if (*fd < 0 && errno == EACCES &&
	    rg_cg_open(cg->dir_fd, "memory.peak", O_RDONLY, true, fd, err) < 0)
		return -1;
	if (*fd < 0) {
		if (errno == ENOENT) /* before 5.19 */
			return 0;
		return rg_fail(err, errno, "opening memory.peak");
	}
	if (fstat(*fd, &st) < 0)
		return rg_fail(err, errno, "stat memory.peak");
	cg->peak_writable = v2_peak_mode_resettable(st.st_mode);
	return cg->peak_writable ? 0 : v2_check_unused(cg, err);
}

static int v2_open_files(struct rg_cgroup_v2 *cg, struct rg_error *err)
{
	const struct v2_file_spec *f;
	int i;

	for (i = 0; i < V2_NR_FILES; i++) {
		f = &v2_files[i];
		if (f->ctrl & ~cg->ctrl)
			continue;
		if (i == F_PEAK) {
			if (v2_open_peak(cg, err) < 0)
				return -1;
			continue;
		}
		if (i == F_HIGH && cg->fd[F_RECLAIM] >= 0)
			continue;
		if (rg_cg_open(cg->dir_fd, f->name, f->flags, f->optional,
			       &cg->fd[i], err) < 0)
			return -1;
	}
	rg_psi_open(&cg->base.psi, cg->dir_fd, false);
	return 0;
}

static struct rg_cgroup_v2 *v2_alloc(const char *parent, const char *name,
				     unsigned int ctrl, struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = calloc(1, sizeof(*cg));
	int i;

	if (!cg) {
		rg_fail(err, errno, "allocating cgroup");
		return NULL;
	}
	cg->base.ops = &v2_ops;
	cg->ctrl = ctrl;
	cg->parent_fd = -1;
	cg->dir_fd = -1;
	for (i = 0; i < V2_NR_FILES; i++)
		cg->fd[i] = -1;
	rg_psi_init(&cg->base.psi);
	cg->base.psi_method = "cgroup-psi";
	if (rg_cg_label(&cg->base, parent, name, err) < 0) {
		free(cg);
		return NULL;
	}
	snprintf(cg->name, sizeof(cg->name), "%s", name);
	return cg;
}

static int v2_write(struct rg_cgroup_v2 *cg, enum v2_file f, const char *val,
		    struct rg_error *err)
{
	int ret = rg_cg_write(cg->fd[f], val);

	if (ret < 0)
		return rg_fail(err, -ret, "writing \"%s\" to %s", val,
			       v2_files[f].name);
	return 0;
}

static int v2_get_dir(struct rg_cgroup_v2 *cg, const char *parent,
		      unsigned int how, struct rg_error *err)
{
	if (how & RG_CG_REUSE) {
		if (rg_cg_open_dir(cg->parent_fd, cg->name, &cg->base.fresh,
				   &cg->dir_fd, err) < 0 ||
		    ((how & RG_CG_OWN_PARENT) &&
		     rg_cg_keep_private(cg->parent_fd, parent, err) < 0))
			return -1;
		return cg->base.fresh ?
			       0 :
			       rg_cg_keep_private(cg->dir_fd, cg->name, err);
	}
	if (rg_cg_make_dir(cg->parent_fd, cg->name, &cg->dir_fd, err) < 0)
		return -1;
	cg->base.fresh = true;
	return 0;
}

/* A process that died in v2_kill_round may have left it frozen. */
static int v2_thaw_reused(struct rg_cgroup_v2 *cg, struct rg_error *err)
{
	if (cg->base.fresh || cg->fd[F_FREEZE] < 0)
		return 0;
	return v2_write(cg, F_FREEZE, "0", err);
}

/* Setting up failed: remove the directory if this call made it. */
static void v2_discard(struct rg_cgroup_v2 *cg)
{
	struct rg_error ignored;

	if (!cg->base.fresh)
		rg_close_fd(&cg->dir_fd);
	v2_remove(&cg->base, &ignored);
	v2_release(&cg->base);
}

/* For _cleanup_: a cgroup not handed over (NULL) is discarded. */
static void v2_discard_ptr(struct rg_cgroup_v2 **cg)
{
	if (*cg)
		v2_discard(*cg);
}

int rg_cgroup_v2_create(const char *root, const char *parent, const char *name,
			unsigned int ctrl, unsigned int how,
			struct rg_cgroup **out, struct rg_error *err)
{
	_cleanup_close_ int root_fd = -1;
	_cleanup_(v2_discard_ptr) struct rg_cgroup_v2 *cg = NULL;

	cg = v2_alloc(parent, name, ctrl, err);
	if (!cg)
		return -1;
	root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return rg_fail(err, errno, "opening %s", root);
	if (v2_check_root(root_fd, root, ctrl, err) < 0 ||
	    rg_cg_open_parent(root_fd, parent, v2_enable, &ctrl,
			      &cg->parent_fd, err) < 0 ||
	    v2_get_dir(cg, parent, how, err) < 0 ||
	    v2_open_files(cg, err) < 0 || v2_thaw_reused(cg, err) < 0)
		return rg_fail_context(err, "cgroup v2 %s", cg->base.label);
	*out = &cg->base;
	cg = NULL;
	return 0;
}

/* Limited: RAM only, no swap (as DOMjudge). Unlimited: "max" for both. */
static int v2_set_memory(struct rg_cgroup_v2 *cg, uint64_t bytes,
			 struct rg_error *err)
{
	char val[24] = "max";

	if (cg->fd[F_MEM_MAX] < 0) {
		if (bytes == RG_UNLIMITED)
			return 0;
		return rg_fail(err, EINVAL, "no memory controller");
	}
	if (bytes != RG_UNLIMITED)
		snprintf(val, sizeof(val), "%" PRIu64, bytes);
	if (v2_write(cg, F_MEM_MAX, val, err) < 0)
		return -1;
	if (cg->fd[F_SWAP_MAX] < 0)
		return 0;
	return v2_write(cg, F_SWAP_MAX, bytes == RG_UNLIMITED ? "max" : "0",
			err);
}

/*
 * mems: the parent's effective ones (not a hard-coded node 0). No pinning
 * asked: empty values, which mean "as the parent".
 */
static int v2_set_cpuset(struct rg_cgroup_v2 *cg, const char *cpus,
			 struct rg_error *err)
{
	char mems[RG_CG_BUF] = "\n";

	if (cpus && rg_cg_read_file(cg->parent_fd, "cpuset.mems.effective",
				    mems, sizeof(mems), err) < 0)
		return -1;
	if (v2_write(cg, F_MEMS, mems, err) < 0)
		return -1;
	return v2_write(cg, F_CPUS, cpus ? cpus : "\n", err);
}

/* The operations take the base pointer: dispatch.c applies the limits. */
static int v2_op_set_memory(struct rg_cgroup *base, uint64_t bytes,
			    struct rg_error *err)
{
	return v2_set_memory(to_v2(base), bytes, err);
}

static int v2_op_set_cpuset(struct rg_cgroup *base, const char *cpus,
			    struct rg_error *err)
{
	return v2_set_cpuset(to_v2(base), cpus, err);
}

static bool v2_has_cpuset(const struct rg_cgroup *base)
{
	return to_v2(base)->fd[F_CPUS] >= 0;
}

/* Only for a child that cannot use CLONE_INTO_CGROUP: write() only. */
static int v2_attach_self(const struct rg_cgroup *base)
{
	return rg_cg_write(to_v2(base)->fd[F_PROCS], "0");
}

static int v2_clone_fd(const struct rg_cgroup *base)
{
	return to_v2(base)->dir_fd;
}

static int v2_read_key(struct rg_cgroup_v2 *cg, enum v2_file f,
		       const char *key, uint64_t *value, struct rg_error *err)
{
	int ret = rg_cg_read_key(cg->fd[f], key, value);

	if (ret < 0)
		return rg_fail(err, -ret, "reading %s from %s of %s", key,
			       v2_files[f].name, cg->base.label);
	return 0;
}

static unsigned int v2_sample_interval_ms(const struct rg_cgroup *base)
{
	const struct rg_cgroup_v2 *cg = to_v2(base);

	return cg->fd[F_PEAK] < 0 && cg->fd[F_CURRENT] >= 0 ?
		       V2_SAMPLE_INTERVAL_MS :
		       0;
}

static void v2_sample(struct rg_cgroup *base)
{
	struct rg_cgroup_v2 *cg = to_v2(base);
	uint64_t now;

	if (cg->fd[F_CURRENT] >= 0 &&
	    rg_cg_read_u64(cg->fd[F_CURRENT], &now) == 0 &&
	    now > cg->sampled_peak)
		cg->sampled_peak = now;
}

static int v2_start(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = to_v2(base);

	/* Resets the peak seen through this fd only (6.12+). */
	cg->peak_reset = cg->peak_writable &&
			 rg_cg_write(cg->fd[F_PEAK], "reset") == 0;
	/* Without a reset: this run's if nothing was charged before it. */
	cg->peak_stale = cg->fd[F_PEAK] >= 0 && !cg->peak_reset &&
			 !cg->peak_unused;
	cg->peak_unused = false;
	base->reader_cpu_base = rg_cg_reader_cpu_ns();
	if (cg->fd[F_CPU_STAT] >= 0 &&
	    v2_read_key(cg, F_CPU_STAT, "usage_usec", &cg->cpu_base, err) < 0)
		return -1;
	if (cg->fd[F_MEM_EVENTS] >= 0 &&
	    (v2_read_key(cg, F_MEM_EVENTS, "oom_kill", &cg->oom_base, err) < 0 ||
	     v2_read_key(cg, F_MEM_EVENTS, "max", &cg->max_events_base, err) <
		     0))
		return -1;
	if (base->faults_by_reaper || cg->fd[F_MEM_STAT] < 0 ||
	    rg_cg_read_key(cg->fd[F_MEM_STAT], "pgmajfault", &cg->majflt_base))
		cg->majflt_base = UINT64_MAX;
	cg->sampled_peak = 0;
	if (cg->fd[F_PEAK] < 0)
		v2_sample(&cg->base);
	return 0;
}

/*
 * Before 5.19 the kernel keeps no peak (and from 5.19 to 6.11 a pool may
 * ignore the one it keeps): the highest memory.current seen, and the
 * limit itself when memory.events says usage reached it (usage never
 * exceeds memory.max, so that is exact). A lower bound otherwise.
 */
static int v2_sampled_peak(struct rg_cgroup_v2 *cg, struct rg_cgroup_stats *st,
			   struct rg_error *err)
{
	uint64_t max_events, limit;

	if (cg->fd[F_CURRENT] < 0) {
		snprintf(st->memory_method, sizeof(st->memory_method), "none");
		return 0;
	}
	v2_sample(&cg->base);
	st->memory_peak = cg->sampled_peak;
	st->memory_peak_valid = true;
	st->memory_peak_lower_bound = true;
	/*
	 * The limit in force, read back: a pool slot keeps the one an
	 * earlier run wrote ("max", unlimited, is no number).
	 */
	if (v2_read_key(cg, F_MEM_EVENTS, "max", &max_events, err) == 0 &&
	    max_events > cg->max_events_base &&
	    rg_cg_read_u64(cg->fd[F_MEM_MAX], &limit) == 0) {
		st->memory_peak = limit;
		st->memory_peak_lower_bound = false;
	}
	snprintf(st->memory_method, sizeof(st->memory_method),
		 "memory.current(sampled)");
	return 0;
}

static int v2_read_peak(struct rg_cgroup_v2 *cg, struct rg_cgroup_stats *st,
			struct rg_error *err)
{
	const char *method = "memory.peak";
	int ret;

	if (cg->fd[F_PEAK] < 0)
		return v2_sampled_peak(cg, st, err);
	ret = rg_cg_read_u64(cg->fd[F_PEAK], &st->memory_peak);
	if (ret < 0)
		return rg_fail(err, -ret, "reading memory.peak of %s",
			       cg->base.label);
	st->memory_peak_valid = !cg->peak_stale;
	if (cg->peak_reset)
		method = "memory.peak(fd-reset)";
	else if (cg->peak_stale)
		method = "memory.peak(stale)";
	snprintf(st->memory_method, sizeof(st->memory_method), "%s", method);
	return 0;
}

static int v2_read_stats(struct rg_cgroup *base, struct rg_cgroup_stats *st,
			 struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = to_v2(base);
	uint64_t usec, oom;

	if (v2_read_peak(cg, st, err) < 0)
		return -1;
	if (cg->fd[F_CPU_STAT] >= 0) {
		rg_cg_reader_cpu_delta(base, st);
		if (v2_read_key(cg, F_CPU_STAT, "usage_usec", &usec, err) < 0)
			return -1;
		st->cpu_ns = (int64_t)(usec - cg->cpu_base) * 1000;
	}
	if (cg->fd[F_MEM_EVENTS] >= 0) {
		if (v2_read_key(cg, F_MEM_EVENTS, "oom_kill", &oom, err) < 0)
			return -1;
		st->oom_killed = oom > cg->oom_base;
	}
	if (cg->fd[F_MEM_STAT] >= 0)
		st->major_faults = rg_cg_delta(cg->fd[F_MEM_STAT],
					       "pgmajfault", cg->majflt_base);
	return 0;
}

/*
 * Without memory.peak (before 5.19, or ignored) the peak is sampled from
 * memory.current from start() on, so it is this run's too once
 * rg_cgroup_reset() has reclaimed what earlier runs left.
 */
static bool v2_peak_resettable(const struct rg_cgroup *base)
{
	const struct rg_cgroup_v2 *cg = to_v2(base);

	return cg->fd[F_PEAK] < 0 || cg->peak_writable;
}

static bool v2_peak_clean(const struct rg_cgroup *base)
{
	const struct rg_cgroup_v2 *cg = to_v2(base);

	return v2_peak_resettable(base) || cg->peak_unused;
}

static int v2_keep_private(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = to_v2(base);

	if (rg_cg_keep_private(cg->parent_fd, "the pool's level", err) < 0)
		return -1;
	return rg_cg_keep_private(cg->dir_fd, cg->name, err);
}

static void v2_assume_peak_unused(struct rg_cgroup *base)
{
	to_v2(base)->peak_unused = true;
}

/*
 * A memory.peak without reset (5.19-6.11) is a run's own only in a cgroup
 * nothing was charged to before, so a pool would need a new cgroup per
 * run. Closing it puts the cgroup on the path of kernels before 5.19: the
 * peak sampled from start() on, each run's in a cgroup reused after
 * rg_cgroup_reset(), and exactly the limit when memory.events says usage
 * reached it.
 */
static void v2_sample_unresettable_peak(struct rg_cgroup *base)
{
	struct rg_cgroup_v2 *cg = to_v2(base);

	if (cg->fd[F_PEAK] >= 0 && !cg->peak_writable)
		rg_close_fd(&cg->fd[F_PEAK]);
}

static int v2_user_memory(struct rg_cgroup *base, uint64_t *bytes,
			  struct rg_error *err)
{
	return rg_cg_memory_figure(base, to_v2(base)->fd[F_MEM_STAT], true,
				   "memory.stat", bytes, err);
}

static int v2_memory_usage(struct rg_cgroup *base, uint64_t *bytes,
			   struct rg_error *err)
{
	return rg_cg_memory_figure(base, to_v2(base)->fd[F_CURRENT], false,
				   "memory.current", bytes, err);
}

/*
 * Reclaim bytes: memory.reclaim (5.19+), or before it a memory.high of 0,
 * whose write reclaims down to it, and back to max (we never set another).
 */
static int v2_reclaim(struct rg_cgroup_v2 *cg, uint64_t bytes,
		      struct rg_error *err)
{
	char val[24];
	int ret;

	if (cg->fd[F_RECLAIM] >= 0) {
		snprintf(val, sizeof(val), "%" PRIu64, bytes);
		ret = rg_cg_write(cg->fd[F_RECLAIM], val);
		/* EAGAIN: less than all of it was reclaimable. */
		if (ret < 0 && ret != -EAGAIN)
			return rg_fail(err, -ret, "writing \"%s\" to %s", val,
				       v2_files[F_RECLAIM].name);
		return 0;
	}
	if (cg->fd[F_HIGH] < 0)
		return 0;
	if (v2_write(cg, F_HIGH, "0", err) < 0)
		return -1;
	return v2_write(cg, F_HIGH, "max", err);
}

/*
 * Page cache and slab the last run left would count in the next run's
 * peak (memory.peak's reset and the samples start from the current usage)
 * and crowd its limit. v2 zeroes no counter: start() takes baselines.
 */
static bool v2_needs_reclaim(struct rg_cgroup *base)
{
	uint64_t usage;
	struct rg_error ignored;

	return v2_memory_usage(base, &usage, &ignored) == 0 &&
	       rg_cg_worth_reclaiming(to_v2(base)->fd[F_MEM_STAT], usage,
				      base->resident_bytes);
}

static int v2_reset(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = to_v2(base);
	uint64_t usage;

	if (cg->fd[F_CURRENT] < 0)
		return 0;
	if (v2_memory_usage(base, &usage, err) < 0)
		return -1;
	base->unreclaimable = false;
	if (rg_cg_worth_reclaiming(cg->fd[F_MEM_STAT], usage,
				   base->resident_bytes)) {
		/* a keeper's pages cannot go: asking for them is slower */
		if (v2_reclaim(cg,
			       usage > base->resident_bytes ?
				       usage - base->resident_bytes :
				       usage,
			       err) < 0)
			return rg_fail_context(err, "cgroup v2 %s",
					       base->label);
		base->unreclaimable =
			rg_cg_holds_unreclaimable(cg->fd[F_MEM_STAT]);
	}
	return 0;
}

static int v2_populated(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = to_v2(base);
	uint64_t populated;

	if (cg->fd[F_EVENTS] < 0)
		return 0;
	if (v2_read_key(cg, F_EVENTS, "populated", &populated, err) < 0)
		return -1;
	return populated ? 1 : 0;
}

static bool v2_frozen(struct rg_cgroup_v2 *cg)
{
	uint64_t frozen;

	/* No "frozen" key to wait for: do not wait. */
	return rg_cg_read_key(cg->fd[F_EVENTS], "frozen", &frozen) < 0 ||
	       frozen;
}

/*
 * Before 5.14: freeze so that nothing forks, SIGKILL every task (fatal
 * signals get through the v2 freezer), thaw. A task in D state can keep
 * the cgroup from freezing; go on after a while.
 */
static int v2_kill_round(struct rg_cgroup_v2 *cg, struct rg_error *err)
{
	struct rg_cg_backoff b;
	int ret;

	if (cg->fd[F_FREEZE] >= 0) {
		if (v2_write(cg, F_FREEZE, "1", err) < 0)
			return -1;
		rg_cg_backoff_init(&b, 50, 10000, 100);
		while (!v2_frozen(cg) && rg_cg_backoff_sleep(&b))
			;
	}
	ret = rg_cg_procs_signal(cg->dir_fd, SIGKILL, err) < 0 ? -1 : 0;
	/* Never leave the cgroup frozen, even on error. */
	if (cg->fd[F_FREEZE] >= 0 &&
	    v2_write(cg, F_FREEZE, "0", ret ? NULL : err) < 0)
		ret = -1;
	return ret;
}

/*
 * The kernel sends at most one cgroup.events notification per 10 ms; a
 * longer step only bounds the wait should one be missed.
 */
#define V2_POLL_STEP_MS 20

/*
 * Each read of cgroup.events re-arms POLLPRI, so poll() sleeps until the
 * kernel next changes it (populated 1 -> 0) or the step times out.
 */
static int v2_wait_step(struct rg_cgroup_v2 *cg, struct rg_cg_backoff *b)
{
	struct pollfd pfd = { .fd = cg->fd[F_EVENTS], .events = POLLPRI };
	int left = rg_cg_backoff_left_ms(b);

	if (!left)
		return -1;
	poll(&pfd, 1, left < V2_POLL_STEP_MS ? left : V2_POLL_STEP_MS);
	return 0;
}

static int v2_kill_all(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = to_v2(base);
	struct rg_cg_backoff b;
	int ret;

	rg_cg_backoff_init(&b, 0, 0, RG_CG_KILL_TIMEOUT_MS);
	ret = v2_populated(base, err);
	/* cgroup.kill is race-free against forks: once is enough. */
	if (ret > 0 && cg->fd[F_KILL] >= 0) {
		base->kill_written = true;
		if (v2_write(cg, F_KILL, "1", err) < 0)
			ret = -1;
	}
	while (ret > 0) {
		if (cg->fd[F_KILL] < 0 && v2_kill_round(cg, err) < 0) {
			ret = -1;
			break;
		}
		if (v2_wait_step(cg, &b) < 0) {
			ret = rg_fail(err, EBUSY,
				      "tasks survive SIGKILL after %d ms",
				      RG_CG_KILL_TIMEOUT_MS);
			break;
		}
		ret = v2_populated(base, err);
	}
	if (ret < 0)
		return rg_fail_context(err, "killing cgroup v2 %s",
				       base->label);
	return 0;
}

static int v2_remove(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v2 *cg = to_v2(base);

	if (cg->dir_fd < 0)
		return 0;
	rg_close_fd(&cg->dir_fd);
	if (rg_cg_rmdir(cg->parent_fd, cg->name, err) < 0)
		return rg_fail_context(err, "cgroup v2 %s", base->label);
	return 0;
}

static void v2_release(struct rg_cgroup *base)
{
	struct rg_cgroup_v2 *cg = to_v2(base);
	int i;

	for (i = 0; i < V2_NR_FILES; i++)
		rg_close_fd(&cg->fd[i]);
	rg_psi_close(&cg->base.psi);
	rg_close_fd(&cg->dir_fd);
	rg_close_fd(&cg->parent_fd);
	free(cg);
}

static const struct rg_cgroup_ops v2_ops = {
	.name = "v2",
	.set_memory = v2_op_set_memory,
	.set_cpuset = v2_op_set_cpuset,
	.has_cpuset = v2_has_cpuset,
	.attach_self = v2_attach_self,
	.clone_fd = v2_clone_fd,
	.start = v2_start,
	.kill_all = v2_kill_all,
	.populated = v2_populated,
	.read_stats = v2_read_stats,
	.sample_interval_ms = v2_sample_interval_ms,
	.sample = v2_sample,
	.peak_resettable = v2_peak_resettable,
	.peak_clean = v2_peak_clean,
	.assume_peak_unused = v2_assume_peak_unused,
	.keep_private = v2_keep_private,
	.sample_unresettable_peak = v2_sample_unresettable_peak,
	.reset = v2_reset,
	.needs_reclaim = v2_needs_reclaim,
	.memory_usage = v2_memory_usage,
	.user_memory = v2_user_memory,
	.remove = v2_remove,
	.release = v2_release,
};
