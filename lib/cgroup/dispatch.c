/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup mode detection and dispatch to the v1/v2 backends (their shared
 * helpers are in cgroup_files.c).
 */
#include "cgroup/cgroup.h"

#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup/cgroup_backend.h"
#include "cgroup/cgroup_probe.h"
#include "base/base.h"
#include "rg-build-config.h"

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static enum rg_cgroup_mode detected_mode;
static int detect_errno;

static void detect(void)
{
	struct statfs sfs;

	if (statfs(RG_CGROUP_ROOT, &sfs) < 0) {
		detect_errno = errno;
		return;
	}
	detected_mode = sfs.f_type == CGROUP2_SUPER_MAGIC ? RG_CGROUP_V2 :
							    RG_CGROUP_V1;
}

int rg_cgroup_detect(enum rg_cgroup_mode *mode, struct rg_error *err)
{
	pthread_once(&detect_once, detect);
	if (detect_errno)
		return rg_fail(err, detect_errno, "statfs %s", RG_CGROUP_ROOT);
	*mode = detected_mode;
	return 0;
}

static int get_cgroup(const char *parent, const char *name, bool want_cpuset,
		      unsigned int how, struct rg_cgroup **out,
		      struct rg_error *err)
{
	enum rg_cgroup_mode mode = RG_CGROUP_V1;
	unsigned int ctrl = RG_CG_MEMORY;

	*out = NULL;
	if (!parent || !*parent)
		parent = RG_CGROUP_PARENT;
	if (rg_cgroup_detect(&mode, err) < 0)
		return -1;
	if (mode == RG_CGROUP_V1)
		return rg_cgroup_v1_create(parent, name, want_cpuset, how, out,
					   err);
	if (want_cpuset)
		ctrl |= RG_CG_CPUSET;
	return rg_cgroup_v2_create(RG_CGROUP_ROOT, parent, name, ctrl, how,
				   out, err);
}

int rg_cgroup_mount_table(char *buf, size_t len, struct rg_error *err)
{
	enum rg_cgroup_mode mode = RG_CGROUP_V1;

	if (rg_cgroup_detect(&mode, err) < 0)
		return -1;
	if (mode == RG_CGROUP_V1)
		return rg_cgroup_v1_mount_table(buf, len, err);
	if (len)
		*buf = '\0';
	return 0;
}

bool rg_cgroup_use_mount_table(const char *text, const char *cgroup_path)
{
	enum rg_cgroup_mode mode = RG_CGROUP_V1;
	struct rg_error ignored;

	if (rg_cgroup_detect(&mode, &ignored) < 0 || mode != RG_CGROUP_V1)
		return false;
	return rg_cgroup_v1_use_mount_table(text, cgroup_path);
}

const char *rg_cgroup_wait_method(void)
{
	enum rg_cgroup_mode mode = RG_CGROUP_V1;
	struct rg_error ignored;
	const char *mount;

	if (rg_cgroup_detect(&mode, &ignored) < 0)
		return NULL;
	if (mode == RG_CGROUP_V2)
		return "cgroup-psi";
	return rg_cgroup_v1_mount("unified", &mount, &ignored) == 0 ?
		       "unified-psi" :
		       NULL;
}

int rg_cgroup_create(const char *parent, const char *name, bool want_cpuset,
		     struct rg_cgroup **out, struct rg_error *err)
{
	return get_cgroup(parent, name, want_cpuset, 0, out, err);
}

int rg_cgroup_open(const char *parent, const char *name, bool want_cpuset,
		   bool own_parent, struct rg_cgroup **out,
		   struct rg_error *err)
{
	return get_cgroup(parent, name, want_cpuset,
			  RG_CG_REUSE | (own_parent ? RG_CG_OWN_PARENT : 0),
			  out, err);
}

int rg_cgroup_apply_limits(struct rg_cgroup *cg,
			   const struct rg_cgroup_limits *limits,
			   struct rg_error *err)
{
	bool memory = limits->set & RG_CG_SET_MEMORY;
	bool cpuset = limits->set & RG_CG_SET_CPUSET;
	bool has_cpuset = cg->ops->has_cpuset(cg);

	if (cpuset && limits->cpuset && !has_cpuset)
		return rg_fail(err, EINVAL,
			       "cgroup %s was created without cpuset",
			       cg->label);
	if ((memory && cg->ops->set_memory(cg, limits->memory_bytes, err) < 0) ||
	    (cpuset && has_cpuset &&
	     cg->ops->set_cpuset(cg, limits->cpuset, err) < 0))
		return rg_fail_context(err, "cgroup %s %s", cg->ops->name,
				       cg->label);
	return 0;
}

int rg_cgroup_attach_self(const struct rg_cgroup *cg)
{
	return cg->ops->attach_self(cg);
}

int rg_cgroup_clone_fd(const struct rg_cgroup *cg)
{
	/* no cgroup: the child stays in its parent's (a keeper's runner) */
	if (!cg)
		return -1;
	return cg->ops->clone_fd(cg);
}

int rg_cgroup_start(struct rg_cgroup *cg, struct rg_error *err)
{
	if (cg->ops->start(cg, err) < 0)
		return -1;
	rg_psi_start(&cg->psi);
	cg->window_open = true;
	return 0;
}

void rg_cgroup_reader_starts_now(struct rg_cgroup *cg)
{
	cg->reader_cpu_base = rg_cg_reader_cpu_ns();
}

void rg_cgroup_stop(struct rg_cgroup *cg)
{
	rg_psi_stop(&cg->psi);
}

int rg_cgroup_kill_all(struct rg_cgroup *cg, struct rg_error *err)
{
	/* emptied, and no child spawned into it since: nothing to look for */
	if (cg->known_empty)
		return 0;
	if (cg->ops->kill_all(cg, err) < 0)
		return -1;
	cg->known_empty = true;
	return 0;
}

const char *rg_cgroup_label(const struct rg_cgroup *cg)
{
	return cg->label;
}

void rg_cgroup_expect_tasks(struct rg_cgroup *cg)
{
	cg->known_empty = false;
}

void rg_cgroup_set_resident(struct rg_cgroup *cg, uint64_t bytes)
{
	cg->resident_bytes = bytes;
}

int rg_cgroup_populated(struct rg_cgroup *cg, struct rg_error *err)
{
	return cg->ops->populated(cg, err);
}

/* The counters' deltas from rg_cgroup_start() on: the run's. */
static void window_deltas(struct rg_cgroup *cg, struct rg_cgroup_stats *stats)
{
	rg_psi_delta(&cg->psi, stats->wait_ns);
	for (int k = 0; k < RG_PSI_NR; k++)
		if (stats->wait_ns[k] >= 0)
			stats->wait_method = cg->psi_method;
}

/*
 * No window was opened (a child that died in its set-up): deltas against
 * stale baselines would hand this run an earlier run's CPU time and
 * faults. None, then; the peak and the OOM kill are still the kernel's.
 */
static void no_window(struct rg_cgroup_stats *stats)
{
	stats->cpu_ns = -1;
	stats->reader_cpu_ns = -1;
	stats->major_faults = -1;
	for (int k = 0; k < RG_PSI_NR; k++)
		stats->wait_ns[k] = -1;
}

int rg_cgroup_read_stats(struct rg_cgroup *cg, struct rg_cgroup_stats *stats,
			 struct rg_error *err)
{
	memset(stats, 0, sizeof(*stats));
	stats->cpu_ns = -1;
	stats->reader_cpu_ns = -1;
	stats->major_faults = -1;
	if (cg->ops->read_stats(cg, stats, err) < 0)
		return -1;
	if (cg->window_open)
		window_deltas(cg, stats);
	else
		no_window(stats);
	/* a kept cgroup's next run starts from its own start, or none */
	rg_psi_forget(&cg->psi);
	cg->window_open = false;
	return 0;
}

unsigned int rg_cgroup_sample_interval_ms(const struct rg_cgroup *cg)
{
	return cg->ops->sample_interval_ms ? cg->ops->sample_interval_ms(cg) :
					     0;
}

void rg_cgroup_sample(struct rg_cgroup *cg)
{
	if (cg->ops->sample)
		cg->ops->sample(cg);
}

bool rg_cgroup_fresh(const struct rg_cgroup *cg)
{
	return cg->fresh;
}

bool rg_cgroup_peak_resettable(const struct rg_cgroup *cg)
{
	return cg->ops->peak_resettable(cg);
}

bool rg_cgroup_peak_clean(const struct rg_cgroup *cg)
{
	if (cg->ops->peak_clean)
		return cg->ops->peak_clean(cg);
	return cg->ops->peak_resettable(cg);
}

int rg_cgroup_keep_private(struct rg_cgroup *cg, struct rg_error *err)
{
	return cg->ops->keep_private(cg, err);
}

void rg_cgroup_assume_peak_unused(struct rg_cgroup *cg)
{
	if (cg->ops->assume_peak_unused)
		cg->ops->assume_peak_unused(cg);
}

void rg_cgroup_faults_by_reaper(struct rg_cgroup *cg)
{
	cg->faults_by_reaper = true;
}

void rg_cgroup_sample_unresettable_peak(struct rg_cgroup *cg)
{
	if (cg->ops->sample_unresettable_peak)
		cg->ops->sample_unresettable_peak(cg);
}

int rg_cgroup_reset(struct rg_cgroup *cg, struct rg_error *err)
{
	return cg->ops->reset(cg, err);
}

bool rg_cgroup_reset_is_slow(struct rg_cgroup *cg)
{
	return cg->ops->needs_reclaim(cg);
}

int rg_cgroup_memory_usage(struct rg_cgroup *cg, uint64_t *bytes,
			   struct rg_error *err)
{
	return cg->ops->memory_usage(cg, bytes, err);
}

int rg_cgroup_user_memory(struct rg_cgroup *cg, uint64_t *bytes,
			  struct rg_error *err)
{
	return cg->ops->user_memory(cg, bytes, err);
}

void rg_cgroup_close(struct rg_cgroup *cg)
{
	if (cg)
		cg->ops->release(cg);
}

int rg_cgroup_remove(struct rg_cgroup *cg, struct rg_error *err)
{
	struct rg_error kill_err;
	int killed, removed;

	if (!cg)
		return 0;
	killed = cg->ops->kill_all(cg, &kill_err);
	removed = cg->ops->remove(cg, err);
	/* A failed rmdir is usually explained by the failed kill. */
	if (killed < 0 && err)
		*err = kill_err;
	return killed < 0 || removed < 0 ? -1 : 0;
}

int rg_cgroup_destroy(struct rg_cgroup *cg, struct rg_error *err)
{
	int rc = rg_cgroup_remove(cg, err);

	rg_cgroup_close(cg);
	return rc;
}

bool rg_cgroup_needs_recycle(const struct rg_cgroup *cg)
{
	return cg && (cg->kill_written || cg->unreclaimable);
}
