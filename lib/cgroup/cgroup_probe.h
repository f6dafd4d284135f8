/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the backends know about the host, for the host check (lib/check)
 * and the pool's set-up: read-only probes, never on a run's path. Part of
 * cgroup.h, the folder's interface.
 */
#ifndef RG_CGROUP_PROBE_H
#define RG_CGROUP_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include <runguard/runguard.h>

/* Where the cgroup tree is (v2: the cgroup2 mount). */
#define RG_CGROUP_ROOT "/sys/fs/cgroup"

/* Controllers a v2 cgroup must have (bits for rg_cgroup_v2_create). */
#define RG_CG_MEMORY 0x1u
#define RG_CG_CPUSET 0x2u

/*
 * A cgroup parent as the backends take it: "a/b/c", each component a
 * valid cgroup name, at least one.
 */
int rg_cg_check_parent(const char *path, struct rg_error *err);

/*
 * Where the v1 controller ("memory", "cpuacct", "freezer", "cpu",
 * "cpuset") is mounted, as the backend uses it; -1 when it is not.
 */
int rg_cgroup_v1_mount(const char *controller, const char **mount,
		       struct rg_error *err);

/*
 * The v2 root's view of the controllers in ctrl: those the kernel does
 * not offer (cgroup.controllers) and those not enabled for its children
 * (cgroup.subtree_control), which the backend never writes itself.
 */
int rg_cgroup_v2_root_missing(int root_fd, unsigned int ctrl,
			      unsigned int *unavailable,
			      unsigned int *disabled, struct rg_error *err);

/* The v2 kernel features a non-root cgroup with memory shows. */
struct rg_cgroup_v2_features {
	bool memory;	      /* memory.current: the controller is on */
	bool peak;	      /* memory.peak, 5.19+ */
	bool peak_resettable; /* ... that takes "reset", 6.12+ */
	bool kill;	      /* cgroup.kill, 5.14+ */
	bool freeze;	      /* cgroup.freeze, 5.2+ */
	bool swap;	      /* memory.swap.max: swap accounting */
	bool reclaim;	      /* memory.reclaim, 5.19+ */
};

/* -1 when dir_fd shows no memory controller (the rest is then unknown). */
int rg_cgroup_v2_features(int dir_fd, struct rg_cgroup_v2_features *f);

/* Enough for every small control file we read (lists, keyed stats). */
#define RG_CG_BUF 4096
/* Whole small file, trailing newline stripped. */
int rg_cg_read_file(int dir_fd, const char *file, char *buf, size_t size,
		    struct rg_error *err);

/* word in a list separated by spaces or newlines (subtree_control, procs). */
bool rg_cg_list_has(const char *list, const char *word);

#endif
