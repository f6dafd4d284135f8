/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "keeper_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

#define WIRE_MAGIC 0x31575752u /* "RWW1" */

#define HAS_ROOT 0x1u
#define HAS_WORKDIR 0x2u
#define HAS_CPUSET 0x4u
#define HAS_CPU_LIMIT 0x8u
#define CORE_DUMPS 0x10u
#define SYSCALL_FILTER 0x20u
#define SET_GID 0x40u
#define STDIN_CLOSED 0x80u

/*
 * Fixed part, then NUL-terminated strings: file, [root], [workdir],
 * [cpuset], root_prefix, argv[argc], envp[envc].
 */
struct wire_header {
	uint32_t magic;
	uint32_t flags;
	uint32_t argc;
	uint32_t envc;
	uint32_t uid;
	uint32_t gid;
	int32_t cap_last;
	uint32_t strings_len;
	double cpu_hard;
	uint64_t file_limit;
	uint64_t process_limit;
	cpu_set_t cpuset_mask;
	sigset_t child_sigmask;
	uint32_t umask;
	struct rlimit rlimits[RLIM_NLIMITS];
};

/* Ours, without changing it (umask() would, for a moment, in every thread). */
static mode_t current_umask(void)
{
	char line[64];
	unsigned int mask = 022;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 022;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &mask) == 1)
			break;
	fclose(f);
	return (mode_t)mask;
}

static void caller_state(struct wire_header *h)
{
	h->umask = current_umask();
	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (getrlimit(i, &h->rlimits[i]) < 0)
			h->rlimits[i].rlim_cur = h->rlimits[i].rlim_max =
				RLIM_INFINITY;
}

static size_t count_strings(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

static uint32_t header_flags(const struct rg_child_plan *plan)
{
	const struct rg_config *cfg = plan->cfg;
	uint32_t f = 0;

	f |= cfg->root ? HAS_ROOT : 0;
	f |= cfg->workdir ? HAS_WORKDIR : 0;
	f |= cfg->cpuset ? HAS_CPUSET : 0;
	f |= cfg->has_cpu_limit ? HAS_CPU_LIMIT : 0;
	f |= cfg->core_dumps ? CORE_DUMPS : 0;
	f |= plan->seccomp ? SYSCALL_FILTER : 0;
	f |= plan->privs.set_gid ? SET_GID : 0;
	f |= plan->stdin_fd < 0 ? STDIN_CLOSED : 0;
	return f;
}

/* The strings in order; NULL entries are the absent optional ones. */
static size_t list_strings(const struct rg_child_plan *plan,
			   const char **out, size_t max)
{
	const struct rg_config *cfg = plan->cfg;
	const char *fixed[] = { cfg->file, cfg->root, cfg->workdir,
				cfg->cpuset, plan->root_prefix };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
		if (fixed[i] && n < max)
			out[n++] = fixed[i];
	for (size_t i = 0; cfg->argv[i] && n < max; i++)
		out[n++] = cfg->argv[i];
	for (size_t i = 0; plan->envp && plan->envp[i] && n < max; i++)
		out[n++] = plan->envp[i];
	return n;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_strings(int fd, const char **s, size_t n, uint32_t *len)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(s[i]) + 1;

		if (write_all(fd, s[i], l) < 0)
			return -1;
		total += l;
	}
	if (total > UINT32_MAX)
		return -1;
	*len = (uint32_t)total;
	return 0;
}

int rg_wire_encode(const struct rg_child_plan *plan, int *memfd,
		   struct rg_error *err)
{
	const struct rg_config *cfg = plan->cfg;
	size_t argc = count_strings(cfg->argv), envc = count_strings(plan->envp);
	size_t max = 5 + argc + envc, n;
	struct wire_header h = {
		.magic = WIRE_MAGIC,
		.flags = header_flags(plan),
		.argc = (uint32_t)argc,
		.envc = (uint32_t)envc,
		.uid = plan->privs.uid,
		.gid = plan->privs.gid,
		.cap_last = plan->privs.cap_last,
		.cpu_hard = cfg->cpu_hard,
		.file_limit = cfg->file_limit,
		.process_limit = cfg->process_limit,
		.cpuset_mask = cfg->cpuset_mask,
		.child_sigmask = plan->child_sigmask,
	};
	const char **strings = calloc(max, sizeof(*strings));
	int fd;

	if (!strings)
		return rg_fail(err, errno, "encoding the run for the keeper");
	caller_state(&h);
	n = list_strings(plan, strings, max);
	fd = memfd_create("runguard-run", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || lseek(fd, sizeof(h), SEEK_SET) < 0 ||
	    write_strings(fd, strings, n, &h.strings_len) < 0 ||
	    pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
		  F_SEAL_SEAL) < 0) {
		int errnum = errno;

		free(strings);
		if (fd >= 0)
			close(fd);
		return rg_fail(err, errnum, "encoding the run for the keeper");
	}
	free(strings);
	*memfd = fd;
	return 0;
}

/* Next string in blob[*pos..end), or NULL if none is left. */
static char *next_string(char *blob, size_t end, size_t *pos)
{
	char *s = blob + *pos;
	char *nul;

	if (*pos >= end)
		return NULL;
	nul = memchr(s, '\0', end - *pos);
	if (!nul)
		return NULL;
	*pos += (size_t)(nul - s) + 1;
	return s;
}

static int take_vector(char *blob, size_t end, size_t *pos, uint32_t count,
		       char ***out)
{
	char **v = calloc((size_t)count + 1, sizeof(*v));

	if (!v)
		return -1;
	for (uint32_t i = 0; i < count; i++)
		if (!(v[i] = next_string(blob, end, pos))) {
			free(v);
			return -1;
		}
	*out = v;
	return 0;
}

static int take_optional(char *blob, size_t end, size_t *pos, bool present,
			 char **out)
{
	*out = NULL;
	if (!present)
		return 0;
	*out = next_string(blob, end, pos);
	return *out ? 0 : -1;
}

static int rebuild(const struct wire_header *h, struct rg_wire_plan *w)
{
	struct rg_config *cfg = &w->cfg;
	size_t pos = 0, end = h->strings_len;
	char *prefix;

	cfg->file = next_string(w->blob, end, &pos);
	if (!cfg->file ||
	    take_optional(w->blob, end, &pos, h->flags & HAS_ROOT, &cfg->root) ||
	    take_optional(w->blob, end, &pos, h->flags & HAS_WORKDIR,
			  &cfg->workdir) ||
	    take_optional(w->blob, end, &pos, h->flags & HAS_CPUSET,
			  &cfg->cpuset) ||
	    !(prefix = next_string(w->blob, end, &pos)) ||
	    strlen(prefix) >= sizeof(w->plan.root_prefix) ||
	    take_vector(w->blob, end, &pos, h->argc, &w->argv) ||
	    take_vector(w->blob, end, &pos, h->envc, &w->envp))
		return -1;
	strcpy(w->plan.root_prefix, prefix);
	cfg->argv = w->argv;
	return 0;
}

static void fill_scalars(const struct wire_header *h, struct rg_wire_plan *w)
{
	struct rg_config *cfg = &w->cfg;
	struct rg_child_plan *plan = &w->plan;

	cfg->has_cpu_limit = h->flags & HAS_CPU_LIMIT;
	cfg->cpu_hard = h->cpu_hard;
	cfg->file_limit = h->file_limit;
	cfg->process_limit = h->process_limit;
	cfg->core_dumps = h->flags & CORE_DUMPS;
	cfg->cpuset_mask = h->cpuset_mask;
	w->syscall_filter = h->flags & SYSCALL_FILTER;
	w->stdin_closed = h->flags & STDIN_CLOSED;
	plan->cfg = cfg;
	plan->envp = w->envp;
	plan->privs.uid = h->uid;
	plan->privs.gid = h->gid;
	plan->privs.set_gid = h->flags & SET_GID;
	plan->privs.cap_last = h->cap_last;
	plan->child_sigmask = h->child_sigmask;
	plan->stdin_fd = -1;
	w->caller.cwd_fd = -1;
	w->caller.umask = (mode_t)h->umask;
	memcpy(w->caller.rlimits, h->rlimits, sizeof(w->caller.rlimits));
	plan->caller = &w->caller;
}

int rg_wire_decode(int memfd, struct rg_wire_plan *w, struct rg_error *err)
{
	struct wire_header h;
	struct stat st;

	memset(w, 0, sizeof(*w));
	if (fstat(memfd, &st) < 0 || st.st_size < (off_t)sizeof(h) ||
	    pread(memfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != WIRE_MAGIC ||
	    (off_t)sizeof(h) + h.strings_len != st.st_size)
		return rg_fail(err, EPROTO, "a malformed run from the client");
	w->blob = malloc((size_t)h.strings_len + 1);
	if (!w->blob)
		return rg_fail(err, errno, "decoding a run");
	if (pread(memfd, w->blob, h.strings_len, sizeof(h)) !=
		    (ssize_t)h.strings_len ||
	    rebuild(&h, w) < 0) {
		rg_wire_free(w);
		return rg_fail(err, EPROTO, "a malformed run from the client");
	}
	fill_scalars(&h, w);
	return 0;
}

void rg_wire_free(struct rg_wire_plan *w)
{
	free(w->argv);
	free(w->envp);
	free(w->blob);
	memset(w, 0, sizeof(*w));
}
