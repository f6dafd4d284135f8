/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup mode detection, dispatch to the v1/v2 backends, and the helpers
 * they share.
 */
#include "cgroup.h"

#include <ctype.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup_backend.h"
#include "error.h"
#include "rg-build-config.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static enum rg_cgroup_mode detected_mode;
static int detect_errno;

static void detect(void)
{
	struct statfs sfs;

	if (statfs(CGROUP_ROOT, &sfs) < 0) {
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
		return rg_fail(err, detect_errno, "statfs %s", CGROUP_ROOT);
	*mode = detected_mode;
	return 0;
}

static int get_cgroup(const char *parent, const char *name, bool want_cpuset,
		      bool reuse, struct rg_cgroup **out, struct rg_error *err)
{
	enum rg_cgroup_mode mode = RG_CGROUP_V1;
	unsigned int ctrl = RG_CG_MEMORY;

	*out = NULL;
	if (!parent || !*parent)
		parent = RG_CGROUP_PARENT;
	if (rg_cgroup_detect(&mode, err) < 0)
		return -1;
	if (mode == RG_CGROUP_V1)
		return rg_cgroup_v1_create(parent, name, want_cpuset, reuse,
					   out, err);
	if (want_cpuset)
		ctrl |= RG_CG_CPUSET;
	return rg_cgroup_v2_create(CGROUP_ROOT, parent, name, ctrl, reuse, out,
				   err);
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

int rg_cgroup_create(const char *parent, const char *name, bool want_cpuset,
		     struct rg_cgroup **out, struct rg_error *err)
{
	return get_cgroup(parent, name, want_cpuset, false, out, err);
}

int rg_cgroup_open(const char *parent, const char *name, bool want_cpuset,
		   struct rg_cgroup **out, struct rg_error *err)
{
	return get_cgroup(parent, name, want_cpuset, true, out, err);
}

int rg_cgroup_apply_limits(struct rg_cgroup *cg,
			   const struct rg_cgroup_limits *limits,
			   struct rg_error *err)
{
	bool memory = limits->set & RG_CG_SET_MEMORY;
	bool cpuset = limits->set & RG_CG_SET_CPUSET;
	bool has_cpuset = cg->ops->has_cpuset(cg);

	if (cpuset && limits->cpuset && !has_cpuset)
		return rg_fail(err, EINVAL, "cgroup %s was created without cpuset",
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
	return cg->ops->clone_fd(cg);
}

int rg_cgroup_start(struct rg_cgroup *cg, struct rg_error *err)
{
	return cg->ops->start(cg, err);
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

void rg_cgroup_expect_tasks(struct rg_cgroup *cg)
{
	cg->known_empty = false;
}

int rg_cgroup_populated(struct rg_cgroup *cg, struct rg_error *err)
{
	return cg->ops->populated(cg, err);
}

int rg_cgroup_read_stats(struct rg_cgroup *cg, struct rg_cgroup_stats *stats,
			 struct rg_error *err)
{
	memset(stats, 0, sizeof(*stats));
	stats->cpu_ns = -1;
	stats->major_faults = -1;
	return cg->ops->read_stats(cg, stats, err);
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

void rg_cgroup_close(struct rg_cgroup *cg)
{
	if (cg)
		cg->ops->release(cg);
}

int rg_cgroup_destroy(struct rg_cgroup *cg, struct rg_error *err)
{
	struct rg_error kill_err;
	int killed, removed;

	if (!cg)
		return 0;
	killed = cg->ops->kill_all(cg, &kill_err);
	removed = cg->ops->remove(cg, err);
	cg->ops->release(cg);
	/* A failed rmdir is usually explained by the failed kill. */
	if (killed < 0 && err)
		*err = kill_err;
	return killed < 0 || removed < 0 ? -1 : 0;
}

/* ---- helpers shared by the backends ---- */

void rg_cg_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void rg_cg_closep(int *fd)
{
	rg_cg_close(fd);
}

void rg_cg_freep(void *ptr)
{
	free(*(void **)ptr);
}

int rg_cg_check_name(const char *name, struct rg_error *err)
{
	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, "..") || strlen(name) > NAME_MAX)
		return rg_fail(err, EINVAL, "invalid cgroup name \"%s\"",
			       name ? name : "(null)");
	return 0;
}

int rg_cg_label(struct rg_cgroup *cg, const char *parent, const char *name,
		struct rg_error *err)
{
	int n;

	if (rg_cg_check_name(name, err) < 0)
		return -1;
	n = snprintf(cg->label, sizeof(cg->label), "%s/%s", parent, name);
	if (n < 0 || (size_t)n >= sizeof(cg->label))
		return rg_fail(err, ENAMETOOLONG, "cgroup path %s/%s", parent,
			       name);
	return 0;
}

int rg_cg_write(int fd, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;

	do {
		n = write(fd, s, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int rg_cg_write_file(int dir_fd, const char *file, const char *s,
		     struct rg_error *err)
{
	_cleanup_close_ int fd = -1;
	int ret;

	if (rg_cg_open(dir_fd, file, O_WRONLY, false, &fd, err) < 0)
		return -1;
	ret = rg_cg_write(fd, s);
	if (ret < 0)
		return rg_fail(err, -ret, "writing \"%s\" to %s", s, file);
	return 0;
}

int rg_cg_pread(int fd, char *buf, size_t size)
{
	ssize_t n;

	do {
		n = pread(fd, buf, size - 1, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* A full buffer may mean a truncated value: refuse to guess. */
	if ((size_t)n == size - 1)
		return -EOVERFLOW;
	buf[n] = '\0';
	return (int)n;
}

static int parse_u64(const char *s, uint64_t *value)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*value = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	if (*end && *end != '\n' && *end != ' ')
		return -EINVAL;
	return 0;
}

int rg_cg_read_u64(int fd, uint64_t *value)
{
	char buf[64];
	int ret;

	ret = rg_cg_pread(fd, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	return parse_u64(buf, value);
}

/* The value of key's "key value" line in buf: 0, -ENOENT or -EINVAL. */
static int find_key(const char *buf, const char *key, uint64_t *value)
{
	size_t klen = strlen(key);
	const char *line;

	for (line = buf; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return parse_u64(line + klen + 1, value);
	}
	return -ENOENT;
}

int rg_cg_read_key(int fd, const char *key, uint64_t *value)
{
	char buf[RG_CG_BUF];
	int ret = rg_cg_pread(fd, buf, sizeof(buf));

	return ret < 0 ? ret : find_key(buf, key, value);
}

int rg_cg_sum_keys(int fd, const char *const keys[], size_t nkeys,
		   uint64_t *sum)
{
	char buf[RG_CG_BUF];
	uint64_t value;
	int ret = rg_cg_pread(fd, buf, sizeof(buf));

	if (ret < 0)
		return ret;
	*sum = 0;
	for (size_t i = 0; i < nkeys; i++) {
		ret = find_key(buf, keys[i], &value);
		if (ret == -ENOENT)
			continue;
		if (ret < 0)
			return ret;
		*sum += value;
	}
	return 0;
}

/* Pages on the LRU lists: what a reclaim frees without fail. */
static const char *const lru_keys[] = {
	"inactive_anon", "active_anon", "inactive_file", "active_file",
	"unevictable",
};

/*
 * Above this much charged, reclaim also runs for kernel memory alone
 * (e.g. dentries of a stat() storm, which its slab shrinking frees). Below
 * it, what is left is charged to the next run: its memory-bytes can be up
 * to this much higher than in a new cgroup.
 */
#define RECLAIM_KERNEL_MIN (512 * 1024)

/*
 * After most runs only charges the kernel caches per CPU (batches of 64
 * pages) and kernel objects freed after an RCU grace period are left,
 * which a reclaim cannot free without waiting: force_empty would retry for
 * about half a millisecond in vain.
 */
bool rg_cg_worth_reclaiming(int memory_stat_fd, uint64_t usage)
{
	uint64_t lru;

	if (usage == 0)
		return false;
	if (usage > RECLAIM_KERNEL_MIN)
		return true;
	return rg_cg_sum_keys(memory_stat_fd, lru_keys,
			      sizeof(lru_keys) / sizeof(*lru_keys), &lru) < 0 ||
	       lru > 0;
}

/*
 * What a reclaim leaves: files on a tmpfs (and, with swap, what of them
 * went there; the processes that had anonymous memory are dead). Any of
 * it, however small, is charged to every later run.
 */
static const char *const unreclaimable_keys[] = { "shmem", "swap" };

bool rg_cg_holds_unreclaimable(int memory_stat_fd)
{
	uint64_t left;

	/* unreadable: the cgroup is made again, as when it is known */
	return rg_cg_sum_keys(memory_stat_fd, unreclaimable_keys,
			      sizeof(unreclaimable_keys) /
			      sizeof(*unreclaimable_keys), &left) < 0 ||
	       left > 0;
}

int64_t rg_cg_delta(int fd, const char *key, uint64_t base)
{
	uint64_t now;

	if (base == UINT64_MAX || rg_cg_read_key(fd, key, &now) < 0 ||
	    now < base)
		return -1;
	return (int64_t)(now - base);
}

int rg_cg_read_file(int dir_fd, const char *file, char *buf, size_t size,
		    struct rg_error *err)
{
	_cleanup_close_ int fd = -1;
	int n;

	if (rg_cg_open(dir_fd, file, O_RDONLY, false, &fd, err) < 0)
		return -1;
	n = rg_cg_pread(fd, buf, size);
	if (n < 0)
		return rg_fail(err, -n, "reading %s", file);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

int rg_cg_open(int dir_fd, const char *file, int flags, bool optional,
	       int *fd, struct rg_error *err)
{
	*fd = openat(dir_fd, file, flags | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
	if (optional && errno == ENOENT)
		return 0;
	return rg_fail(err, errno, "opening %s", file);
}

static int open_dir(int up_fd, const char *name)
{
	return openat(up_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Parents and pooled cgroups usually exist already: open before mkdir. */
int rg_cg_open_dir(int parent_fd, const char *name, bool *made, int *out,
		   struct rg_error *err)
{
	bool mine = false;

	*out = open_dir(parent_fd, name);
	if (*out < 0 && errno == ENOENT) {
		/* EEXIST: a racing creator was first, fine. */
		if (mkdirat(parent_fd, name, 0755) == 0)
			mine = true;
		else if (errno != EEXIST)
			return rg_fail(err, errno, "creating cgroup %s", name);
		*out = open_dir(parent_fd, name);
	}
	if (*out < 0) {
		rg_fail(err, errno, "opening cgroup %s", name);
		if (mine)
			unlinkat(parent_fd, name, AT_REMOVEDIR);
		return -1;
	}
	if (made)
		*made = mine;
	return 0;
}

/*
 * Every component valid before anything is created; at least one, so that
 * runs never land in a hierarchy's root.
 */
static int check_parent(const char *path, struct rg_error *err)
{
	char comp[NAME_MAX + 2];
	const char *p = path;
	int nr = 0;
	size_t len;

	while (*p) {
		len = strcspn(p, "/");
		if (len) {
			snprintf(comp, sizeof(comp), "%.*s", (int)len, p);
			if (len > NAME_MAX || rg_cg_check_name(comp, err) < 0)
				return rg_fail(err, EINVAL,
					       "invalid cgroup parent \"%s\"",
					       path);
			nr++;
		}
		p += len + (p[len] == '/');
	}
	if (!nr)
		return rg_fail(err, EINVAL, "invalid cgroup parent \"%s\"",
			       path);
	return 0;
}

int rg_cg_open_parent(int root_fd, const char *path, rg_cg_dir_hook hook,
		      void *data, int *out, struct rg_error *err)
{
	_cleanup_free_ char *copy = strdup(path);
	_cleanup_close_ int up_fd = -1;
	char *comp, *save = NULL;
	int fd;

	if (!copy)
		return rg_fail(err, errno, "strdup");
	if (check_parent(path, err) < 0)
		return -1;
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		if (rg_cg_open_dir(up_fd < 0 ? root_fd : up_fd, comp, NULL,
				   &fd, err) < 0)
			return -1;
		if (hook && hook(up_fd < 0 ? root_fd : up_fd, fd, data,
				 err) < 0) {
			close(fd);
			return rg_fail_context(err, "cgroup parent %s", path);
		}
		rg_cg_close(&up_fd);
		up_fd = fd;
	}
	*out = up_fd;
	up_fd = -1;
	return 0;
}

int rg_cg_make_dir(int parent_fd, const char *name, int *out,
		   struct rg_error *err)
{
	if (mkdirat(parent_fd, name, 0755) < 0) {
		if (errno == EEXIST)
			return rg_fail(err, errno,
				       "cgroup %s already exists (in use?)",
				       name);
		return rg_fail(err, errno, "creating cgroup %s", name);
	}
	*out = open_dir(parent_fd, name);
	if (*out < 0)
		return rg_fail(err, errno, "opening cgroup %s", name);
	return 0;
}

int rg_cg_rmdir(int parent_fd, const char *name, struct rg_error *err)
{
	struct rg_cg_backoff b;
	int error;

	rg_cg_backoff_init(&b, 1000, 64000, RG_CG_RMDIR_TIMEOUT_MS);
	for (;;) {
		if (!unlinkat(parent_fd, name, AT_REMOVEDIR) || errno == ENOENT)
			return 0;
		error = errno;
		/* EBUSY: the last tasks may still be leaving. */
		if (error != EBUSY || !rg_cg_backoff_sleep(&b))
			return rg_fail(err, error, "removing cgroup %s", name);
	}
}

/* Feed the digits of buf to *pid, handing out each complete number. */
static int signal_digits(const char *buf, size_t len, long *pid, int sig,
			 pid_t self)
{
	int count = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			*pid = *pid * 10 + (buf[i] - '0');
			continue;
		}
		if (*pid > 0) {
			count++;
			/* ESRCH: it died meanwhile, which is what we want. */
			if (sig && *pid != self)
				kill((pid_t)*pid, sig);
		}
		*pid = 0;
	}
	return count;
}

int rg_cg_procs_signal(int dir_fd, int sig, struct rg_error *err)
{
	_cleanup_close_ int fd = -1;
	char buf[RG_CG_BUF];
	pid_t self = getpid();
	long pid = 0;
	int count = 0;
	ssize_t n;

	if (rg_cg_open(dir_fd, "cgroup.procs", O_RDONLY, false, &fd, err) < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return rg_fail(err, errno, "reading cgroup.procs");
		}
		count += signal_digits(buf, (size_t)n, &pid, sig, self);
	}
	return count + signal_digits("\n", 1, &pid, sig, self);
}

static void timespec_add_ms(struct timespec *ts, long ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static long us_until(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * 1000000L +
	       (deadline->tv_nsec - now.tv_nsec) / 1000;
}

void rg_cg_backoff_init(struct rg_cg_backoff *b, long first_us,
			long max_delay_us, long timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, &b->deadline);
	timespec_add_ms(&b->deadline, timeout_ms);
	b->delay_us = first_us;
	b->max_delay_us = max_delay_us;
}

bool rg_cg_backoff_sleep(struct rg_cg_backoff *b)
{
	long left = us_until(&b->deadline);
	long us = b->delay_us < left ? b->delay_us : left;
	struct timespec ts;

	if (left <= 0)
		return false;
	ts.tv_sec = us / 1000000L;
	ts.tv_nsec = (us % 1000000L) * 1000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	b->delay_us *= 2;
	if (b->delay_us > b->max_delay_us)
		b->delay_us = b->max_delay_us;
	return true;
}

int rg_cg_backoff_left_ms(const struct rg_cg_backoff *b)
{
	long left = us_until(&b->deadline);

	return left > 0 ? (int)((left + 999) / 1000) : 0;
}

bool rg_cg_list_has(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		bool start = p == list || p[-1] == ' ' || p[-1] == '\n';
		bool end = !p[len] || p[len] == ' ' || p[len] == '\n';

		if (start && end)
			return true;
		p += len;
	}
	return false;
}

bool rg_cgroup_needs_recycle(const struct rg_cgroup *cg)
{
	return cg && (cg->kill_written || cg->unreclaimable);
}
