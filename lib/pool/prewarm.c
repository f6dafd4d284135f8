/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page cache ownership: a page is charged to the memory cgroup of the task
 * that first brings it in, and reclaim in a tight slot evicts only pages
 * charged to that slot. Files every run shares (the chroot's binaries and
 * libraries, the submission, the test input) are therefore read in here,
 * by runguard itself, outside every slot, before the run.
 */
#include "pool/prewarm.h"

#include <elf.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "pool/elf_deps.h"
#include "pool/mount_source.h"
#include "pool/run_user_files.h"
#include "pool/pool.h"

/* a chroot's usual code directories */
static const char *const root_dirs[] = {
	"bin",		 "sbin",	  "lib",       "lib32",
	"lib64",	 "libx32",	  "usr/bin",   "usr/sbin",
	"usr/lib",	 "usr/lib32",	  "usr/lib64", "usr/libexec",
	"usr/local/bin", "usr/local/lib",
};

/*
 * Where those live, seen from the root: which ones they are names the
 * root's code (root_identity). DOMjudge bind-mounts its chroot's usr,
 * lib and bin into every judging (merged-usr symlinks are made again as
 * symlinks, which stat() follows).
 */
static const char *const root_tops[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr",
};

/* the walk again after this long: the cache may have been evicted */
#define ROOT_PREWARM_INTERVAL_S 600
/* a stamp not renewed for this long belongs to a root no longer used */
#define STAMP_KEEP_S (6 * ROOT_PREWARM_INTERVAL_S)

/*
 * How a file is brought in. The walker and --pool-prewarm read it now:
 * posix_fadvise(WILLNEED) reads at most max(read_ahead_kb, max_sectors_kb)
 * of a file per call (1.25 MiB on a stock disk; a 20 MiB libjvm.so would
 * stay mostly out), and its readahead may be dropped under congestion.
 * A run's own files only start reading, in chunks below that cap, so that
 * the caller does not wait for the disk: the pages are charged when they
 * are allocated, before the I/O completes.
 */
enum warm_mode {
	WARM_READ_NOW,
	WARM_START,
};

struct warm_walk {
	enum warm_mode mode;
	int null_fd; /* sendfile's sink in WARM_READ_NOW; -1: use WARM_START */
	struct rg_prewarm_stats stats;
};

/* the smallest per-call readahead cap of a sane block device (128 KiB) */
#define WILLNEED_CHUNK (128 * 1024)

/* nftw has no user pointer; per thread, for threaded library callers */
static _Thread_local struct warm_walk *current_walk;

/* cachestat(2), Linux 6.5; not in older headers */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct page_cache_stat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted,
		nr_recently_evicted;
};

/* All of the file in the page cache (one call), as a run's usually is. */
static bool all_cached(int fd, off_t size)
{
	struct {
		uint64_t off, len;
	} range = { 0, 0 }; /* len 0: to the end */
	struct page_cache_stat cs;
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 && syscall(__NR_cachestat, fd, &range, &cs, 0) == 0 &&
	       cs.nr_cache >=
		       ((uint64_t)size + (uint64_t)page - 1) / (uint64_t)page;
}

/*
 * One call per chunk; a file larger than one, already read in (the same
 * submission's every test case), costs one call only where the kernel
 * tells (cachestat: 6.5).
 */
static void start_reading(int fd, off_t size)
{
	if (size > WILLNEED_CHUNK && all_cached(fd, size))
		return;
	for (off_t off = 0; off < size; off += WILLNEED_CHUNK)
		if (posix_fadvise(fd, off, WILLNEED_CHUNK,
				  POSIX_FADV_WILLNEED) != 0)
			return;
}

/*
 * Page cache pages go to /dev/null by reference: nothing is copied. The
 * file was opened O_NONBLOCK (in case it is no longer a regular file);
 * on a regular file that would make the read fail with EAGAIN wherever
 * it has to wait for the disk.
 */
/*
 * What sendfile left, read through a buffer: the caller waits for it. On
 * the heap: rg_pool_prewarm() runs in a library caller's thread, whose
 * stack may be small.
 */
#define READ_REST_CHUNK (64 * 1024)

static bool read_rest(int fd, off_t off, off_t size)
{
	char *buf = malloc(READ_REST_CHUNK);
	bool ok = buf != NULL;

	while (ok && off < size) {
		ssize_t n = pread(fd, buf, READ_REST_CHUNK, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ok = n == 0; /* shrunk meanwhile: what is left is in */
			break;
		}
		off += n;
	}
	free(buf);
	return ok;
}

static bool read_now(int fd, off_t size, int null_fd)
{
	int flags = fcntl(fd, F_GETFL);
	off_t off = 0;

	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
		return false;

	while (off < size) {
		ssize_t n = sendfile(null_fd, fd, &off, (size_t)(size - off));

		if (n < 0 && errno == EINTR)
			continue;
		/*
		 * 0 before the end need not mean the file shrank: the rest is
		 * read through a buffer, which stops at the real end (CI saw
		 * the last 256 KiB of a 64 MiB file not in after a walk).
		 */
		if (n <= 0)
			return read_rest(fd, off, size);
	}
	return true;
}

static void warm_fd(int fd, off_t size, struct warm_walk *walk)
{
	if (size <= 0)
		return;
	if (walk->mode == WARM_START || walk->null_fd < 0 ||
	    !read_now(fd, size, walk->null_fd))
		start_reading(fd, size);
	walk->stats.files++;
	walk->stats.bytes += (uint64_t)size;
}

static int warm_path(const char *path, const struct stat *st,
		     struct warm_walk *walk)
{
	int fd;

	if (!S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	warm_fd(fd, st->st_size, walk);
	close(fd);
	return 0;
}

static void walk_begin(struct warm_walk *walk, enum warm_mode mode)
{
	*walk = (struct warm_walk){ .mode = mode, .null_fd = -1 };
	if (mode == WARM_READ_NOW)
		walk->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
}

static void walk_end(struct warm_walk *walk)
{
	if (walk->null_fd >= 0)
		close(walk->null_fd);
	walk->null_fd = -1;
}

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F)
		warm_path(path, st, current_walk); /* unreadable: skip it */
	return 0;
}

static int prewarm_tree(const char *path, struct warm_walk *walk,
			bool missing_ok, struct rg_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (missing_ok && errno == ENOENT)
			return 0;
		return rg_fail(err, errno, "cannot prewarm `%s'", path);
	}
	if (!S_ISDIR(st.st_mode)) {
		if (warm_path(path, &st, walk) < 0)
			return rg_fail(err, errno, "cannot prewarm `%s'", path);
		return 0;
	}
	current_walk = walk;
	if (nftw(path, walk_one, 16, FTW_PHYS | FTW_MOUNT) < 0)
		return rg_fail(err, errno, "cannot prewarm `%s'", path);
	return 0;
}

int rg_pool_prewarm(const char *const paths[], size_t count,
		    struct rg_prewarm_stats *stats, struct rg_error *err)
{
	struct warm_walk walk;
	int rc = 0;

	if (stats &&
	    rg_abi_check(stats, RG_SIZE_THROUGH(struct rg_prewarm_stats, bytes),
			 "rg_prewarm_stats", err) < 0)
		return -1;
	walk_begin(&walk, WARM_READ_NOW);
	for (size_t i = 0; i < count && rc == 0; i++) {
		struct rg_prewarm_stats before = walk.stats;

		rg_log_to(rg_admin_log(), RG_LOG_NOTICE, "prewarming `%s'",
			  paths[i]);
		rc = prewarm_tree(paths[i], &walk, false, err);
		if (rc == 0)
			rg_log_to(rg_admin_log(), RG_LOG_NOTICE,
				  "`%s': %" PRIu64 " files, %" PRIu64
				  " bytes in the page cache",
				  paths[i], walk.stats.files - before.files,
				  walk.stats.bytes - before.bytes);
	}
	walk_end(&walk);
	if (rc == 0 && stats)
		rg_abi_copy_out(stats, &walk.stats, sizeof(walk.stats));
	return rc;
}

/*
 * Which files a root's code directories hold does not depend on the -r
 * string: DOMjudge passes "$PWD/../.." from a new directory for every
 * test case, with the same chroot bind-mounted in. Bind mounts keep the
 * device and inode numbers, so those of the directories the code
 * directories are in (root_tops: 7 calls in every call, not one per
 * code directory) name the stamp.
 */
static bool root_identity(const char *root, char *key, size_t len)
{
	char path[PATH_MAX];
	size_t used = 0;
	struct stat st;

	key[0] = '\0';
	for (size_t i = 0; i < sizeof(root_tops) / sizeof(*root_tops); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", root,
				     root_tops[i]) >= sizeof(path) ||
		    stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		used += (size_t)snprintf(key + used, len - used,
					 "%zu:%llx:%llx,", i,
					 (unsigned long long)st.st_dev,
					 (unsigned long long)st.st_ino);
		if (used >= len)
			return false;
	}
	return used > 0;
}

/* Stamps of roots nobody ran in lately: the directory stays small. */
static void remove_old_stamps(int pool_dir_fd)
{
	int fd = openat(pool_dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	time_t now = time(NULL);
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "prewarm-", 8) ||
		    fstatat(pool_dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    now - st.st_mtime < STAMP_KEEP_S)
			continue;
		unlinkat(pool_dir_fd, e->d_name, 0);
	}
	closedir(d);
}

/*
 * Where the root's code directories are reachable from outside the
 * judging: DOMjudge bind-mounts its chroot's directories into every
 * judging directory and unmounts them with plain umount right after the
 * judging's last call, so the walker, which outlives the call, must not
 * hold a path below -r (nor below the working directory or the chroot
 * prefix). It walks the bind mounts' sources instead; a directory with no
 * source outside those paths is not walked (mount_source.h).
 */
struct root_sources {
	char path[sizeof(root_dirs) / sizeof(*root_dirs)][PATH_MAX];
	size_t count;
};

/* The resolved paths nothing outliving the call may hold, in ex[3]. */
static bool judging_paths(const struct rg_config *cfg, char ex[3][PATH_MAX])
{
	char cwd[PATH_MAX];

	if (!realpath(cfg->root, ex[0]))
		return false;
	ex[1][0] = ex[2][0] = '\0';
	if (getcwd(cwd, sizeof(cwd)) && !realpath(cwd, ex[1]))
		ex[1][0] = '\0';
	if (cfg->root_prefix) {
		/* a root outside the prefix is refused: nothing is walked */
		if (!realpath(cfg->root_prefix, ex[2]) ||
		    !rg_path_below(ex[0], ex[2]))
			return false;
	}
	return true;
}

static void add_source(struct root_sources *rs, const char *path)
{
	for (size_t i = 0; i < rs->count; i++)
		if (rg_path_below(path, rs->path[i]))
			return; /* walked already (lib -> usr/lib, say) */
	snprintf(rs->path[rs->count++], PATH_MAX, "%s", path);
}

static void find_sources(const struct rg_config *cfg,
			 const char ex[3][PATH_MAX],
			 const struct rg_mount_table *t,
			 struct root_sources *rs)
{
	const char *exclude[3] = { ex[0], ex[1][0] ? ex[1] : NULL,
				   ex[2][0] ? ex[2] : NULL };
	char path[PATH_MAX], real[PATH_MAX], source[PATH_MAX];

	for (size_t i = 0; i < sizeof(root_dirs) / sizeof(*root_dirs); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", ex[0],
				     root_dirs[i]) >= sizeof(path) ||
		    !realpath(path, real) || !rg_path_below(real, ex[0]))
			continue; /* missing, or a link out of the root */
		if (rg_mount_source(t, real, exclude, 3, source, sizeof(source)))
			add_source(rs, source);
		else
			rg_log(cfg, RG_LOG_NOTICE,
			       "prewarm: `%s' not walked: "
			       "no mount source outside the judging",
			       real);
	}
}

/* NULL when nothing is to be walked. */
static struct root_sources *root_sources(const struct rg_config *cfg)
{
	struct root_sources *rs = calloc(1, sizeof(*rs));
	char(*ex)[PATH_MAX] = calloc(3, PATH_MAX);
	struct rg_mount_table t = { 0 };
	FILE *f = NULL;

	if (rs && ex && judging_paths(cfg, ex) &&
	    (f = fopen("/proc/self/mountinfo", "re")) &&
	    rg_mount_table_read(f, &t) == 0)
		find_sources(cfg, (const char(*)[PATH_MAX])ex, &t, rs);
	if (f)
		fclose(f);
	rg_mount_table_free(&t);
	free(ex);
	if (rs && rs->count == 0) {
		free(rs);
		rs = NULL;
	}
	return rs;
}

static void walk_sources(const struct root_sources *rs)
{
	struct rg_error ignored;
	struct warm_walk walk;

	walk_begin(&walk, WARM_READ_NOW);
	for (size_t i = 0; i < rs->count; i++)
		prewarm_tree(rs->path[i], &walk, true, &ignored);
	walk_end(&walk);
}

struct walker_args {
	const struct root_sources *sources;
	const char *pool_dir;
	int stamp_fd; /* locked */
};

/*
 * The detached walker: lowest CPU and I/O priority, and of the caller's
 * fds only the stamp (a pipe of the caller's held open would delay its
 * reader's EOF); its working directory is / (rg_detach).
 */
static int walker_main(void *arg)
{
	const struct walker_args *w = arg;
	int dir_fd;

	if (dup2(w->stamp_fd, 3) < 0)
		return 1;
	syscall(SYS_close_range, 4, ~0U, 0);
	setsid();
	setpriority(PRIO_PROCESS, 0, 19);
	syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT);
	walk_sources(w->sources);
	futimens(3, NULL);
	dir_fd = open(w->pool_dir,
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd >= 0)
		remove_old_stamps(dir_fd);
	return 0;
}

struct walk_job {
	struct root_sources *sources;
	int stamp_fd; /* locked */
};

static void *walker_thread(void *arg)
{
	struct walk_job *job = arg;

	walk_sources(job->sources);
	futimens(job->stamp_fd, NULL);
	close(job->stamp_fd); /* unlocks */
	free(job->sources);
	free(job);
	return NULL;
}

/*
 * A caller that is a subreaper already (a library caller that reaps all
 * children) would wait for a walker process: walk in a thread instead.
 * Takes over stamp_fd and sources.
 */
static void start_walker_thread(struct root_sources *sources, int stamp_fd)
{
	struct walk_job *job = calloc(1, sizeof(*job));
	pthread_attr_t attr;
	pthread_t thread;
	bool started = false;

	if (job && !pthread_attr_init(&attr)) {
		job->sources = sources;
		job->stamp_fd = stamp_fd;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rg_fd_table_reserve(stamp_fd); /* the thread shares the table */
		started = !pthread_create(&thread, &attr, walker_thread, job);
		pthread_attr_destroy(&attr);
	}
	if (!started) {
		close(stamp_fd);
		free(sources);
		free(job);
	}
}

/* The stamp of root, locked, if its walk is due and nobody is at it. */
static int take_due_stamp(const char *root, int pool_dir_fd)
{
	char key[512], stamp[32];
	struct stat st;
	int fd = -1;

	if (!root_identity(root, key, sizeof(key)))
		return -1;
	snprintf(stamp, sizeof(stamp), "prewarm-%08x", rg_pool_hash(key));
	if (fstatat(pool_dir_fd, stamp, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    time(NULL) - st.st_mtime >= ROOT_PREWARM_INTERVAL_S)
		fd = openat(pool_dir_fd, stamp,
			    O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd); /* a walk is under way */
		fd = -1;
	}
	return fd;
}

/*
 * The root's code directories in the background, through their mount
 * sources (found here, in the call). A detached process is adopted by
 * init, unless we are a subreaper already (a library caller that reaps
 * all children would wait for it): then a thread. A root with nothing to
 * walk from outside is stamped all the same: the search is not repeated
 * on every call.
 */
static void prewarm_root_async(const struct rg_config *cfg, int pool_dir_fd)
{
	struct walker_args w = {
		.pool_dir = cfg->pool_dir ? cfg->pool_dir : RG_POOL_DIR_DEFAULT,
	};
	struct root_sources *sources;
	int reaper = 0;

	w.stamp_fd = take_due_stamp(cfg->root, pool_dir_fd);
	if (w.stamp_fd < 0)
		return;
	sources = root_sources(cfg);
	if (!sources) {
		futimens(w.stamp_fd, NULL);
		close(w.stamp_fd);
		return;
	}
	prctl(PR_GET_CHILD_SUBREAPER, &reaper, 0, 0, 0);
	if (reaper) {
		start_walker_thread(sources, w.stamp_fd);
		return;
	}
	w.sources = sources;
	rg_detach(walker_main, &w, &w.stamp_fd, 1);
	close(w.stamp_fd); /* the walker's copy keeps it locked */
	free(sources);
}

/* -- a program's shared libraries (runs without a root) ---------------- */

/*
 * The walk's bounds: files warmed, the size of one, and candidates opened
 * along the search path (a hostile RUNPATH may list many directories for
 * each of its 32 DT_NEEDED names). Memory: one struct library_walk
 * (about 160 KiB, on the heap).
 */
#define MAX_LIBRARY_FILES 32
#define MAX_LIBRARY_BYTES ((off_t)256 << 20)
#define MAX_LIBRARY_PROBES 256

/*
 * Breadth first over the files, not recursion: a hostile program can
 * chain 32 libraries, and each level would hold an rg_elf_deps (16 KiB)
 * on a judge thread's stack.
 */
struct library_walk {
	struct warm_walk *walk;
	char queue[MAX_LIBRARY_FILES][PATH_MAX]; /* every file seen, in order */
	unsigned int queued;
	unsigned int probes;	      /* candidate files opened */
	struct rg_elf_deps deps;      /* of the file being walked */
	struct rg_elf_deps candidate; /* of a file found for one of its names */
};

static bool library_seen(const struct library_walk *lw, const char *path)
{
	for (unsigned int i = 0; i < lw->queued; i++)
		if (strcmp(lw->queue[i], path) == 0)
			return true;
	return false;
}

static void enqueue(struct library_walk *lw, const char *path)
{
	if (lw->queued < MAX_LIBRARY_FILES && !library_seen(lw, path))
		snprintf(lw->queue[lw->queued++], PATH_MAX, "%s", path);
}

/* The loader's default directories for the program's machine. */
static const char *const *default_dirs(uint16_t machine)
{
	static const char *const x86_64[] = {
		"/lib/x86_64-linux-gnu",
		"/usr/lib/x86_64-linux-gnu",
		"/lib64",
		"/usr/lib64",
		"/lib",
		"/usr/lib",
		"/usr/local/lib",
		NULL,
	};
	static const char *const i386[] = {
		"/lib/i386-linux-gnu",
		"/usr/lib/i386-linux-gnu",
		"/lib32",
		"/usr/lib32",
		"/lib",
		"/usr/lib",
		"/usr/local/lib",
		NULL,
	};
	static const char *const aarch64[] = {
		"/lib/aarch64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu",
		"/lib64",
		"/usr/lib64",
		"/lib",
		"/usr/lib",
		"/usr/local/lib",
		NULL,
	};
	static const char *const other[] = {
		"/lib64",   "/usr/lib64",     "/lib",
		"/usr/lib", "/usr/local/lib", NULL,
	};

	switch (machine) {
	case EM_X86_64:
		return x86_64;
	case EM_386:
		return i386;
	case EM_AARCH64:
		return aarch64;
	default:
		return other;
	}
}

/* An ELF file of the walked file's machine and class at path? */
static bool is_library_for(struct library_walk *lw, const char *path)
{
	int fd;
	bool ok;

	if (lw->probes >= MAX_LIBRARY_PROBES)
		return false;
	lw->probes++;
	fd = rg_open_regular(path);
	if (fd < 0)
		return false;
	ok = rg_elf_deps_read(fd, &lw->candidate) == 0 &&
	     lw->candidate.machine == lw->deps.machine &&
	     lw->candidate.is64 == lw->deps.is64;
	close(fd);
	return ok;
}

/* name in one directory of the search path ($ORIGIN: the object's). */
static bool find_in(struct library_walk *lw, const char *dir,
		    const char *origin, const char *name)
{
	char path[PATH_MAX];
	int n;

	if (strncmp(dir, "$ORIGIN", 7) == 0)
		n = snprintf(path, sizeof(path), "%s%s/%s", origin, dir + 7,
			     name);
	else
		n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path) || *path != '/')
		return false;
	if (!library_seen(lw, path) && !is_library_for(lw, path))
		return false;
	enqueue(lw, path);
	return true;
}

/* Where the loader would find name, needed by object (lw->deps). */
static void find_library(struct library_walk *lw, const char *name,
			 const char *object)
{
	char search[PATH_MAX], origin[PATH_MAX], *dir, *save = NULL;
	const char *const *dirs;
	char *slash;

	snprintf(origin, sizeof(origin), "%s", object);
	slash = strrchr(origin, '/');
	if (!slash || strchr(name, '/'))
		return; /* a name with a slash is loaded as given: rare */
	*slash = '\0';
	snprintf(search, sizeof(search), "%s", lw->deps.search);
	for (dir = strtok_r(search, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save))
		if (find_in(lw, dir, origin, name))
			return;
	for (dirs = default_dirs(lw->deps.machine); *dirs; dirs++)
		if (find_in(lw, *dirs, origin, name))
			return;
}

/* File i of the queue: warmed (not the program: it was), its needs queued. */
static void walk_file(struct library_walk *lw, unsigned int i)
{
	const char *path = lw->queue[i];
	int fd = rg_open_regular(path);
	struct stat st;

	if (fd < 0)
		return;
	if (i > 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size <= MAX_LIBRARY_BYTES)
		warm_fd(fd, st.st_size, lw->walk);
	if (rg_elf_deps_read(fd, &lw->deps) == 0) {
		if (lw->deps.interp[0] == '/')
			enqueue(lw, lw->deps.interp);
		for (size_t k = 0; k < lw->deps.count; k++)
			find_library(lw, lw->deps.needed[k], path);
	}
	close(fd);
}

/*
 * A run without a root maps the host's libraries: nothing else brings
 * them in, and the first run in a slot to map one that is not in the
 * page cache pays for its pages under its limit, and the slot's reset
 * evicts them again (libstdc++ is 2 MiB: DOMjudge's runguard_test runs
 * a C++ program under -m 1500). As the loader finds them; the program
 * itself was warmed already. With a root, the walker covers its
 * library directories.
 */
static void prewarm_libraries(const char *program, struct warm_walk *walk)
{
	struct library_walk *lw = calloc(1, sizeof(*lw));

	if (!lw)
		return;
	lw->walk = walk;
	enqueue(lw, program);
	for (unsigned int i = 0; i < lw->queued; i++)
		walk_file(lw, i);
	free(lw);
}

/* The run's group, as the child will take it (run.c: resolve_gid). */
static gid_t run_gid(const struct rg_config *cfg)
{
	struct passwd pw, *found = NULL;
	char buf[4096];

	if (cfg->has_gid)
		return cfg->gid;
	getpwuid_r(cfg->uid, &pw, buf, sizeof(buf), &found);
	return found ? pw.pw_gid : (gid_t)65534;
}

/*
 * The command's file, its interpreter and libraries are named by the
 * submission (a compile may leave a symbolic link as the program; an ELF
 * names any path): opened as the run user could open them, and only if
 * regular files (run_user_files.h).
 */
static void warm_as_run_user(const struct rg_config *cfg, const char *path,
			     struct warm_walk *walk)
{
	struct rg_fs_creds saved;
	struct stat st;
	int fd;

	if (cfg->has_uid &&
	    rg_fs_creds_enter(cfg->uid, run_gid(cfg), &saved) < 0)
		return; /* we cannot act as the run user: nothing is opened */
	fd = rg_open_regular(path);
	if (fd >= 0 && fstat(fd, &st) == 0)
		warm_fd(fd, st.st_size, walk);
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && !cfg->root)
		prewarm_libraries(path, walk);
	if (cfg->has_uid)
		rg_fs_creds_leave(&saved);
}

/* The command's file as the child will find it, if it names a path. */
static void prewarm_command(const struct rg_config *cfg, struct warm_walk *walk)
{
	char path[PATH_MAX];
	int n;

	if (!strchr(cfg->file, '/'))
		return; /* a PATH search: the chroot's bin dirs cover it */
	if (!cfg->root)
		n = snprintf(path, sizeof(path), "%s", cfg->file);
	else if (cfg->file[0] == '/')
		n = snprintf(path, sizeof(path), "%s%s", cfg->root, cfg->file);
	else
		n = snprintf(path, sizeof(path), "%s/%s/%s", cfg->root,
			     cfg->workdir ? cfg->workdir : "", cfg->file);
	if (n > 0 && (size_t)n < sizeof(path))
		warm_as_run_user(cfg, path, walk);
}

/*
 * What this process warmed lately. A judge runs one command in one root
 * for test case after test case, milliseconds apart: the command's pages
 * are in the page cache still, and warming them again cost 26 calls (the
 * run user's credentials, the opens, one fadvise per chunk) and the
 * root's stamp 8 more. A page evicted meanwhile is read in by the run and
 * charged to its slot, as with no prewarm. Process-wide, so that a
 * library judge's threads share it; a runguard call is one run and starts
 * with it empty. A race between threads costs one warm-up, or skips one
 * whose pages another thread warmed just now.
 */
#define RECENT_WARM_NS (2 * 1000000000LL)
#define RECENT_WARM_SLOTS 8

static struct {
	uint64_t key;
	int64_t until;
} recent_warm[RECENT_WARM_SLOTS];

static int64_t coarse_now_ns(void)
{
	struct timespec ts;

	/* the vDSO's: no system call */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* FNV-1a over what names the command's and the root's files for a run */
static uint64_t warm_key(const struct rg_config *cfg)
{
	const char *parts[] = { cfg->root ? cfg->root : "", cfg->file,
				cfg->workdir ? cfg->workdir : "" };
	uint64_t ids[] = { cfg->has_uid ? cfg->uid : (uint64_t)-1,
			   cfg->has_gid ? cfg->gid : (uint64_t)-1 };
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < sizeof(parts) / sizeof(*parts); i++)
		for (const char *c = parts[i];; c++) {
			h = (h ^ (unsigned char)*c) * 1099511628211ull;
			if (!*c)
				break;
		}
	for (size_t i = 0; i < sizeof(ids) / sizeof(*ids); i++)
		h = (h ^ ids[i]) * 1099511628211ull;
	return h;
}

static bool warmed_lately(uint64_t key, int64_t now)
{
	for (size_t i = 0; i < RECENT_WARM_SLOTS; i++)
		if (__atomic_load_n(&recent_warm[i].key, __ATOMIC_RELAXED) ==
			    key &&
		    __atomic_load_n(&recent_warm[i].until, __ATOMIC_RELAXED) >
			    now)
			return true;
	return false;
}

/* in the entry that expires first */
static void note_warmed(uint64_t key, int64_t now)
{
	size_t oldest = 0;

	for (size_t i = 1; i < RECENT_WARM_SLOTS; i++)
		if (__atomic_load_n(&recent_warm[i].until, __ATOMIC_RELAXED) <
		    __atomic_load_n(&recent_warm[oldest].until,
				    __ATOMIC_RELAXED))
			oldest = i;
	__atomic_store_n(&recent_warm[oldest].until, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&recent_warm[oldest].key, key, __ATOMIC_RELAXED);
	__atomic_store_n(&recent_warm[oldest].until, now + RECENT_WARM_NS,
			 __ATOMIC_RELAXED);
}

void rg_prewarm_for_run(const struct rg_config *cfg, int pool_dir_fd)
{
	struct warm_walk walk;
	struct stat st;
	uint64_t key = warm_key(cfg);
	int64_t now = coarse_now_ns();

	walk_begin(&walk, WARM_START);
	if (!warmed_lately(key, now)) {
		if (cfg->root)
			prewarm_root_async(cfg, pool_dir_fd);
		prewarm_command(cfg, &walk);
		note_warmed(key, now);
	}
	/* the test input, given as a file or redirected from one */
	if (cfg->input.path) {
		if (stat(cfg->input.path, &st) == 0)
			warm_path(cfg->input.path, &st, &walk);
	} else if (fstat(cfg->input.fd, &st) == 0 && S_ISREG(st.st_mode)) {
		warm_fd(cfg->input.fd, st.st_size, &walk);
	}
}
