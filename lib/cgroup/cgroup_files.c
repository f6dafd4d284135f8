/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the v1 and v2 backends share (cgroup_backend.h): reading and
 * writing control files, keyed statistics, cgroup directories, signalling
 * the tasks of a cgroup and bounded waiting.
 */
#include "cgroup/cgroup_backend.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

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

/* The keys of a flat-keyed file's text, summed (a missing one is 0). */
static int sum_keys_in(const char *buf, const char *const keys[], size_t nkeys,
		       uint64_t *sum)
{
	uint64_t value;
	int ret;

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

int rg_cg_sum_keys(int fd, const char *const keys[], size_t nkeys,
		   uint64_t *sum)
{
	char buf[RG_CG_BUF];
	int ret = rg_cg_pread(fd, buf, sizeof(buf));

	return ret < 0 ? ret : sum_keys_in(buf, keys, nkeys, sum);
}

/* Pages on the LRU lists: what a reclaim frees without fail. */
static const char *const lru_keys[] = {
	"inactive_anon", "active_anon", "inactive_file",
	"active_file",	 "unevictable",
};

int rg_cg_lru_bytes(int memory_stat_fd, uint64_t *bytes)
{
	*bytes = 0;
	return rg_cg_sum_keys(memory_stat_fd, lru_keys,
			      sizeof(lru_keys) / sizeof(*lru_keys), bytes);
}

int rg_cg_memory_figure(const struct rg_cgroup *cg, int fd, bool lru,
			const char *file, uint64_t *bytes, struct rg_error *err)
{
	int ret;

	if (fd < 0)
		return rg_fail(err, ENODEV,
			       "cgroup %s has no memory controller", cg->label);
	ret = lru ? rg_cg_lru_bytes(fd, bytes) : rg_cg_read_u64(fd, bytes);
	if (ret < 0)
		return rg_fail(err, -ret, "reading %s of %s", file, cg->label);
	return 0;
}

/*
 * Above this much charged, reclaim also runs for kernel memory alone
 * (e.g. dentries of a stat() storm, which its slab shrinking frees). Below
 * it, what is left is charged to the next run: its memory-bytes can be up
 * to this much higher than in a new cgroup.
 */
#define RECLAIM_KERNEL_MIN (512 * 1024)

/* The page cache alone; tmpfs files (swap-backed: on the anon LRU). */
static const char *const cache_keys[] = { "inactive_file", "active_file" };
static const char *const shmem_keys[] = { "shmem" };

/*
 * After most runs only charges the kernel caches per CPU (batches of 64
 * pages) and kernel objects freed after an RCU grace period are left,
 * which a reclaim cannot free without waiting: force_empty would retry for
 * about half a millisecond in vain. With a resident task (a keeper), its
 * own anonymous pages stay, and no reclaim frees them without swap.
 */
bool rg_cg_worth_reclaiming(int memory_stat_fd, uint64_t usage,
			    uint64_t resident_bytes)
{
	char buf[RG_CG_BUF];
	uint64_t pages, shmem;

	/*
	 * A resident slot keeps up to RG_CACHE_LEFT_MAX of page cache (a
	 * trivial run left a page after most runs on v1): a reclaim cannot
	 * empty the cgroup there, and v1's force_empty retried 16 times,
	 * each pass shrinking every slab cache of the host (under the global
	 * shrinker_rwsem before 6.3), 2.5 ms of the keeper's CPU a run.
	 * tmpfs pages go always. One read of memory.stat (v1 formats it at
	 * some cost).
	 */
	if (resident_bytes)
		return usage > resident_bytes + RECLAIM_KERNEL_MIN ||
		       rg_cg_pread(memory_stat_fd, buf, sizeof(buf)) < 0 ||
		       sum_keys_in(buf, cache_keys, 2, &pages) < 0 ||
		       sum_keys_in(buf, shmem_keys, 1, &shmem) < 0 ||
		       pages > RG_CACHE_LEFT_MAX || shmem > 0;
	if (usage == 0)
		return false;
	if (usage > RECLAIM_KERNEL_MIN)
		return true;
	return rg_cg_sum_keys(memory_stat_fd, lru_keys,
			      sizeof(lru_keys) / sizeof(*lru_keys),
			      &pages) < 0 ||
	       pages > 0;
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
				      sizeof(*unreclaimable_keys),
			      &left) < 0 ||
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

int rg_cg_open(int dir_fd, const char *file, int flags, bool optional, int *fd,
	       struct rg_error *err)
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
		/*
		 * Root's alone (the kernel makes it 0755 whatever we ask): a
		 * reused slot's counters (memory.stat, failcnt, ...) are no
		 * run's to read, wherever /sys is in its view. EEXIST: a
		 * racing creator was first, fine.
		 */
		if (mkdirat(parent_fd, name, 0700) == 0) {
			mine = true;
			if (fchmodat(parent_fd, name, 0700, 0) < 0) {
				int errnum = errno;

				unlinkat(parent_fd, name, AT_REMOVEDIR);
				return rg_fail(err, errnum, "chmod cgroup %s",
					       name);
			}
		} else if (errno != EEXIST) {
			return rg_fail(err, errno, "creating cgroup %s", name);
		}
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
 * A pooled cgroup (the pool's, or a slot's) is root's alone: one made
 * before runguard made them 0700 (or chmod'ed since) is put right as it
 * is used, so that no run reads the counters of earlier ones.
 */
int rg_cg_keep_private(int dir_fd, const char *name, struct rg_error *err)
{
	struct stat st;

	if (fstat(dir_fd, &st) < 0)
		return rg_fail(err, errno, "stat cgroup %s", name);
	if (!(st.st_mode & 077))
		return 0;
	if (fchmod(dir_fd, 0700) < 0)
		return rg_fail(err, errno,
			       "cgroup %s is readable by others "
			       "(mode %04o) and cannot be made root's alone",
			       name, (unsigned)(st.st_mode & 07777));
	return 0;
}

/*
 * Every component valid before anything is created; at least one, so that
 * runs never land in a hierarchy's root.
 */
int rg_cg_check_parent(const char *path, struct rg_error *err)
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
	if (rg_cg_check_parent(path, err) < 0)
		return -1;
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		if (rg_cg_open_dir(up_fd < 0 ? root_fd : up_fd, comp, NULL,
				   &fd, err) < 0)
			return -1;
		if (hook &&
		    hook(up_fd < 0 ? root_fd : up_fd, fd, data, err) < 0) {
			close(fd);
			return rg_fail_context(err, "cgroup parent %s", path);
		}
		rg_close_fd(&up_fd);
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

int64_t rg_cg_reader_cpu_ns(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) < 0)
		return -1;
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void rg_cg_reader_cpu_delta(const struct rg_cgroup *base,
			    struct rg_cgroup_stats *stats)
{
	int64_t now = rg_cg_reader_cpu_ns();

	stats->reader_cpu_ns = now >= 0 && base->reader_cpu_base >= 0 &&
					       now >= base->reader_cpu_base ?
				       now - base->reader_cpu_base :
				       -1;
}
