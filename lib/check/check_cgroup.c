/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Items cgroup.*: the mode, the controllers runguard needs (v1
 * hierarchies; v2 root's cgroup.controllers and subtree_control, which
 * runguard never writes) and the configured parent, level by level.
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "check/check_internal.h"
#include "base/base.h"
#include "rg-build-config.h"

#define FIX_LEN 512

static void check_mode(struct rg_check_ctx *c)
{
	struct rg_error err = { 0 };
	struct statfs sfs;
	char text[1100];

	if (rg_cgroup_detect(&c->mode, &err) < 0) {
		rg_check_add(c->report, "cgroup.mode", RG_CHECK_ERROR,
			     "mount -t cgroup2 none " RG_CGROUP_ROOT,
			     "cannot tell the cgroup mode: %s",
			     rg_error_format(&err, text, sizeof(text)));
		return;
	}
	c->mode_known = true;
	if (c->mode == RG_CGROUP_V2) {
		rg_check_add(c->report, "cgroup.mode", RG_CHECK_OK, NULL,
			     "v2: " RG_CGROUP_ROOT " is the cgroup2 mount");
		return;
	}
	if (statfs(RG_CGROUP_ROOT "/unified", &sfs) == 0 &&
	    sfs.f_type == CGROUP2_SUPER_MAGIC)
		rg_check_add(c->report, "cgroup.mode", RG_CHECK_OK, NULL,
			     "v1 (hybrid: the cgroup2 mount " RG_CGROUP_ROOT
			     "/unified is not used)");
	else
		rg_check_add(c->report, "cgroup.mode", RG_CHECK_OK, NULL,
			     "v1 (legacy)");
}

/* -- v1 -------------------------------------------------------------- */

enum need { NEEDED, OPTIONAL, FOR_CPUSET };

static const struct {
	const char *name;
	enum need need;
	const char *use;
} v1_ctrl[] = {
	{ "memory", NEEDED, "memory limit, peak and OOM" },
	{ "cpuacct", NEEDED, "CPU time" },
	{ "freezer", NEEDED, "killing a run race-free" },
	{ "cpu", OPTIONAL, "each run one scheduling group" },
	{ "cpuset", FOR_CPUSET, "pinning runs to CPUs (-P)" },
};

static enum rg_check_status missing_status(const struct rg_check_ctx *c,
					   enum need need)
{
	if (need == NEEDED || (need == FOR_CPUSET && c->o.want_cpuset))
		return RG_CHECK_ERROR;
	return need == OPTIONAL ? RG_CHECK_OK : RG_CHECK_WARNING;
}

static void check_v1_controllers(struct rg_check_ctx *c)
{
	char item[32], fix[FIX_LEN], text[1100];
	enum rg_check_status st;
	struct rg_error err;
	const char *mount;

	for (size_t i = 0; i < sizeof(v1_ctrl) / sizeof(v1_ctrl[0]); i++) {
		const char *n = v1_ctrl[i].name;

		snprintf(item, sizeof(item), "cgroup.%s", n);
		if (rg_cgroup_v1_mount(n, &mount, &err) == 0) {
			rg_check_add(c->report, item, RG_CHECK_OK, NULL,
				     "v1 hierarchy at %s (%s)", mount,
				     v1_ctrl[i].use);
			continue;
		}
		st = missing_status(c, v1_ctrl[i].need);
		snprintf(fix, sizeof(fix),
			 "mkdir -p " RG_CGROUP_ROOT
			 "/%s && mount -t cgroup -o %s cgroup " RG_CGROUP_ROOT
			 "/%s",
			 n, n, n);
		rg_check_add(c->report, item, st, st ? fix : NULL,
			     "no v1 hierarchy (%s): %s%s",
			     rg_error_format(&err, text, sizeof(text)),
			     st ? "needed for " : "optional, for ",
			     v1_ctrl[i].use);
	}
}

/* -- v2 -------------------------------------------------------------- */

static void v2_controller(struct rg_check_ctx *c, const char *name,
			  enum need need, bool unavailable, bool disabled)
{
	enum rg_check_status st = missing_status(c, need);
	char item[32], fix[FIX_LEN];

	snprintf(item, sizeof(item), "cgroup.%s", name);
	if (unavailable) {
		snprintf(fix, sizeof(fix),
			 "boot with systemd.unified_cgroup_hierarchy=1 and without cgroup_disable=%s",
			 name);
		rg_check_add(c->report, item, st, fix,
			     "the kernel offers no %s controller in cgroup v2 (" RG_CGROUP_ROOT
			     "/cgroup.controllers)",
			     name);
	} else if (disabled) {
		snprintf(fix, sizeof(fix),
			 "echo +%s > " RG_CGROUP_ROOT "/cgroup.subtree_control",
			 name);
		rg_check_add(c->report, item, st, fix,
			     "not enabled in " RG_CGROUP_ROOT
			     "/cgroup.subtree_control, which runguard never writes%s",
			     need == FOR_CPUSET ?
				     ": runs cannot be pinned (-P); systemd removes it there when it reloads, unless a unit delegates cpuset (DOMjudge issue 3638)" :
				     "");
	} else {
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "available and enabled for the root's children");
	}
}

/* Returns whether the root passes cpuset on (the slots then use it). */
static bool check_v2_controllers(struct rg_check_ctx *c, int root_fd)
{
	unsigned int unav = 0, dis = 0;
	struct rg_error err;
	char text[1100];

	if (rg_cgroup_v2_root_missing(root_fd, RG_CG_MEMORY | RG_CG_CPUSET,
				      &unav, &dis, &err) < 0) {
		rg_check_add(c->report, "cgroup.memory", RG_CHECK_ERROR,
			     "mount -t cgroup2 none " RG_CGROUP_ROOT,
			     "cannot read the cgroup v2 root: %s",
			     rg_error_format(&err, text, sizeof(text)));
		return false;
	}
	v2_controller(c, "memory", NEEDED, unav & RG_CG_MEMORY,
		      dis & RG_CG_MEMORY);
	v2_controller(c, "cpuset", FOR_CPUSET, unav & RG_CG_CPUSET,
		      dis & RG_CG_CPUSET);
	return !((unav | dis) & RG_CG_CPUSET);
}

/* -- the parent ------------------------------------------------------ */

struct level_problem {
	enum rg_check_status status;
	char message[PATH_MAX + 256];
	char fix[PATH_MAX + 256];
};

/* What runguard cannot do, or must do again, at one existing level. */
static void check_level(int fd, const char *path, bool cpuset,
			struct level_problem *p)
{
	char enabled[RG_CG_BUF], procs[RG_CG_BUF];
	const char *lacks = NULL;
	struct rg_error err;

	if (rg_cg_read_file(fd, "cgroup.subtree_control", enabled,
			    sizeof(enabled), &err) < 0 ||
	    rg_cg_read_file(fd, "cgroup.procs", procs, sizeof(procs), &err) < 0)
		return;
	if (!rg_cg_list_has(enabled, "memory"))
		lacks = "memory";
	else if (cpuset && !rg_cg_list_has(enabled, "cpuset"))
		lacks = "cpuset";
	if (!lacks || p->status == RG_CHECK_ERROR)
		return;
	if (*procs) {
		p->status = RG_CHECK_ERROR;
		snprintf(p->message, sizeof(p->message),
			 "%s holds processes, so its cgroup.subtree_control cannot get +%s (cgroup v2 has no internal processes)",
			 path, lacks);
		snprintf(p->fix, sizeof(p->fix),
			 "for p in $(cat " RG_CGROUP_ROOT
			 "/%s/cgroup.procs); do echo $p > " RG_CGROUP_ROOT
			 "/cgroup.procs; done",
			 path);
		return;
	}
	if (p->status)
		return;
	p->status = RG_CHECK_WARNING;
	snprintf(p->message, sizeof(p->message),
		 "%s lacks +%s in cgroup.subtree_control (something removed it): runguard enables it again when it next makes a cgroup there",
		 path, lacks);
	snprintf(p->fix, sizeof(p->fix),
		 "echo +%s > " RG_CGROUP_ROOT "/%s/cgroup.subtree_control",
		 lacks, path);
}

/* Walk the parent's levels; how many exist. */
static int walk_v2_parent(int root_fd, const char *parent, bool cpuset,
			  struct level_problem *p)
{
	char path[PATH_MAX] = "", copy[PATH_MAX], *comp, *save = NULL;
	int up = dup(root_fd), fd, depth = 0;

	snprintf(copy, sizeof(copy), "%s", parent);
	for (comp = strtok_r(copy, "/", &save); comp && up >= 0;
	     comp = strtok_r(NULL, "/", &save)) {
		fd = openat(up, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(up);
		up = fd;
		if (fd < 0)
			break;
		snprintf(path + strlen(path), sizeof(path) - strlen(path),
			 "%s%s", depth ? "/" : "", comp);
		depth++;
		check_level(fd, path, cpuset, p);
	}
	if (up >= 0)
		close(up);
	return depth;
}

static int parent_depth(const char *parent)
{
	int n = 0;

	for (const char *s = parent; *s; s++)
		if (*s != '/' && (s == parent || s[-1] == '/'))
			n++;
	return n;
}

static void check_v2_parent(struct rg_check_ctx *c, int root_fd, bool cpuset)
{
	struct level_problem p = { 0 };
	int depth = walk_v2_parent(root_fd, c->parent, cpuset, &p);
	bool exists = depth == parent_depth(c->parent);

	if (p.status) {
		rg_check_add(c->report, "cgroup.parent", p.status, p.fix,
			     "%s: %s", c->parent, p.message);
		return;
	}
	rg_check_add(c->report, "cgroup.parent", RG_CHECK_OK, NULL, "%s: %s",
		     c->parent,
		     exists ?
			     "exists, passes its controllers on" :
			     "not made yet: runguard makes it at the first run");
}

static void check_v1_parent(struct rg_check_ctx *c)
{
	char missing[128] = "", path[PATH_MAX];
	const char *mount;
	struct rg_error err;

	for (size_t i = 0; i < 3; i++) {
		if (rg_cgroup_v1_mount(v1_ctrl[i].name, &mount, &err) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", mount, c->parent);
		if (access(path, F_OK) == 0)
			continue;
		snprintf(missing + strlen(missing),
			 sizeof(missing) - strlen(missing), "%s%s",
			 *missing ? ", " : "", v1_ctrl[i].name);
	}
	if (*missing)
		rg_check_add(c->report, "cgroup.parent", RG_CHECK_OK, NULL,
			     "%s: not made yet in %s: runguard makes it at the first run",
			     c->parent, missing);
	else
		rg_check_add(c->report, "cgroup.parent", RG_CHECK_OK, NULL,
			     "%s: exists in memory, cpuacct, freezer",
			     c->parent);
}

void rg_check_cgroup(struct rg_check_ctx *c)
{
	struct rg_error err;
	char text[1100];
	bool cpuset = false;
	int root_fd = -1;

	c->parent = c->o.cgroup_parent && *c->o.cgroup_parent ?
			    c->o.cgroup_parent :
			    RG_CGROUP_PARENT;
	check_mode(c);
	if (!c->mode_known)
		return;
	if (c->mode == RG_CGROUP_V1) {
		check_v1_controllers(c);
	} else {
		root_fd = open(RG_CGROUP_ROOT,
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (root_fd >= 0)
			cpuset = check_v2_controllers(c, root_fd);
	}
	if (rg_cg_check_parent(c->parent, &err) < 0)
		rg_check_add(c->report, "cgroup.parent", RG_CHECK_ERROR,
			     "meson configure -Dcgroup_parent=runguard BUILDDIR (library: rg_config_set_cgroup_parent())",
			     "%s", rg_error_format(&err, text, sizeof(text)));
	else if (c->mode == RG_CGROUP_V1)
		check_v1_parent(c);
	else if (root_fd >= 0)
		check_v2_parent(c, root_fd, cpuset);
	if (root_fd >= 0)
		close(root_fd);
}
