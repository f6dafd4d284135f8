/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "slot.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "error.h"
#include "pool.h"

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

int rg_slot_open_transient(const struct rg_config *cfg, struct rg_slot **out,
			   struct rg_error *err)
{
	struct rg_cgroup_limits limits = {
		.memory_bytes = cfg->memory_limit,
		.cpuset = cfg->cpuset,
		.set = RG_CG_SET_MEMORY | RG_CG_SET_CPUSET,
	};
	struct rg_slot *slot;
	char name[96];

	slot = calloc(1, sizeof(*slot));
	if (!slot)
		return rg_fail(err, errno, "allocating a slot");
	for (int i = 0; i < RG_NS_COUNT; i++)
		slot->ns_fd[i] = slot->held_ns_fd[i] = -1;
	slot->transient = true;
	slot->pool_index = -1;
	slot->clone_flags = RG_TRANSIENT_NS_FLAGS;
	transient_name(name, sizeof(name));
	if (rg_cgroup_create(cfg->cgroup_parent, name, cfg->cpuset != NULL,
			     &slot->cgroup, err) < 0 ||
	    rg_cgroup_apply_limits(slot->cgroup, &limits, err) < 0) {
		struct rg_error ignored;

		rg_cgroup_destroy(slot->cgroup, &ignored);
		free(slot);
		return -1;
	}
	*out = slot;
	return 0;
}

int rg_slot_acquire_pooled(const struct rg_config *cfg, int wake_fd,
			   struct rg_slot **out, struct rg_error *err)
{
	struct rg_slot *slot = calloc(1, sizeof(*slot));

	if (!slot)
		return rg_fail(err, errno, "allocating a slot");
	for (int i = 0; i < RG_NS_COUNT; i++)
		slot->held_ns_fd[i] = -1;
	if (rg_pool_acquire(cfg, wake_fd, &slot->lease, err) < 0) {
		free(slot);
		return -1;
	}
	/* the lease owns the cgroup and the namespace fds */
	slot->cgroup = slot->lease->cgroup;
	for (int i = 0; i < RG_NS_COUNT; i++)
		slot->ns_fd[i] = slot->lease->ns_fd[i];
	slot->pool_index = (int)slot->lease->index;
	*out = slot;
	return 0;
}

static const char *const ns_names[RG_NS_COUNT] = {
	[RG_NS_IPC] = "ipc",
	[RG_NS_NET] = "net",
	[RG_NS_MNT] = "mnt",
	[RG_NS_UTS] = "uts",
};

int rg_slot_hold_namespaces(struct rg_slot *slot, pid_t child,
			    struct rg_error *err)
{
	char path[64];

	if (!slot->clone_flags)
		return 0;
	for (int i = 0; i < RG_NS_COUNT; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)child,
			 ns_names[i]);
		slot->held_ns_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (slot->held_ns_fd[i] < 0)
			return rg_fail(err, errno, "opening %s", path);
	}
	return 0;
}

int rg_slot_release(struct rg_slot *slot, struct rg_error *err)
{
	int rc = 0;

	if (!slot)
		return 0;
	if (slot->transient)
		rc = rg_cgroup_destroy(slot->cgroup, err);
	else
		rc = rg_pool_release(slot->lease, err);
	for (int i = 0; i < RG_NS_COUNT; i++) {
		if (slot->transient && slot->ns_fd[i] >= 0)
			close(slot->ns_fd[i]);
		if (slot->held_ns_fd[i] >= 0)
			close(slot->held_ns_fd[i]);
	}
	free(slot);
	return rc;
}
