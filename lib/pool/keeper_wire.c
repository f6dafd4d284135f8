/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_wire.h"

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
/* glibc 2.32+: whether the process ever had a second thread */
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define RG_HAVE_SINGLE_THREADED 1
#endif
#endif

#include "base/base.h"

#define WIRE_MAGIC 0x574b4752u	  /* "RGKW" */
#define WIRE_MAGIC_V1 0x31575752u /* "RWW1": version 1, which had no number */

#define HAS_ROOT 0x1u
#define HAS_WORKDIR 0x2u
#define SYSCALL_FILTER 0x4u
#define STDIN_CLOSED 0x8u
#define PEAK_UNUSED 0x10u
#define STDOUT_RELAYED 0x20u
#define STDERR_RELAYED 0x40u
#define ALL_FLAGS                                                 \
	(HAS_ROOT | HAS_WORKDIR | SYSCALL_FILTER | STDIN_CLOSED | \
	 PEAK_UNUSED | STDOUT_RELAYED | STDERR_RELAYED)

/*
 * The header, then strings_len bytes of NUL-terminated strings: file,
 * [root], [workdir], root_prefix, argv[argc], envp[envc]. magic and
 * version stay first in every version.
 */
struct wire_header {
	uint32_t magic;
	uint32_t version;
	uint32_t settings_size; /* the same version built otherwise */
	uint32_t config_size;
	uint32_t flags;
	uint32_t argc;
	uint32_t envc;
	uint32_t strings_len;
	uint32_t umask;
	struct rg_child_settings settings;
	struct rg_config config; /* rg_config_plain */
	struct rg_privs_plan privs;
	sigset_t child_sigmask;
	struct rlimit rlimits[RLIM_NLIMITS];
};

/*
 * Ours. umask() sets it while it reads it, for every thread: only where
 * no other thread exists (glibc 2.32's flag; the command-line runguard)
 * is that harmless, and 0.3 us where /proc/self/status takes 19 (it
 * formats all of the process's status).
 */
static mode_t current_umask(void)
{
	char line[64];
	unsigned int mask = 022;
	FILE *f;

#ifdef RG_HAVE_SINGLE_THREADED
	if (__libc_single_threaded) {
		mode_t own = umask(0);

		umask(own);
		return own;
	}
#endif
	f = fopen("/proc/self/status", "re");
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

/* s with its NUL at blob + *pos; with no blob, only the length counts. */
static void put_string(char *blob, size_t *pos, const char *s)
{
	size_t len = strlen(s) + 1;

	if (blob)
		memcpy(blob + *pos, s, len);
	*pos += len;
}

/* The strings in the order rebuild() takes them; returns their length. */
static size_t lay_out(const struct rg_child_plan *plan, char *blob)
{
	size_t pos = 0;

	put_string(blob, &pos, plan->file);
	if (plan->root)
		put_string(blob, &pos, plan->root);
	if (plan->workdir)
		put_string(blob, &pos, plan->workdir);
	put_string(blob, &pos, plan->root_prefix);
	for (size_t i = 0; plan->argv && plan->argv[i]; i++)
		put_string(blob, &pos, plan->argv[i]);
	for (size_t i = 0; plan->envp && plan->envp[i]; i++)
		put_string(blob, &pos, plan->envp[i]);
	return pos;
}

static void fill_header(const struct rg_child_plan *plan,
			const struct rg_wire_run *run, size_t strings_len,
			struct wire_header *h)
{
	/* no stray bytes of ours in the padding the keeper reads */
	memset(h, 0, sizeof(*h));
	h->magic = WIRE_MAGIC;
	h->version = RG_WIRE_VERSION;
	h->settings_size = sizeof(h->settings);
	h->config_size = sizeof(h->config);
	h->flags = (plan->root ? HAS_ROOT : 0) |
		   (plan->workdir ? HAS_WORKDIR : 0) |
		   (plan->seccomp ? SYSCALL_FILTER : 0) |
		   (plan->stdin_fd < 0 ? STDIN_CLOSED : 0) |
		   (run->peak_unused ? PEAK_UNUSED : 0) |
		   (run->relayed[0] ? STDOUT_RELAYED : 0) |
		   (run->relayed[1] ? STDERR_RELAYED : 0);
	rg_config_plain(run->cfg, &h->config);
	h->argc = (uint32_t)count_strings(plan->argv);
	h->envc = (uint32_t)count_strings(plan->envp);
	h->strings_len = (uint32_t)strings_len;
	memcpy(&h->settings, &plan->settings, sizeof(h->settings));
	memcpy(&h->privs, &plan->privs, sizeof(h->privs));
	h->child_sigmask = plan->child_sigmask;
	caller_state(h);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int rg_wire_encode(const struct rg_child_plan *plan,
		   const struct rg_wire_run *run, int *memfd,
		   struct rg_error *err)
{
	struct wire_header h;
	size_t len = lay_out(plan, NULL);
	char *blob;
	int fd, errnum;

	if (len > UINT32_MAX)
		return rg_fail(err, E2BIG,
			       "the command and environment are "
			       "too large for the slot's keeper");
	blob = malloc(len);
	if (!blob)
		return rg_fail(err, errno, "encoding the run for the keeper");
	lay_out(plan, blob);
	fill_header(plan, run, len, &h);
	/* sealed: what the keeper checks is what it reads */
	fd = memfd_create("runguard-run", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || write_all(fd, &h, sizeof(h)) < 0 ||
	    write_all(fd, blob, len) < 0 ||
	    fcntl(fd, F_ADD_SEALS,
		  F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) <
		    0) {
		errnum = errno;
		free(blob);
		if (fd >= 0)
			close(fd);
		return rg_fail(err, errnum, "encoding the run for the keeper");
	}
	free(blob);
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
			 const char **out)
{
	*out = NULL;
	if (!present)
		return 0;
	*out = next_string(blob, end, pos);
	return *out ? 0 : -1;
}

/* Every string where the header says, and nothing after them. */
static int rebuild(const struct wire_header *h, struct rg_wire_plan *w)
{
	struct rg_child_plan *plan = &w->plan;
	size_t pos = 0, end = h->strings_len;
	char *prefix;

	plan->file = next_string(w->blob, end, &pos);
	if (!plan->file ||
	    take_optional(w->blob, end, &pos, h->flags & HAS_ROOT, &plan->root) ||
	    take_optional(w->blob, end, &pos, h->flags & HAS_WORKDIR,
			  &plan->workdir) ||
	    !(prefix = next_string(w->blob, end, &pos)) ||
	    strlen(prefix) >= sizeof(plan->root_prefix) ||
	    take_vector(w->blob, end, &pos, h->argc, &w->argv) ||
	    take_vector(w->blob, end, &pos, h->envc, &w->envp) || pos != end)
		return -1;
	strcpy(plan->root_prefix, prefix);
	plan->argv = w->argv;
	plan->envp = w->envp;
	return 0;
}

static void fill_scalars(const struct wire_header *h, struct rg_wire_plan *w)
{
	struct rg_child_plan *plan = &w->plan;

	memcpy(&plan->settings, &h->settings, sizeof(plan->settings));
	memcpy(&plan->privs, &h->privs, sizeof(plan->privs));
	plan->child_sigmask = h->child_sigmask;
	plan->stdin_fd = -1;
	w->syscall_filter = h->flags & SYSCALL_FILTER;
	w->stdin_closed = h->flags & STDIN_CLOSED;
	w->peak_unused = h->flags & PEAK_UNUSED;
	w->relayed[0] = h->flags & STDOUT_RELAYED;
	w->relayed[1] = h->flags & STDERR_RELAYED;
	/* plain already; cleared again: no pointer of the client's is used */
	rg_config_plain(&h->config, &w->cfg);
	w->caller.cwd_fd = -1;
	w->caller.umask = (mode_t)h->umask;
	memcpy(w->caller.rlimits, h->rlimits, sizeof(w->caller.rlimits));
	w->caller.rlimits_inherited = 0;
	plan->caller = &w->caller;
}

static int malformed(struct rg_error *err)
{
	return rg_fail(err, EPROTO, "a malformed run from the client");
}

/* Only magic and version are read before the version is known to be ours. */
static int check_version(int memfd, off_t size, struct rg_error *err)
{
	uint32_t lead[2];

	if (size < (off_t)sizeof(lead) ||
	    pread(memfd, lead, sizeof(lead), 0) != (ssize_t)sizeof(lead))
		return malformed(err);
	if (lead[0] == WIRE_MAGIC_V1)
		lead[1] = 1;
	else if (lead[0] != WIRE_MAGIC)
		return malformed(err);
	if (lead[1] != RG_WIRE_VERSION)
		return rg_fail(err, EPROTO,
			       "a keeper of another runguard "
			       "version (wire %u, this is %u)",
			       lead[1], RG_WIRE_VERSION);
	return 0;
}

int rg_wire_decode(int memfd, struct rg_wire_plan *w, struct rg_error *err)
{
	struct wire_header h;
	struct stat st;

	memset(w, 0, sizeof(*w));
	if (fstat(memfd, &st) < 0)
		return malformed(err);
	if (check_version(memfd, st.st_size, err) < 0)
		return -1;
	/* each string takes at least its NUL: no huge vectors from a lie */
	if (st.st_size < (off_t)sizeof(h) ||
	    pread(memfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.settings_size != sizeof(h.settings) ||
	    h.config_size != sizeof(h.config) || (h.flags & ~ALL_FLAGS) ||
	    (off_t)sizeof(h) + h.strings_len != st.st_size ||
	    (uint64_t)h.argc + h.envc > h.strings_len)
		return malformed(err);
	w->blob = malloc((size_t)h.strings_len + 1);
	if (!w->blob)
		return rg_fail(err, errno, "decoding a run");
	if (pread(memfd, w->blob, h.strings_len, sizeof(h)) !=
		    (ssize_t)h.strings_len ||
	    rebuild(&h, w) < 0) {
		rg_wire_free(w);
		return malformed(err);
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
