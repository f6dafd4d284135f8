/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Items kernel.*: the features runguard's code paths depend on, probed
 * where the kernel shows them (a v2 cgroup's files, clone3's answer,
 * mount options) rather than guessed from the version, and the hazards
 * known by version (IPC namespace teardown before 6.3).
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "check/check_internal.h"
#include "base/base.h"

/* -- the probe cgroup (v2) ------------------------------------------- */

static bool passes_memory_on(int fd)
{
	char enabled[RG_CG_BUF];
	struct rg_error ignored;

	return rg_cg_read_file(fd, "cgroup.subtree_control", enabled,
			       sizeof(enabled), &ignored) >= 0 &&
	       rg_cg_list_has(enabled, "memory");
}

/* Deepest existing level of the parent into *up; a memory one as probe. */
static void find_probe(struct rg_check_ctx *c, int *up)
{
	char copy[PATH_MAX], path[PATH_MAX] = "", *comp, *save = NULL;
	int fd;

	snprintf(copy, sizeof(copy), "%s", c->parent);
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		fd = openat(*up, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return;
		close(*up);
		*up = fd;
		snprintf(path + strlen(path), sizeof(path) - strlen(path),
			 "%s%s", *path ? "/" : "", comp);
		if (faccessat(fd, "memory.current", F_OK, 0) < 0)
			continue;
		rg_close_fd(&c->probe_fd);
		c->probe_fd = dup(fd);
		snprintf(c->probe_label, sizeof(c->probe_label), "%s", path);
	}
}

void rg_check_probe_open(struct rg_check_ctx *c)
{
	int up;

	c->probe_fd = c->probe_up_fd = -1;
	if (!c->mode_known || c->mode != RG_CGROUP_V2 ||
	    rg_cg_check_parent(c->parent, NULL) < 0)
		return;
	up = open(RG_CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return;
	find_probe(c, &up);
	if (c->probe_fd >= 0 || !passes_memory_on(up)) {
		close(up);
		return;
	}
	/* nothing to look at: one empty cgroup, removed in probe_close */
	snprintf(c->probe_name, sizeof(c->probe_name), "rg-check-%d",
		 (int)getpid());
	if (mkdirat(up, c->probe_name, 0755) < 0) {
		c->probe_name[0] = '\0';
		close(up);
		return;
	}
	c->probe_up_fd = up;
	c->probe_fd = openat(up, c->probe_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(c->probe_label, sizeof(c->probe_label),
		 "a cgroup made for the check below %s", c->parent);
}

void rg_check_probe_close(struct rg_check_ctx *c)
{
	rg_close_fd(&c->probe_fd);
	if (c->probe_name[0])
		unlinkat(c->probe_up_fd, c->probe_name, AT_REMOVEDIR);
	c->probe_name[0] = '\0';
	rg_close_fd(&c->probe_up_fd);
}

/* -- items ----------------------------------------------------------- */

static void unprobed(struct rg_check_ctx *c, const char *item)
{
	/* the memory controller is not what is wrong then: cgroup.parent */
	if (rg_cg_check_parent(c->parent, NULL) < 0) {
		rg_check_add(c->report, item, RG_CHECK_WARNING, NULL,
			     "not probed: the cgroup parent `%s' is invalid (see cgroup.parent)",
			     c->parent);
		return;
	}
	rg_check_add(c->report, item, RG_CHECK_WARNING,
		     "echo +memory > " RG_CGROUP_ROOT "/cgroup.subtree_control",
		     "cannot probe: no cgroup along %s shows the memory controller",
		     c->parent);
}

static void check_release(struct rg_check_ctx *c)
{
	struct utsname u;

	if (uname(&u) == 0)
		rg_check_add(c->report, "kernel.release", RG_CHECK_OK, NULL,
			     "%s %s", u.release, u.version);
}

static bool v1_memsw(void)
{
	const char *mount;
	char path[PATH_MAX];
	struct rg_error ignored;

	if (rg_cgroup_v1_mount("memory", &mount, &ignored) < 0)
		return false;
	snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes", mount);
	return access(path, F_OK) == 0;
}

static void check_peak(struct rg_check_ctx *c,
		       const struct rg_cgroup_v2_features *f)
{
	const char *item = "kernel.memory-peak";

	if (c->mode == RG_CGROUP_V1)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "v1 %s, reset by a write before each run",
			     v1_memsw() ? "memory.memsw.max_usage_in_bytes" :
					  "memory.max_usage_in_bytes");
	else if (f->peak_resettable)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "memory.peak, reset per run (6.12+); probed in %s",
			     c->probe_label);
	else if (f->peak && !c->o.pool_size)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "memory.peak cannot be reset (5.19-6.11), exact anyway: each run gets a new cgroup; probed in %s",
			     c->probe_label);
	else if (f->peak)
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "echo 'v2-memory-peak = exact' >> /etc/runguard.conf (or a kernel >= 6.12)",
			     "memory.peak cannot be reset (5.19-6.11): pool slots sample memory.current every 5 ms (a lower bound), or with v2-memory-peak=exact make a memory cgroup per run; probed in %s",
			     c->probe_label);
	else
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "a kernel >= 5.19 (6.12 for pool slots)",
			     "no memory.peak (before 5.19): memory.current sampled every 5 ms, a lower bound; probed in %s",
			     c->probe_label);
}

static void check_kill(struct rg_check_ctx *c,
		       const struct rg_cgroup_v2_features *f)
{
	const char *item = "kernel.cgroup-kill";

	if (c->mode == RG_CGROUP_V1)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "v1 freezer: freeze, SIGKILL every task, thaw");
	else if (f->kill)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "cgroup.kill (5.14+)");
	else if (f->freeze)
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "a kernel >= 5.14",
			     "no cgroup.kill (before 5.14): cgroup.freeze, SIGKILL every task, thaw");
	else
		rg_check_add(c->report, item, RG_CHECK_ERROR,
			     "a kernel >= 5.14",
			     "neither cgroup.kill nor cgroup.freeze (before 5.2): runs cannot be killed race-free");
}

/*
 * clone3 with CLONE_INTO_CGROUP and a descriptor that cannot be open:
 * EBADF where both are known (5.7+), EINVAL where clone3 does not know
 * the flag (5.3-5.6), ENOSYS without clone3. Nothing is created.
 */
static int probe_clone3(void)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = INT_MAX,
	};
	long pid = syscall(SYS_clone3, &args, sizeof(args));

	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid((pid_t)pid, NULL, 0);
		return 0;
	}
	return errno;
}

static void check_clone3(struct rg_check_ctx *c)
{
	const char *item = "kernel.clone-into-cgroup";
	bool v2 = c->mode == RG_CGROUP_V2;
	int e = probe_clone3();

	if (e == EBADF || e == 0)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL, "%s",
			     v2 ? "clone3(CLONE_INTO_CGROUP): a run's child is born in its cgroup, no migration" :
				  "clone3 works (v1 does not use CLONE_INTO_CGROUP: the child joins its cgroups by cgroup.procs)");
	else if (e == EINVAL)
		rg_check_add(c->report, item, v2 ? RG_CHECK_ERROR : RG_CHECK_OK,
			     v2 ? "a kernel >= 5.7" : NULL,
			     "clone3 without CLONE_INTO_CGROUP (5.3-5.6)%s",
			     v2 ? ": runguard cannot start runs on cgroup v2" :
				  ", not needed on v1");
	else
		rg_check_add(c->report, item, RG_CHECK_ERROR,
			     "a kernel >= 5.7; in a container, a seccomp profile that allows clone3",
			     "clone3 fails (%s): runguard cannot start runs",
			     strerror(e));
}

/* Does the mount at point have option (a super option) in mountinfo? */
static bool mount_has_option(const char *point, const char *option)
{
	char line[4096], *sep, *opts, *save = NULL;
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX];

		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    strcmp(mnt, point))
			continue;
		sep = strstr(line, " - ");
		/* " - fstype source super-options" */
		if (!sep || !strtok_r(sep + 3, " ", &save) ||
		    !strtok_r(NULL, " ", &save))
			continue;
		opts = strtok_r(NULL, " \n", &save);
		for (char *o = opts ? strtok_r(opts, ",", &save) : NULL; o;
		     o = strtok_r(NULL, ",", &save))
			found |= !strcmp(o, option);
	}
	fclose(f);
	return found;
}

static void check_favordynmods(struct rg_check_ctx *c)
{
	const char *item = "kernel.favordynmods";

	if (c->mode == RG_CGROUP_V2)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL, "%s",
			     mount_has_option(RG_CGROUP_ROOT, "favordynmods") ?
				     "on for " RG_CGROUP_ROOT :
				     "off for " RG_CGROUP_ROOT
				     ", not needed: runs are born in their cgroup (CLONE_INTO_CGROUP)");
	else if (rg_check_kernel_at_least(c, 6, 0) || !c->o.pool_size ||
		 c->o.pool_keepers)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL, "%s",
			     rg_check_kernel_at_least(c, 6, 0) ?
				     "the kernel takes it (6.0+): a v1 pool without keepers mounts a named hierarchy with it if v1-favordynmods = yes" :
				     "not known before 6.0; not needed here (no pool, or resident slots)");
	else
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "echo 'pool-keeper = yes' >> /etc/runguard.conf (or a kernel >= 6.0)",
			     "not known before 6.0: each pooled run's move into its v1 cgroups may wait for an RCU grace period (5-7 ms after idle)");
}

static unsigned long swap_total_kb(void)
{
	unsigned long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SwapTotal: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void check_swap(struct rg_check_ctx *c,
		       const struct rg_cgroup_v2_features *f)
{
	const char *item = "kernel.swap-accounting";
	bool v1 = c->mode == RG_CGROUP_V1;
	bool on = v1 ? v1_memsw() : f->swap;
	unsigned long swap = swap_total_kb();

	if (on)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL, "%s",
			     v1 ? "memory.memsw.*: limits and peaks include swap" :
				  "memory.swap.max: limited runs get no swap");
	else if (!swap)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "off, and the host has no swap");
	else
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "add swapaccount=1 to GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub, reboot",
			     "off (no %s) with %lu MiB of swap: a run can swap beyond its memory limit unseen",
			     v1 ? "memory.memsw.*" : "memory.swap.max",
			     swap / 1024);
}

/*
 * Which of a run's waits (docs/meta-file.md) the host can give: the
 * cgroup's pressure files (v2, or v1 with a unified hierarchy), else the
 * command's own schedstat for the CPU wait alone.
 */
static void check_waits(struct rg_check_ctx *c)
{
	const char *item = "kernel.waits";
	bool host = access("/proc/pressure/cpu", R_OK) == 0;
	const char *method = host ? rg_cgroup_wait_method() : NULL;

	if (method)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "every run reports wait-cpu-time, wait-io-time, "
			     "wait-memory-time (%s), host-pressure and "
			     "wall-time-cause",
			     method);
	else if (host)
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "mount a cgroup2 hierarchy beside the v1 ones "
			     "(systemd: a hybrid boot keeps one at "
			     "/sys/fs/cgroup/unified)",
			     "no cgroup pressure files (cgroup v1 without a "
			     "unified hierarchy, or another cgroup namespace): "
			     "runs report the command's own wait-cpu-time "
			     "(schedstat) and host-pressure, no I/O or memory "
			     "waits");
	else
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "psi=1 on the kernel command line (CONFIG_PSI)",
			     "no pressure stall information (/proc/pressure): "
			     "runs report the command's own wait-cpu-time "
			     "(schedstat) alone");
}

static void check_ipc(struct rg_check_ctx *c)
{
	const char *item = "kernel.ipc-namespace";

	if (!c->kernel[0])
		rg_check_add(c->report, item, RG_CHECK_WARNING, "uname -r",
			     "unknown kernel version");
	else if (rg_check_kernel_at_least(c, 6, 3))
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "6.3+: a run's IPC namespace is freed without waiting");
	else if (c->o.pool_size)
		rg_check_add(c->report, item, RG_CHECK_OK, NULL,
			     "before 6.3, but pool slots keep their namespaces");
	else
		rg_check_add(c->report, item, RG_CHECK_WARNING,
			     "echo 'pool-size = 4' >> /etc/runguard.conf",
			     "before 6.3 each run's IPC namespace waits for an RCU grace period to be freed: under many short runs dying namespaces pile up and the host slows down; the pool avoids it");
}

void rg_check_kernel(struct rg_check_ctx *c)
{
	struct rg_cgroup_v2_features f = { 0 };
	bool probed;

	check_release(c);
	if (c->mode_known) {
		rg_check_probe_open(c);
		probed = c->mode == RG_CGROUP_V1 ||
			 (c->probe_fd >= 0 &&
			  rg_cgroup_v2_features(c->probe_fd, &f) == 0);
		if (probed) {
			check_peak(c, &f);
			check_kill(c, &f);
			check_swap(c, &f);
		} else {
			unprobed(c, "kernel.memory-peak");
			unprobed(c, "kernel.cgroup-kill");
			unprobed(c, "kernel.swap-accounting");
		}
		rg_check_probe_close(c);
		check_favordynmods(c);
	}
	check_clone3(c);
	check_ipc(c);
	check_waits(c);
}
