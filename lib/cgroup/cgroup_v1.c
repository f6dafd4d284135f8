/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v1 backend: one directory per hierarchy (memory, cpuacct, freezer,
 * cpu when mounted and, when pinning, cpuset), found through libcgroup once
 * per process. The cpu group holds no setting; as in DOMjudge it makes each
 * run one scheduling group, so a many-threaded run competes with concurrent
 * runs as one.
 * Controllers co-mounted in one hierarchy share one directory.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup_backend.h"
#include "base/base.h"

enum v1_ctrl {
	V1_MEMORY,
	V1_CPUACCT,
	V1_FREEZER,
	V1_CPU, /* optional: used when mounted */
	/*
	 * optional: a hybrid host's cgroup2 mount, without controllers, for
	 * the run's pressure stall totals (psi.h)
	 */
	V1_UNIFIED,
	V1_CPUSET, /* last: only when pinning */
	V1_NR_CTRL
};

static const char *const v1_ctrl_name[V1_NR_CTRL] = {
	[V1_MEMORY] = "memory",	  [V1_CPUACCT] = "cpuacct",
	[V1_FREEZER] = "freezer", [V1_CPU] = "cpu",
	[V1_UNIFIED] = "unified", [V1_CPUSET] = "cpuset",
};

/*
 * Where each controller is mounted (libcgroup result code when not), found
 * once per process: from a pool's saved table when it still holds, else by
 * libcgroup (whose cgroup_init() costs close to a millisecond).
 */
static pthread_mutex_t v1_mounts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool ready;
	int init_ret;
	int ret[V1_NR_CTRL];
	char *mount[V1_NR_CTRL];
} v1_mounts;

/* A control file every non-root cgroup of the controller has. */
static const char *const v1_ctrl_marker[V1_NR_CTRL] = {
	[V1_MEMORY] = "memory.limit_in_bytes", [V1_CPUACCT] = "cpuacct.usage",
	[V1_FREEZER] = "freezer.state",	       [V1_CPU] = "cpu.shares",
	[V1_UNIFIED] = "cgroup.procs",	       [V1_CPUSET] = "cpuset.cpus",
};

/*
 * Control files kept open for the per-run calls. The memsw ones are -1
 * without swap accounting.
 */
enum v1_file {
	F_LIMIT,	   /* memory.limit_in_bytes */
	F_MEMSW_LIMIT,	   /* memory.memsw.limit_in_bytes */
	F_MAX_USAGE,	   /* memory.max_usage_in_bytes */
	F_MEMSW_MAX_USAGE, /* memory.memsw.max_usage_in_bytes */
	F_FAILCNT,	   /* memory.failcnt */
	F_MEMSW_FAILCNT,   /* memory.memsw.failcnt */
	F_MEM_USAGE,	   /* memory.usage_in_bytes */
	F_KMEM_USAGE,	   /* memory.kmem.usage_in_bytes, -1 if none */
	F_FORCE_EMPTY,	   /* memory.force_empty */
	F_OOM,		   /* memory.oom_control */
	F_MEMSTAT,	   /* memory.stat: pgmajfault */
	F_USAGE,	   /* cpuacct.usage */
	F_STATE,	   /* freezer.state */
	F_CPUS,		   /* cpuset.cpus */
	F_MEMS,		   /* cpuset.mems */
	V1_NR_FILES
};

struct v1_hier {
	const char *mount;
	int parent_fd; /* <mount>/<parent> */
	int dir_fd;    /* <mount>/<parent>/<name>, -1 until opened */
	int procs_fd;  /* its cgroup.procs, for attach */
	bool made;     /* dir made by this process */
};

struct rg_cgroup_v1 {
	struct rg_cgroup base;
	char name[NAME_MAX + 1];
	struct v1_hier hier[V1_NR_CTRL];
	int nr_hier;
	int ctrl_hier[V1_NR_CTRL]; /* index into hier[], -1 if not used */

	int fd[V1_NR_FILES];
	bool memsw; /* swap accounting: peak is memsw.max_usage_in_bytes */
	enum v1_file peak; /* the watermark reported */

	uint64_t cpu_base;
	uint64_t oom_base;
	uint64_t majflt_base;
};

static const struct rg_cgroup_ops v1_ops;
static int v1_remove(struct rg_cgroup *base, struct rg_error *err);
static void v1_release(struct rg_cgroup *base);

static struct rg_cgroup_v1 *to_v1(const struct rg_cgroup *cg)
{
	return rg_container_of(cg, struct rg_cgroup_v1, base);
}

/*
 * Co-mounted controllers can be reached by several paths (systemd links
 * /sys/fs/cgroup/cpu and cpuacct to cpu,cpuacct): one path per hierarchy,
 * so that each is set up, attached and read once.
 */
static void v1_canonical_mount(char **mount)
{
	char *real = realpath(*mount, NULL);

	if (!real)
		return;
	free(*mount);
	*mount = real;
}

/* The cgroup namespace of the host (include/linux/proc_ns.h). */
#define INIT_CGROUP_NS "cgroup:[4026531835]"

/*
 * A hybrid host's cgroup2 mount, where the tasks of each v1 cgroup can
 * also be grouped for their pressure totals. Only in the host's cgroup
 * namespace: in another one (a container), moving a task across the
 * namespace's root is refused.
 */
static void v1_find_unified(void)
{
	char line[PATH_MAX + 256], root[PATH_MAX], point[PATH_MAX];
	char ns[64];
	const char *sep;
	ssize_t n;
	FILE *f;

	v1_mounts.ret[V1_UNIFIED] = ECGROUPSUBSYSNOTMOUNTED;
	n = readlink("/proc/self/ns/cgroup", ns, sizeof(ns) - 1);
	if (n < 0 || (ns[n] = '\0', strcmp(ns, INIT_CGROUP_NS)))
		return;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep, " - cgroup2 ", 11) ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    strcmp(root, "/") || !strcmp(point, "/sys/fs/cgroup"))
			continue;
		v1_mounts.mount[V1_UNIFIED] = strdup(point);
		if (v1_mounts.mount[V1_UNIFIED])
			v1_mounts.ret[V1_UNIFIED] = 0;
		break;
	}
	fclose(f);
}

/* For _cleanup_: release the lock that the scope took. */
static void v1_unlock(pthread_mutex_t **lock)
{
	pthread_mutex_unlock(*lock);
}

static void v1_find_mounts(void)
{
	_cleanup_(v1_unlock) pthread_mutex_t *lock = &v1_mounts_lock;
	int i;

	pthread_mutex_lock(lock);
	if (v1_mounts.ready)
		return;
	v1_mounts.init_ret = cgroup_init();
	for (i = 0; i < V1_NR_CTRL && !v1_mounts.init_ret; i++) {
		if (i == V1_UNIFIED) {
			v1_find_unified();
			continue;
		}
		v1_mounts.ret[i] =
			cgroup_get_subsys_mount_point(v1_ctrl_name[i],
						      &v1_mounts.mount[i]);
		if (!v1_mounts.ret[i])
			v1_canonical_mount(&v1_mounts.mount[i]);
	}
	v1_mounts.ready = true;
}

int rg_cgroup_v1_mount_table(char *buf, size_t len, struct rg_error *err)
{
	size_t used = 0;
	int i, n;

	v1_find_mounts();
	if (v1_mounts.init_ret)
		return rg_fail(err, ENODEV, "libcgroup: cgroup_init: %s",
			       cgroup_strerror(v1_mounts.init_ret));
	*buf = '\0';
	for (i = 0; i < V1_NR_CTRL; i++) {
		/* "unified -": none (a table without the line is older) */
		if (v1_mounts.ret[i] && i != V1_UNIFIED)
			continue;
		n = snprintf(buf + used, len - used, "%s %s\n", v1_ctrl_name[i],
			     v1_mounts.ret[i] ? "-" : v1_mounts.mount[i]);
		if (n < 0 || (size_t)n >= len - used)
			return rg_fail(err, ENAMETOOLONG, "cgroup mount table");
		used += n;
	}
	return 0;
}

/* mount is still a v1 hierarchy of ctrl, and holds cgroup_path. */
static bool v1_mount_holds(enum v1_ctrl ctrl, const char *mount,
			   const char *cgroup_path)
{
	char path[PATH_MAX];
	struct statfs sfs;
	int n;

	if (statfs(mount, &sfs) < 0 ||
	    sfs.f_type != (ctrl == V1_UNIFIED ? CGROUP2_SUPER_MAGIC :
						CGROUP_SUPER_MAGIC))
		return false;
	/* made on first use, unlike the pool's v1 cgroups */
	if (ctrl == V1_UNIFIED)
		return true;
	n = snprintf(path, sizeof(path), "%s/%s/%s", mount, cgroup_path,
		     v1_ctrl_marker[ctrl]);
	return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0;
}

static int v1_ctrl_index(const char *name)
{
	for (int i = 0; i < V1_NR_CTRL; i++)
		if (!strcmp(name, v1_ctrl_name[i]))
			return i;
	return -1;
}

int rg_cgroup_v1_mount(const char *controller, const char **mount,
		       struct rg_error *err)
{
	int i = v1_ctrl_index(controller);

	*mount = NULL;
	if (i < 0)
		return rg_fail(err, EINVAL, "unknown controller %s",
			       controller);
	v1_find_mounts();
	if (v1_mounts.init_ret)
		return rg_fail(err, ENODEV, "libcgroup: cgroup_init: %s",
			       cgroup_strerror(v1_mounts.init_ret));
	if (v1_mounts.ret[i])
		return rg_fail(err, ENODEV, "libcgroup: %s",
			       cgroup_strerror(v1_mounts.ret[i]));
	*mount = v1_mounts.mount[i];
	return 0;
}

/* Parse "controller mount" lines into mount[]; false on anything odd. */
static bool v1_parse_table(const char *text, const char *cgroup_path,
			   char *mount[V1_NR_CTRL], bool *no_unified)
{
	char name[32], path[PATH_MAX];
	const char *line = text;
	int i, n;

	while (*line) {
		if (sscanf(line, "%31s %4095s%n", name, path, &n) != 2)
			return false;
		i = v1_ctrl_index(name);
		if (i == V1_UNIFIED && !strcmp(path, "-")) {
			*no_unified = true;
			line += n;
			while (*line == '\n')
				line++;
			continue;
		}
		if (i < 0 || mount[i] || !v1_mount_holds(i, path, cgroup_path))
			return false;
		mount[i] = strdup(path);
		if (!mount[i])
			return false;
		line += n;
		while (*line == '\n')
			line++;
	}
	return true;
}

/* For _cleanup_: the paths of mount[] not handed over to v1_mounts. */
static void v1_free_mounts(char *(*mount)[V1_NR_CTRL])
{
	for (int i = 0; i < V1_NR_CTRL; i++)
		free((*mount)[i]);
}

bool rg_cgroup_v1_use_mount_table(const char *text, const char *cgroup_path)
{
	_cleanup_(v1_free_mounts) char *mount[V1_NR_CTRL] = { NULL };
	_cleanup_(v1_unlock) pthread_mutex_t *lock = &v1_mounts_lock;
	bool no_unified = false;
	int i;

	pthread_mutex_lock(lock);
	if (v1_mounts.ready)
		return !v1_mounts.init_ret;
	if (!v1_parse_table(text, cgroup_path, mount, &no_unified) ||
	    !mount[V1_MEMORY] || !mount[V1_CPUACCT] || !mount[V1_FREEZER])
		return false;
	for (i = 0; i < V1_NR_CTRL; i++) {
		v1_mounts.mount[i] = mount[i];
		v1_mounts.ret[i] = mount[i] ? 0 : ECGROUPSUBSYSNOTMOUNTED;
		mount[i] = NULL;
	}
	/* a table from before the unified hierarchy was used: look */
	if (!v1_mounts.mount[V1_UNIFIED] && !no_unified)
		v1_find_unified();
	v1_mounts.ready = true;
	return true;
}

static int v1_check_mounts(bool want_cpuset, struct rg_error *err)
{
	int i;

	v1_find_mounts();
	if (v1_mounts.init_ret)
		return rg_fail(err, ENODEV, "libcgroup: cgroup_init: %s",
			       cgroup_strerror(v1_mounts.init_ret));
	for (i = 0; i < V1_NR_CTRL; i++) {
		if ((i == V1_CPUSET && !want_cpuset) || i == V1_CPU ||
		    i == V1_UNIFIED)
			continue;
		if (v1_mounts.ret[i])
			return rg_fail(err, ENODEV,
				       "cgroup v1 controller %s is not mounted (libcgroup: %s)",
				       v1_ctrl_name[i],
				       cgroup_strerror(v1_mounts.ret[i]));
	}
	return 0;
}

/* Copy up_fd/file into dir_fd/file when the latter is empty. */
static int cpuset_inherit(int up_fd, int dir_fd, const char *file,
			  struct rg_error *err)
{
	char mine[RG_CG_BUF], theirs[RG_CG_BUF];

	if (rg_cg_read_file(dir_fd, file, mine, sizeof(mine), err) < 0)
		return -1;
	if (*mine)
		return 0;
	if (rg_cg_read_file(up_fd, file, theirs, sizeof(theirs), err) < 0)
		return -1;
	return rg_cg_write_file(dir_fd, file, theirs, err);
}

/*
 * A new v1 cpuset starts with empty cpus and mems, and nothing can join it
 * until both are set: give it those of the level above.
 */
static int cpuset_fill(int up_fd, int dir_fd, void *data, struct rg_error *err)
{
	(void)data;
	if (cpuset_inherit(up_fd, dir_fd, "cpuset.mems", err) < 0 ||
	    cpuset_inherit(up_fd, dir_fd, "cpuset.cpus", err) < 0)
		return -1;
	return 0;
}

/* The hierarchy holding cpuset needs its cpus/mems filled at every level. */
static rg_cg_dir_hook v1_hook(const char *mount, bool want_cpuset)
{
	if (want_cpuset && !strcmp(mount, v1_mounts.mount[V1_CPUSET]))
		return cpuset_fill;
	return NULL;
}

static int v1_add_hier(struct rg_cgroup_v1 *cg, enum v1_ctrl ctrl,
		       const char *parent, bool want_cpuset, unsigned int how,
		       struct rg_error *err)
{
	const char *mount = v1_mounts.mount[ctrl];
	rg_cg_dir_hook hook = v1_hook(mount, want_cpuset);
	_cleanup_close_ int root_fd = -1;
	struct v1_hier *h;
	int i;

	/* Co-mounted with a controller already done: same directory. */
	for (i = 0; i < cg->nr_hier; i++) {
		if (!strcmp(cg->hier[i].mount, mount)) {
			cg->ctrl_hier[ctrl] = i;
			return 0;
		}
	}
	h = &cg->hier[cg->nr_hier];
	h->mount = mount;
	root_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return rg_fail(err, errno, "opening %s", mount);
	if (rg_cg_open_parent(root_fd, parent, hook, NULL, &h->parent_fd,
			      err) < 0)
		return -1;
	/* Counted from here on, so that release closes what is open. */
	cg->ctrl_hier[ctrl] = cg->nr_hier++;
	if (how & RG_CG_REUSE) {
		if (rg_cg_open_dir(h->parent_fd, cg->name, &h->made,
				   &h->dir_fd, err) < 0 ||
		    ((how & RG_CG_OWN_PARENT) &&
		     rg_cg_keep_private(h->parent_fd, parent, err) < 0) ||
		    (!h->made &&
		     rg_cg_keep_private(h->dir_fd, cg->name, err) < 0))
			return -1;
	} else {
		if (rg_cg_make_dir(h->parent_fd, cg->name, &h->dir_fd, err) < 0)
			return -1;
		h->made = true;
	}
	if (hook && hook(h->parent_fd, h->dir_fd, NULL, err) < 0)
		return -1;
	return rg_cg_open(h->dir_fd, "cgroup.procs", O_WRONLY, false,
			  &h->procs_fd, err);
}

static int v1_dir(const struct rg_cgroup_v1 *cg, enum v1_ctrl ctrl)
{
	int i = cg->ctrl_hier[ctrl];

	return i < 0 ? -1 : cg->hier[i].dir_fd;
}

struct v1_file_spec {
	enum v1_ctrl ctrl;
	const char *name;
	int flags;
	bool optional;
};

static const struct v1_file_spec v1_files[V1_NR_FILES] = {
	[F_LIMIT] = { V1_MEMORY, "memory.limit_in_bytes", O_RDWR, false },
	/* Missing without swap accounting: fall back to memory.* */
	[F_MEMSW_LIMIT] = { V1_MEMORY, "memory.memsw.limit_in_bytes", O_RDWR,
			    true },
	[F_MAX_USAGE] = { V1_MEMORY, "memory.max_usage_in_bytes", O_RDWR,
			  false },
	[F_MEMSW_MAX_USAGE] = { V1_MEMORY, "memory.memsw.max_usage_in_bytes",
				O_RDWR, true },
	[F_FAILCNT] = { V1_MEMORY, "memory.failcnt", O_RDWR, false },
	[F_MEMSW_FAILCNT] = { V1_MEMORY, "memory.memsw.failcnt", O_RDWR, true },
	[F_MEM_USAGE] = { V1_MEMORY, "memory.usage_in_bytes", O_RDONLY, false },
	/* missing where kernel memory is not accounted apart */
	[F_KMEM_USAGE] = { V1_MEMORY, "memory.kmem.usage_in_bytes", O_RDONLY,
			   true },
	[F_FORCE_EMPTY] = { V1_MEMORY, "memory.force_empty", O_WRONLY, false },
	[F_OOM] = { V1_MEMORY, "memory.oom_control", O_RDONLY, false },
	[F_MEMSTAT] = { V1_MEMORY, "memory.stat", O_RDONLY, false },
	[F_USAGE] = { V1_CPUACCT, "cpuacct.usage", O_RDWR, false },
	[F_STATE] = { V1_FREEZER, "freezer.state", O_RDWR, false },
	[F_CPUS] = { V1_CPUSET, "cpuset.cpus", O_RDWR, false },
	[F_MEMS] = { V1_CPUSET, "cpuset.mems", O_RDWR, false },
};

static int v1_open_files(struct rg_cgroup_v1 *cg, struct rg_error *err)
{
	const struct v1_file_spec *f;
	int i, dir;

	for (i = 0; i < V1_NR_FILES; i++) {
		f = &v1_files[i];
		dir = v1_dir(cg, f->ctrl);
		if (dir >= 0 && rg_cg_open(dir, f->name, f->flags, f->optional,
					   &cg->fd[i], err) < 0)
			return -1;
	}
	cg->memsw = cg->fd[F_MEMSW_LIMIT] >= 0 &&
		    cg->fd[F_MEMSW_MAX_USAGE] >= 0;
	cg->peak = cg->memsw ? F_MEMSW_MAX_USAGE : F_MAX_USAGE;
	if (!cg->memsw) {
		rg_close_fd(&cg->fd[F_MEMSW_LIMIT]);
		rg_close_fd(&cg->fd[F_MEMSW_MAX_USAGE]);
		rg_close_fd(&cg->fd[F_MEMSW_FAILCNT]);
	}
	dir = v1_dir(cg, V1_UNIFIED);
	if (dir >= 0)
		rg_psi_open(&cg->base.psi, dir, false);
	return 0;
}

static struct rg_cgroup_v1 *v1_alloc(const char *parent, const char *name,
				     struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = calloc(1, sizeof(*cg));
	int i;

	if (!cg) {
		rg_fail(err, errno, "allocating cgroup");
		return NULL;
	}
	cg->base.ops = &v1_ops;
	for (i = 0; i < V1_NR_FILES; i++)
		cg->fd[i] = -1;
	rg_psi_init(&cg->base.psi);
	cg->base.psi_method = "unified-psi";
	for (i = 0; i < V1_NR_CTRL; i++) {
		cg->ctrl_hier[i] = -1;
		cg->hier[i].parent_fd = -1;
		cg->hier[i].dir_fd = -1;
		cg->hier[i].procs_fd = -1;
	}
	if (rg_cg_label(&cg->base, parent, name, err) < 0) {
		free(cg);
		return NULL;
	}
	snprintf(cg->name, sizeof(cg->name), "%s", name);
	return cg;
}

static int v1_write(struct rg_cgroup_v1 *cg, enum v1_file f, const char *val,
		    struct rg_error *err)
{
	int ret = rg_cg_write(cg->fd[f], val);

	if (ret < 0)
		return rg_fail(err, -ret, "writing \"%s\" to %s", val,
			       v1_files[f].name);
	return 0;
}

/*
 * Setting up failed half-way: remove the directories this call made, leave
 * the others and whatever runs in them alone.
 */
static void v1_discard(struct rg_cgroup_v1 *cg)
{
	struct rg_error ignored;
	int i;

	for (i = 0; i < cg->nr_hier; i++)
		if (!cg->hier[i].made)
			rg_close_fd(&cg->hier[i].dir_fd);
	v1_remove(&cg->base, &ignored);
	v1_release(&cg->base);
}

/* For _cleanup_: a cgroup not handed over (NULL) is discarded. */
static void v1_discard_ptr(struct rg_cgroup_v1 **cg)
{
	if (*cg)
		v1_discard(*cg);
}

/*
 * A process that died between freezing and thawing (v1_kill_round) leaves
 * the freezer FROZEN, and the next run would never get to exec.
 */
static int v1_thaw_reused(struct rg_cgroup_v1 *cg, struct rg_error *err)
{
	if (cg->hier[cg->ctrl_hier[V1_FREEZER]].made)
		return 0;
	return v1_write(cg, F_STATE, "THAWED", err);
}

/*
 * The unified hierarchy could not be set up (a read-only mount, say):
 * undo what v1_add_hier() did there. Runs then report no cgroup waits.
 */
static void v1_drop_unified(struct rg_cgroup_v1 *cg)
{
	struct v1_hier *h;
	int i = cg->ctrl_hier[V1_UNIFIED];

	if (i < 0)
		return;
	h = &cg->hier[i];
	rg_close_fd(&h->procs_fd);
	rg_close_fd(&h->dir_fd);
	if (h->made)
		unlinkat(h->parent_fd, cg->name, AT_REMOVEDIR);
	rg_close_fd(&h->parent_fd);
	h->made = false;
	cg->ctrl_hier[V1_UNIFIED] = -1;
	cg->nr_hier--;
}

int rg_cgroup_v1_create(const char *parent, const char *name, bool want_cpuset,
			unsigned int how, struct rg_cgroup **out,
			struct rg_error *err)
{
	_cleanup_(v1_discard_ptr) struct rg_cgroup_v1 *cg = NULL;
	int i, nr = want_cpuset ? V1_NR_CTRL : V1_CPUSET;

	if (v1_check_mounts(want_cpuset, err) < 0)
		return -1;
	cg = v1_alloc(parent, name, err);
	if (!cg)
		return -1;
	for (i = 0; i < nr; i++) {
		if ((i == V1_CPU || i == V1_UNIFIED) && v1_mounts.ret[i])
			continue;
		if (v1_add_hier(cg, i, parent, want_cpuset, how, err) < 0) {
			/* only the waits depend on it: the run goes on */
			if (i == V1_UNIFIED) {
				v1_drop_unified(cg);
				continue;
			}
			return rg_fail_context(err, "cgroup v1 %s:%s",
					       v1_ctrl_name[i], cg->base.label);
		}
	}
	if (v1_open_files(cg, err) < 0 || v1_thaw_reused(cg, err) < 0)
		return rg_fail_context(err, "cgroup v1 %s", cg->base.label);
	cg->base.fresh = true;
	for (i = 0; i < cg->nr_hier; i++)
		cg->base.fresh &= cg->hier[i].made;
	*out = &cg->base;
	cg = NULL;
	return 0;
}

/*
 * memsw.limit must stay >= limit at every moment: when raising, raise memsw
 * first; when lowering, lower the plain limit first.
 */
static int v1_set_memory(struct rg_cgroup_v1 *cg, uint64_t bytes,
			 struct rg_error *err)
{
	enum v1_file first = F_LIMIT, second = F_MEMSW_LIMIT;
	uint64_t cur;
	char val[24];
	int ret;

	/* -1 is the kernel's "unlimited". */
	if (bytes == RG_UNLIMITED)
		snprintf(val, sizeof(val), "-1");
	else
		snprintf(val, sizeof(val), "%" PRIu64, bytes);
	if (!cg->memsw)
		return v1_write(cg, F_LIMIT, val, err);
	ret = rg_cg_read_u64(cg->fd[F_LIMIT], &cur);
	if (ret < 0)
		return rg_fail(err, -ret, "reading memory.limit_in_bytes");
	if (bytes >= cur) {
		first = F_MEMSW_LIMIT;
		second = F_LIMIT;
	}
	if (v1_write(cg, first, val, err) < 0 ||
	    v1_write(cg, second, val, err) < 0)
		return -1;
	return 0;
}

/* The effective mems of the level above (not a hard-coded node 0). */
static int v1_parent_mems(struct rg_cgroup_v1 *cg, char *buf, size_t size,
			  struct rg_error *err)
{
	int up = cg->hier[cg->ctrl_hier[V1_CPUSET]].parent_fd;
	struct rg_error ignored;

	if (rg_cg_read_file(up, "cpuset.effective_mems", buf, size,
			    &ignored) >= 0)
		return 0;
	return rg_cg_read_file(up, "cpuset.mems", buf, size, err) < 0 ? -1 : 0;
}

static int v1_set_cpuset(struct rg_cgroup_v1 *cg, const char *cpus,
			 struct rg_error *err)
{
	int up = cg->hier[cg->ctrl_hier[V1_CPUSET]].parent_fd;
	char mems[RG_CG_BUF], all[RG_CG_BUF];

	if (v1_parent_mems(cg, mems, sizeof(mems), err) < 0 ||
	    v1_write(cg, F_MEMS, mems, err) < 0)
		return -1;
	/* No pinning asked (a reused cgroup): back to the parent's CPUs. */
	if (!cpus) {
		if (rg_cg_read_file(up, "cpuset.cpus", all, sizeof(all), err) <
		    0)
			return -1;
		cpus = all;
	}
	return v1_write(cg, F_CPUS, cpus, err);
}

/* The operations take the base pointer: dispatch.c applies the limits. */
static int v1_op_set_memory(struct rg_cgroup *base, uint64_t bytes,
			    struct rg_error *err)
{
	return v1_set_memory(to_v1(base), bytes, err);
}

static int v1_op_set_cpuset(struct rg_cgroup *base, const char *cpus,
			    struct rg_error *err)
{
	return v1_set_cpuset(to_v1(base), cpus, err);
}

static bool v1_has_cpuset(const struct rg_cgroup *base)
{
	return to_v1(base)->fd[F_CPUS] >= 0;
}

/* In the child between clone and exec: write() only. */
static int v1_attach_self(const struct rg_cgroup *base)
{
	const struct rg_cgroup_v1 *cg = to_v1(base);
	int i, ret;

	for (i = 0; i < cg->nr_hier; i++) {
		ret = rg_cg_write(cg->hier[i].procs_fd, "0");
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int v1_clone_fd(const struct rg_cgroup *base)
{
	(void)base;
	return -1;
}

static int v1_read_oom(struct rg_cgroup_v1 *cg, uint64_t *count,
		       struct rg_error *err)
{
	int ret = rg_cg_read_key(cg->fd[F_OOM], "oom_kill", count);

	/* Kernels before 4.13 have no counter: report no OOM kill. */
	if (ret == -ENOENT) {
		*count = 0;
		return 0;
	}
	if (ret < 0)
		return rg_fail(err, -ret, "reading memory.oom_control");
	return 0;
}

static int v1_start(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = to_v1(base);
	int ret;

	/* Any write resets the watermark to the current usage. */
	if (v1_write(cg, cg->peak, "0", err) < 0 ||
	    v1_write(cg, F_FAILCNT, "0", err) < 0)
		return rg_fail_context(err, "cgroup v1 %s", base->label);
	base->reader_cpu_base = rg_cg_reader_cpu_ns();
	ret = rg_cg_read_u64(cg->fd[F_USAGE], &cg->cpu_base);
	if (ret < 0)
		return rg_fail(err, -ret, "reading cpuacct.usage of %s",
			       base->label);
	/* The run cgroup has no children: the local count is the run's. */
	if (base->faults_by_reaper ||
	    rg_cg_read_key(cg->fd[F_MEMSTAT], "pgmajfault", &cg->majflt_base))
		cg->majflt_base = UINT64_MAX;
	return v1_read_oom(cg, &cg->oom_base, err);
}

static int v1_read_stats(struct rg_cgroup *base, struct rg_cgroup_stats *st,
			 struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = to_v1(base);
	uint64_t usage, oom;
	int ret;

	ret = rg_cg_read_u64(cg->fd[cg->peak], &st->memory_peak);
	if (ret < 0)
		return rg_fail(err, -ret, "reading memory peak of %s",
			       base->label);
	st->memory_peak_valid = true;
	snprintf(st->memory_method, sizeof(st->memory_method), "%s",
		 cg->memsw ? "memsw.max_usage_in_bytes" : "max_usage_in_bytes");
	rg_cg_reader_cpu_delta(base, st);
	ret = rg_cg_read_u64(cg->fd[F_USAGE], &usage);
	if (ret < 0)
		return rg_fail(err, -ret, "reading cpuacct.usage of %s",
			       base->label);
	st->cpu_ns = usage >= cg->cpu_base ? (int64_t)(usage - cg->cpu_base) :
					     (int64_t)usage;
	if (v1_read_oom(cg, &oom, err) < 0)
		return -1;
	st->oom_killed = oom > cg->oom_base;
	st->major_faults = rg_cg_delta(cg->fd[F_MEMSTAT], "pgmajfault",
				       cg->majflt_base);
	return 0;
}

static bool v1_peak_resettable(const struct rg_cgroup *base)
{
	(void)base;
	return true;
}

static int v1_memory_usage(struct rg_cgroup *base, uint64_t *bytes,
			   struct rg_error *err)
{
	return rg_cg_memory_figure(base, to_v1(base)->fd[F_MEM_USAGE], false,
				   "memory.usage_in_bytes", bytes, err);
}

static int v1_user_memory(struct rg_cgroup *base, uint64_t *bytes,
			  struct rg_error *err)
{
	return rg_cg_memory_figure(base, to_v1(base)->fd[F_MEMSTAT], true,
				   "memory.stat", bytes, err);
}

/* Counters a new cgroup starts at 0 and that v1 lets us zero. */
static const enum v1_file v1_zeroed[] = {
	F_FAILCNT, F_MEMSW_FAILCNT, F_MAX_USAGE, F_MEMSW_MAX_USAGE, F_USAGE,
};

/*
 * memory.stat shows a small change up to 2 s late (the kernel folds
 * per-CPU deltas in past a threshold or every 2 s): a 100 KiB file left on
 * a tmpfs could go unseen by it. The page counters are exact, but usage
 * minus kmem also holds the per-CPU charge stock: kernel memory freed after
 * the run is kept there, charged (50-60 KiB after a trivial run). Hence:
 * before the reclaim, user pages beyond a slack for the stock make it
 * worth one; after it (force_empty drains the stock first, then its slab
 * shrinking frees kernel memory into the stock again), usage above the
 * kernel memory charged before the reclaim is pages it could not free.
 * Not with a resident task (a keeper): the reclaim may leave its mapped
 * pages (its code), which count like a tmpfs file there (the kernel lab's
 * 6.1 made a keeper's slot cgroup again during 500 trivial runs); there
 * memory.stat alone decides, as on v2.
 */
#define USER_SLACK_BEFORE_RECLAIM (64u << 10)
#define USER_SLACK_AFTER_RECLAIM (32u << 10)

static bool v1_kmem(struct rg_cgroup_v1 *cg, uint64_t *kmem)
{
	return cg->fd[F_KMEM_USAGE] >= 0 &&
	       rg_cg_read_u64(cg->fd[F_KMEM_USAGE], kmem) == 0;
}

static bool v1_worth_reclaiming(struct rg_cgroup_v1 *cg, uint64_t usage)
{
	uint64_t kmem;

	if (rg_cg_worth_reclaiming(cg->fd[F_MEMSTAT], usage,
				   cg->base.resident_bytes))
		return true;
	if (cg->base.resident_bytes || !v1_kmem(cg, &kmem))
		return false;
	return usage > kmem && usage - kmem > USER_SLACK_BEFORE_RECLAIM;
}

static bool v1_needs_reclaim(struct rg_cgroup *base)
{
	uint64_t usage;
	struct rg_error ignored;

	return v1_memory_usage(base, &usage, &ignored) == 0 &&
	       v1_worth_reclaiming(to_v1(base), usage);
}

/*
 * After force_empty: what no reclaim frees (tmpfs pages, for one)? The
 * stock of other CPUs is drained by their work queues: it can take a
 * moment to leave the count.
 */
#define STOCK_DRAIN_CHECKS 5
#define STOCK_DRAIN_PAUSE_NS 500000

static bool v1_above_kmem(struct rg_cgroup_v1 *cg, uint64_t kmem_before)
{
	const struct timespec pause = { .tv_nsec = STOCK_DRAIN_PAUSE_NS };
	uint64_t floor = kmem_before + USER_SLACK_AFTER_RECLAIM;
	struct rg_error ignored;
	uint64_t usage;

	for (int i = 0; i < STOCK_DRAIN_CHECKS; i++) {
		if (i)
			nanosleep(&pause, NULL);
		if (v1_memory_usage(&cg->base, &usage, &ignored) < 0 ||
		    usage <= floor)
			return false;
	}
	return true;
}

/*
 * kmem_before: UINT64_MAX if unknown. Pages above the kernel memory must
 * survive a second reclaim too before the slot is made again: a cgroup
 * made again for nothing is the churn the pool exists to avoid (CI saw
 * that once in 500 trivial runs with a single check).
 */
static bool v1_pages_left(struct rg_cgroup_v1 *cg, uint64_t kmem_before)
{
	struct rg_error ignored;

	if (rg_cg_holds_unreclaimable(cg->fd[F_MEMSTAT]))
		return true;
	if (kmem_before == UINT64_MAX || cg->base.resident_bytes ||
	    !v1_above_kmem(cg, kmem_before))
		return false;
	if (!v1_kmem(cg, &kmem_before) ||
	    v1_write(cg, F_FORCE_EMPTY, "0", &ignored) < 0)
		return false;
	return v1_above_kmem(cg, kmem_before);
}

static int v1_reset(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = to_v1(base);
	uint64_t usage, kmem_before;
	size_t i;

	if (v1_memory_usage(base, &usage, err) < 0)
		return -1;
	/*
	 * Page cache and slab the last run left: reclaim them, so that they
	 * neither count in the next run's peak nor crowd its limit. The
	 * kernel gives up quietly on what it cannot reclaim.
	 */
	base->unreclaimable = false;
	if (v1_worth_reclaiming(cg, usage)) {
		if (!v1_kmem(cg, &kmem_before))
			kmem_before = UINT64_MAX;
		if (v1_write(cg, F_FORCE_EMPTY, "0", err) < 0)
			return rg_fail_context(err, "cgroup v1 %s",
					       base->label);
		base->unreclaimable = v1_pages_left(cg, kmem_before);
	}
	/* After the reclaim: the watermarks drop to what is left. */
	for (i = 0; i < sizeof(v1_zeroed) / sizeof(v1_zeroed[0]); i++)
		if (cg->fd[v1_zeroed[i]] >= 0 &&
		    v1_write(cg, v1_zeroed[i], "0", err) < 0)
			return rg_fail_context(err, "cgroup v1 %s",
					       base->label);
	return 0;
}

static int v1_keep_private(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = to_v1(base);

	for (int i = 0; i < cg->nr_hier; i++)
		if (cg->hier[i].dir_fd >= 0 &&
		    (rg_cg_keep_private(cg->hier[i].parent_fd,
					"the pool's level", err) < 0 ||
		     rg_cg_keep_private(cg->hier[i].dir_fd, cg->name, err) < 0))
			return -1;
	return 0;
}

/* Any task left in any of our hierarchies. */
static int v1_populated(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = to_v1(base);
	int i, n;

	for (i = 0; i < cg->nr_hier; i++) {
		if (cg->hier[i].dir_fd < 0)
			continue;
		n = rg_cg_procs_signal(cg->hier[i].dir_fd, 0, err);
		if (n != 0)
			return n < 0 ? -1 : 1;
	}
	return 0;
}

static bool v1_frozen(struct rg_cgroup_v1 *cg)
{
	char state[32];

	return rg_cg_pread(cg->fd[F_STATE], state, sizeof(state)) > 0 &&
	       !strncmp(state, "FROZEN", 6);
}

/*
 * Frozen tasks cannot fork, so one pass of SIGKILL gets them all. A task
 * stuck in D state can keep the cgroup FREEZING; go on after a while.
 */
static int v1_freeze(struct rg_cgroup_v1 *cg, struct rg_error *err)
{
	struct rg_cg_backoff b;

	if (v1_write(cg, F_STATE, "FROZEN", err) < 0)
		return -1;
	rg_cg_backoff_init(&b, 50, 10000, 100);
	while (!v1_frozen(cg) && rg_cg_backoff_sleep(&b))
		;
	return 0;
}

static int v1_kill_round(struct rg_cgroup_v1 *cg, struct rg_error *err)
{
	int i, ret = 0;

	if (v1_freeze(cg, err) < 0)
		return -1;
	for (i = 0; i < cg->nr_hier && ret == 0; i++)
		if (cg->hier[i].dir_fd >= 0 &&
		    rg_cg_procs_signal(cg->hier[i].dir_fd, SIGKILL, err) < 0)
			ret = -1;
	/* Killed tasks only die once thawed; never leave them frozen. */
	if (v1_write(cg, F_STATE, "THAWED", ret ? NULL : err) < 0)
		ret = -1;
	return ret;
}

static int v1_kill_all(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = to_v1(base);
	struct rg_cg_backoff b;
	int ret;

	/* Created only partly: nothing can have joined it. */
	if (cg->fd[F_STATE] < 0)
		return 0;
	rg_cg_backoff_init(&b, 100, 20000, RG_CG_KILL_TIMEOUT_MS);
	for (;;) {
		ret = v1_populated(base, err);
		if (ret <= 0)
			break;
		if (v1_kill_round(cg, err) < 0)
			break;
		if (!rg_cg_backoff_sleep(&b)) {
			ret = rg_fail(err, EBUSY,
				      "tasks survive SIGKILL after %d ms",
				      RG_CG_KILL_TIMEOUT_MS);
			break;
		}
	}
	if (ret < 0)
		return rg_fail_context(err, "killing cgroup v1 %s",
				       base->label);
	return 0;
}

static int v1_remove(struct rg_cgroup *base, struct rg_error *err)
{
	struct rg_cgroup_v1 *cg = to_v1(base);
	int i, ret = 0;

	for (i = 0; i < cg->nr_hier; i++) {
		struct v1_hier *h = &cg->hier[i];

		if (h->dir_fd < 0)
			continue;
		rg_close_fd(&h->procs_fd);
		rg_close_fd(&h->dir_fd);
		if (rg_cg_rmdir(h->parent_fd, cg->name, err) < 0)
			ret = rg_fail_context(err, "cgroup v1 %s:%s", h->mount,
					      base->label);
	}
	return ret;
}

static void v1_release(struct rg_cgroup *base)
{
	struct rg_cgroup_v1 *cg = to_v1(base);
	int i;

	for (i = 0; i < V1_NR_FILES; i++)
		rg_close_fd(&cg->fd[i]);
	rg_psi_close(&cg->base.psi);
	for (i = 0; i < V1_NR_CTRL; i++) {
		rg_close_fd(&cg->hier[i].procs_fd);
		rg_close_fd(&cg->hier[i].dir_fd);
		rg_close_fd(&cg->hier[i].parent_fd);
	}
	free(cg);
}

static const struct rg_cgroup_ops v1_ops = {
	.name = "v1",
	.set_memory = v1_op_set_memory,
	.set_cpuset = v1_op_set_cpuset,
	.has_cpuset = v1_has_cpuset,
	.attach_self = v1_attach_self,
	.clone_fd = v1_clone_fd,
	.start = v1_start,
	.kill_all = v1_kill_all,
	.populated = v1_populated,
	.keep_private = v1_keep_private,
	.read_stats = v1_read_stats,
	.peak_resettable = v1_peak_resettable,
	.reset = v1_reset,
	.needs_reclaim = v1_needs_reclaim,
	.memory_usage = v1_memory_usage,
	.user_memory = v1_user_memory,
	.remove = v1_remove,
	.release = v1_release,
};
