/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "run/slot.h"
#include "ns/ns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "base/base.h"
#include "run/spawn.h"
#include "run/waits.h"

/* What stock runguard unshares: no network, private IPC, mounts and name. */
#define RG_TRANSIENT_NS_FLAGS \
	(CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWUTS)

static void transient_name(char *buf, size_t len)
{
	static unsigned counter;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, len, "run-%d-%lld.%09ld-%u", (int)getpid(),
		 (long long)ts.tv_sec, ts.tv_nsec,
		 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
}

void rg_slot_init(struct rg_slot *slot, const struct rg_slot_ops *ops)
{
	slot->ops = ops;
	slot->cgroup = NULL;
	slot->clone_flags = 0;
	for (int i = 0; i < RG_NS_COUNT; i++)
		slot->ns_fd[i] = -1;
	slot->namespaces_outlive_run = false;
	slot->pool_index = -1;
}

void rg_slot_place(const struct rg_slot *slot, struct rg_child_place *place)
{
	place->cgroup = slot->cgroup;
	place->clone_flags = slot->clone_flags;
	for (int i = 0; i < RG_NS_COUNT; i++)
		place->ns_fd[i] = slot->ns_fd[i];
	place->namespaces_outlive_run = slot->namespaces_outlive_run;
}

int rg_slot_spawn(struct rg_slot *slot, const struct rg_child_plan *plan,
		  struct rg_child *child, struct rg_error *err)
{
	if (slot->ops->spawn)
		return slot->ops->spawn(slot, plan, child, err);
	return rg_spawn(plan, child, err);
}

int rg_slot_reap(struct rg_slot *slot, struct rg_child *child, int *status,
		 struct rusage *ru, struct rg_error *err)
{
	if (slot->ops->reap)
		return slot->ops->reap(slot, child, status, ru, err);
	return rg_slot_reap_own(child, status, ru, err);
}

int rg_slot_reap_own(struct rg_child *child, int *status, struct rusage *ru,
		     struct rg_error *err)
{
	pid_t pid;

	/* the child is ours to reap: its figures are there until then */
	child->run_delay_end = rg_task_run_delay(child->stat_fd);
	do {
		pid = wait4(child->pid, status, 0, ru);
	} while (pid < 0 && errno == EINTR);
	if (pid < 0)
		return rg_fail(err, errno, "waiting for the command");
	return 0;
}

bool rg_slot_runs_itself(const struct rg_slot *slot)
{
	return slot->ops->run != NULL;
}

int rg_slot_run(struct rg_slot *slot, const struct rg_config *cfg,
		const struct rg_child_plan *plan, const int dest[2],
		int signal_fd, struct rg_result *result, struct rg_error *err)
{
	return slot->ops->run(slot, cfg, plan, dest, signal_fd, result, err);
}

int rg_slot_kill_run(struct rg_slot *slot, struct rg_error *err)
{
	if (slot->ops->kill_run)
		return slot->ops->kill_run(slot, err);
	return rg_cgroup_kill_all(slot->cgroup, err);
}

void rg_slot_correct_stats(struct rg_slot *slot, struct rg_cgroup_stats *stats)
{
	if (slot->ops->correct_stats)
		slot->ops->correct_stats(slot, stats);
}

void rg_slot_prewarm(struct rg_slot *slot, const struct rg_config *cfg)
{
	if (slot->ops->prewarm)
		slot->ops->prewarm(slot, cfg);
}

int rg_slot_hold(struct rg_slot *slot, pid_t child, struct rg_error *err)
{
	return slot->ops->hold ? slot->ops->hold(slot, child, err) : 0;
}

int rg_slot_release(struct rg_slot *slot, struct rg_error *err)
{
	return slot ? slot->ops->release(slot, err) : 0;
}

bool rg_slot_can_abandon(const struct rg_slot *slot)
{
	return slot->ops->abandon != NULL;
}

void rg_slot_abandon(struct rg_slot *slot)
{
	slot->ops->abandon(slot);
}

/* The transient implementation. */

struct transient_slot {
	struct rg_slot base;
	/*
	 * The child's namespaces, held from its READY to the release:
	 * otherwise the command's exit would tear them down (the mount
	 * namespace waits for an RCU grace period) inside the timed window.
	 */
	int held_ns_fd[RG_NS_COUNT];
};

static struct transient_slot *to_transient(struct rg_slot *slot)
{
	return rg_container_of(slot, struct transient_slot, base);
}

static const char *const ns_names[RG_NS_COUNT] = {
	[RG_NS_IPC] = "ipc",
	[RG_NS_NET] = "net",
	[RG_NS_MNT] = "mnt",
	[RG_NS_UTS] = "uts",
};

static int transient_hold(struct rg_slot *slot, pid_t child,
			  struct rg_error *err)
{
	struct transient_slot *t = to_transient(slot);
	char path[64];

	for (int i = 0; i < RG_NS_COUNT; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)child,
			 ns_names[i]);
		t->held_ns_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (t->held_ns_fd[i] < 0)
			return rg_fail(err, errno, "opening %s", path);
	}
	return 0;
}

static int transient_release(struct rg_slot *slot, struct rg_error *err)
{
	struct transient_slot *t = to_transient(slot);
	int rc = rg_cgroup_destroy(slot->cgroup, err);
	struct rg_error ignored;
	unsigned int left;

	/*
	 * A file the run left in flight in a unix socket cycle (a lock on
	 * it included) goes only with the unix garbage collector: waited
	 * for here, not after the next run has started. Best effort: the
	 * namespace goes with its last fd anyway.
	 */
	if (t->held_ns_fd[RG_NS_NET] >= 0)
		rg_ns_settle_unix(t->held_ns_fd[RG_NS_NET], &left, &ignored);
	for (int i = 0; i < RG_NS_COUNT; i++)
		rg_close_fd(&t->held_ns_fd[i]);
	free(t);
	return rc;
}

/* In the watchdog, runguard dead: nothing freed (rg_cgroup_remove). */
static void transient_abandon(struct rg_slot *slot)
{
	struct rg_error ignored;

	rg_cgroup_remove(slot->cgroup, &ignored);
}

static const struct rg_slot_ops transient_slot_ops = {
	.hold = transient_hold,
	.release = transient_release,
	.abandon = transient_abandon,
};

int rg_slot_open_transient(const struct rg_config *cfg, struct rg_slot **out,
			   struct rg_error *err)
{
	struct rg_cgroup_limits limits = {
		.memory_bytes = cfg->memory_limit,
		.cpuset = cfg->cpuset,
		.set = RG_CG_SET_MEMORY | RG_CG_SET_CPUSET,
	};
	struct transient_slot *t = calloc(1, sizeof(*t));
	char name[96];

	if (!t)
		return rg_fail(err, errno, "allocating a slot");
	rg_slot_init(&t->base, &transient_slot_ops);
	for (int i = 0; i < RG_NS_COUNT; i++)
		t->held_ns_fd[i] = -1;
	t->base.clone_flags = RG_TRANSIENT_NS_FLAGS;
	transient_name(name, sizeof(name));
	if (rg_cgroup_create(cfg->cgroup_parent, name, cfg->cpuset != NULL,
			     &t->base.cgroup, err) < 0 ||
	    rg_cgroup_apply_limits(t->base.cgroup, &limits, err) < 0) {
		struct rg_error ignored;

		rg_cgroup_destroy(t->base.cgroup, &ignored);
		free(t);
		return -1;
	}
	*out = &t->base;
	return 0;
}
