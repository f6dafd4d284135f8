/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper's wire (lib/pool/keeper_wire.c): a plan comes back as it
 * went, settings byte for byte, the run's configuration with its scalars
 * and without the client's pointers, fds and log sink; the memfd is sealed; another version, a
 * cut or garbled memfd is refused with EPROTO, and nothing leaks (the
 * sanitizer build runs this under ASan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool/keeper_wire.h"

#define MALFORMED "a malformed run from the client"
#define BIG_LEN (70 * 1024) /* above 64 KiB */
#define ARGC 1000
#define ENVC 500

/* A stand-in: the wire only asks whether there is a filter. */
static const struct sock_fprog some_filter;

/* Every field away from its default; zeroed first, as spawn.c does. */
static void odd_settings(struct rg_child_settings *s)
{
	memset(s, 0, sizeof(*s));
	CPU_ZERO(&s->cpuset_mask);
	CPU_SET(1, &s->cpuset_mask);
	CPU_SET(3, &s->cpuset_mask);
	CPU_SET(63, &s->cpuset_mask);
	s->cpu_hard = 2.75;
	s->file_limit = 123456789;
	s->process_limit = 77;
	s->has_cpu_limit = true;
	s->has_cpuset = true;
	s->core_dumps = true;
}

static void default_settings(struct rg_child_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->file_limit = RG_UNLIMITED;
	s->process_limit = RG_UNLIMITED;
}

/* A run with many argv and envp entries, empty and big ones among them. */
struct big_run {
	struct rg_child_plan plan;
	char *argv[ARGC + 1];
	char *envp[ENVC + 1];
	char *big;
	char number[ARGC + ENVC][32];
};

static void big_run_init(struct big_run *r)
{
	memset(r, 0, sizeof(*r));
	r->big = malloc(BIG_LEN + 1);
	assert_non_null(r->big);
	for (size_t i = 0; i < BIG_LEN; i++)
		r->big[i] = (char)('a' + i % 26);
	r->big[BIG_LEN] = '\0';
	for (int i = 0; i < ARGC; i++)
		snprintf(r->number[i], sizeof(r->number[i]), "arg%d", i);
	for (int i = ARGC; i < ARGC + ENVC; i++)
		snprintf(r->number[i], sizeof(r->number[i]), "VAR%d=%d", i,
			 i * 7);
	for (int i = 0; i < ARGC; i++)
		r->argv[i] = i % 10 == 3 ? "" : r->number[i];
	r->argv[500] = r->big;
	for (int i = 0; i < ENVC; i++)
		r->envp[i] = i % 10 == 5 ? "" : r->number[ARGC + i];
	r->envp[ENVC - 1] = r->big;

	odd_settings(&r->plan.settings);
	r->plan.file = "/usr/bin/prog";
	r->plan.argv = r->argv;
	r->plan.root = r->big;
	r->plan.workdir = "";
	r->plan.envp = r->envp;
	r->plan.seccomp = &some_filter;
	r->plan.privs.uid = 1234;
	r->plan.privs.gid = 5678;
	r->plan.privs.set_gid = true;
	r->plan.privs.cap_last = 40;
	strcpy(r->plan.root_prefix, "/judgings/");
	sigemptyset(&r->plan.child_sigmask);
	sigaddset(&r->plan.child_sigmask, SIGUSR1);
	sigaddset(&r->plan.child_sigmask, SIGPIPE);
	sigaddset(&r->plan.child_sigmask, SIGRTMIN + 2);
	r->plan.stdin_fd = -1;
	r->plan.parent_pid = 99;
}

/* A small run: absent optional strings, no environment, defaults. */
static void small_plan(struct rg_child_plan *p, char **argv)
{
	memset(p, 0, sizeof(*p));
	default_settings(&p->settings);
	p->file = "prog";
	p->argv = argv;
	p->stdin_fd = 0;
	sigemptyset(&p->child_sigmask);
}

/*
 * The run's configuration: its scalars away from their defaults, and
 * every pointer, fd and callback set, which must not travel.
 */
static char some_text[] = "x";
static char *some_vector[] = { some_text, NULL };

static void log_nowhere(void *data, enum rg_log_level level, const char *m)
{
	(void)data;
	(void)level;
	(void)m;
}

static void odd_config(struct rg_config *c)
{
	memset(c, 0, sizeof(*c));
	c->file = c->root = c->root_prefix = c->workdir = some_text;
	c->argv = some_vector;
	c->has_uid = c->has_gid = true;
	c->uid = 1001;
	c->gid = 1002;
	c->has_wall_limit = c->has_cpu_limit = true;
	c->wall_soft = 2.5;
	c->wall_hard = 3.25;
	c->cpu_soft = 1.5;
	c->cpu_hard = 1.75;
	c->memory_limit = 262144 * 1024ull;
	c->file_limit = 8192 * 1024ull;
	c->process_limit = 64;
	c->cpuset = some_text;
	CPU_SET(1, &c->cpuset_mask);
	c->output[0] = (struct rg_output){ .path = some_text, .fd = 7 };
	c->output[1] = (struct rg_output){ .path = NULL, .fd = 2 };
	c->input = (struct rg_output){ .path = some_text, .fd = 0 };
	c->stream_limit = 8192;
	c->env_changes = some_vector;
	c->env_changes_len = 1;
	c->timeout_notify_pid = 4242;
	c->syscall_filter = true;
	c->kill_grace = 0.25;
	c->cgroup_parent = c->pool_dir = some_text;
	c->pool_size = 32;
	c->pool_keeper = c->pool_v2_exact_peak = c->reap_all_children = true;
	c->cancel_fd = 9;
	c->log = (struct rg_log_sink){ .fn = log_nowhere,
				       .data = c,
				       .max = RG_LOG_NOTICE };
}

static int encode_run(const struct rg_child_plan *p, bool peak_unused)
{
	struct rg_config cfg;
	struct rg_wire_run run = { .cfg = &cfg, .peak_unused = peak_unused };
	struct rg_error err = { 0 };
	int fd = -1;

	odd_config(&cfg);
	if (rg_wire_encode(p, &run, &fd, &err) < 0)
		fail_msg("encode: %s", err.message);
	assert_true(fd >= 0);
	return fd;
}

static int encode(const struct rg_child_plan *p)
{
	return encode_run(p, false);
}

/* The scalars as they went; nothing of the client's pointers or fds. */
static void expect_config(const struct rg_config *c)
{
	assert_null(c->file);
	assert_null(c->argv);
	assert_null(c->root);
	assert_null(c->root_prefix);
	assert_null(c->workdir);
	assert_null(c->cpuset);
	assert_null(c->env_changes);
	assert_int_equal(c->env_changes_len, 0);
	assert_null(c->cgroup_parent);
	assert_null(c->pool_dir);
	for (int i = 0; i < 2; i++) {
		assert_null(c->output[i].path);
		assert_int_equal(c->output[i].fd, -1);
	}
	assert_null(c->input.path);
	assert_int_equal(c->input.fd, -1);
	assert_int_equal(c->cancel_fd, -1);
	assert_null(c->log.fn);
	assert_null(c->log.data);
	assert_int_equal(c->log.max, RG_LOG_NOTICE);
	assert_true(c->has_uid && c->has_gid);
	assert_int_equal(c->uid, 1001);
	assert_int_equal(c->gid, 1002);
	assert_true(c->has_wall_limit && c->has_cpu_limit);
	assert_true(c->wall_soft == 2.5 && c->wall_hard == 3.25);
	assert_true(c->cpu_soft == 1.5 && c->cpu_hard == 1.75);
	assert_int_equal(c->memory_limit, 262144 * 1024ull);
	assert_int_equal(c->file_limit, 8192 * 1024ull);
	assert_int_equal(c->process_limit, 64);
	assert_true(CPU_ISSET(1, &c->cpuset_mask));
	assert_int_equal(c->stream_limit, 8192);
	assert_int_equal(c->timeout_notify_pid, 4242);
	assert_true(c->syscall_filter);
	assert_true(c->kill_grace == 0.25);
	assert_int_equal(c->pool_size, 32);
	assert_true(c->pool_keeper && c->pool_v2_exact_peak &&
		    c->reap_all_children);
}

/* The length of p's strings on the wire, NULs included. */
static size_t strings_of(const struct rg_child_plan *p)
{
	size_t n = strlen(p->file) + 1 + strlen(p->root_prefix) + 1;

	n += p->root ? strlen(p->root) + 1 : 0;
	n += p->workdir ? strlen(p->workdir) + 1 : 0;
	for (size_t i = 0; p->argv && p->argv[i]; i++)
		n += strlen(p->argv[i]) + 1;
	for (size_t i = 0; p->envp && p->envp[i]; i++)
		n += strlen(p->envp[i]) + 1;
	return n;
}

#define SLACK 8192 /* zeroed room behind a memfd's bytes */

/* The memfd's bytes. */
static char *contents(int fd, size_t *len)
{
	struct stat st;
	char *buf;

	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	buf = calloc(1, *len + SLACK);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, *len, 0), (ssize_t)*len);
	return buf;
}

/* p on the wire, in a buffer of the caller's. */
static char *wire_of(const struct rg_child_plan *p, size_t *len)
{
	int fd = encode(p);
	char *buf = contents(fd, len);

	close(fd);
	return buf;
}

static int memfd_of(const void *buf, size_t len)
{
	int fd = memfd_create("test-wire", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	return fd;
}

/* rc of decoding buf[0..len); a success is freed at once. */
static int decode_bytes(const void *buf, size_t len, struct rg_error *err)
{
	struct rg_wire_plan w;
	int fd = memfd_of(buf, len), rc;

	memset(&w, 0x5a, sizeof(w));
	rc = rg_wire_decode(fd, &w, err);
	close(fd);
	if (rc == 0) {
		rg_wire_free(&w);
	} else {
		/* a refusal leaves nothing to free */
		assert_null(w.blob);
		assert_null(w.argv);
		assert_null(w.envp);
	}
	return rc;
}

static void expect_refused(const void *buf, size_t len, const char *message)
{
	struct rg_error err = { 0 };

	assert_int_equal(decode_bytes(buf, len, &err), -1);
	assert_int_equal(err.errnum, EPROTO);
	assert_string_equal(err.message, message);
}

/* Any of the two refusals; nothing else. */
static bool refused_or_taken(const void *buf, size_t len)
{
	struct rg_error err = { 0 };

	if (decode_bytes(buf, len, &err) == 0)
		return false;
	assert_int_equal(err.errnum, EPROTO);
	if (strcmp(err.message, MALFORMED) != 0)
		assert_non_null(strstr(err.message, "another runguard version"));
	return true;
}

static void expect_strings(char *const *got, char *const *want)
{
	size_t i;

	for (i = 0; want[i]; i++) {
		assert_non_null(got[i]);
		assert_string_equal(got[i], want[i]);
	}
	assert_null(got[i]);
}

static void expect_in_blob(const struct rg_wire_plan *w, size_t len,
			   const char *s)
{
	assert_true(s >= w->blob && s < w->blob + len);
}

static void expect_settings(const struct rg_child_settings *got,
			    const struct rg_child_settings *want)
{
	assert_true(CPU_EQUAL(&got->cpuset_mask, &want->cpuset_mask));
	assert_true(got->cpu_hard == want->cpu_hard);
	assert_true(got->file_limit == want->file_limit);
	assert_true(got->process_limit == want->process_limit);
	assert_int_equal(got->has_cpu_limit, want->has_cpu_limit);
	assert_int_equal(got->has_cpuset, want->has_cpuset);
	assert_int_equal(got->core_dumps, want->core_dumps);
	/* and whatever a new field is: the struct travels whole */
	assert_memory_equal(got, want, sizeof(*got));
}

static void expect_caller_state(const struct rg_wire_plan *w)
{
	mode_t mask = umask(0);

	umask(mask);
	assert_ptr_equal(w->plan.caller, &w->caller);
	assert_int_equal(w->caller.cwd_fd, -1);
	assert_int_equal(w->caller.umask, mask);
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		struct rlimit rl;

		assert_int_equal(getrlimit(i, &rl), 0);
		assert_true(w->caller.rlimits[i].rlim_cur == rl.rlim_cur);
		assert_true(w->caller.rlimits[i].rlim_max == rl.rlim_max);
	}
}

static void test_round_trip(void **state)
{
	struct big_run r;
	struct rg_wire_plan w;
	struct rg_error err = { 0 };
	size_t strings;
	int fd;

	(void)state;
	big_run_init(&r);
	strings = strings_of(&r.plan);
	fd = encode(&r.plan);
	assert_int_equal(rg_wire_decode(fd, &w, &err), 0);
	close(fd);

	expect_settings(&w.plan.settings, &r.plan.settings);
	assert_string_equal(w.plan.file, "/usr/bin/prog");
	assert_string_equal(w.plan.root, r.big);
	assert_non_null(w.plan.workdir);
	assert_string_equal(w.plan.workdir, "");
	assert_string_equal(w.plan.root_prefix, "/judgings/");
	expect_strings(w.plan.argv, r.argv);
	expect_strings(w.plan.envp, r.envp);
	assert_ptr_equal(w.plan.argv, w.argv);
	assert_ptr_equal(w.plan.envp, w.envp);

	/* every string lives in the one blob rg_wire_free frees */
	expect_in_blob(&w, strings, w.plan.file);
	expect_in_blob(&w, strings, w.plan.root);
	expect_in_blob(&w, strings, w.plan.workdir);
	for (int i = 0; i < ARGC; i++)
		expect_in_blob(&w, strings, w.argv[i]);
	for (int i = 0; i < ENVC; i++)
		expect_in_blob(&w, strings, w.envp[i]);

	assert_int_equal(w.plan.privs.uid, 1234);
	assert_int_equal(w.plan.privs.gid, 5678);
	assert_true(w.plan.privs.set_gid);
	assert_int_equal(w.plan.privs.cap_last, 40);
	assert_int_equal(sigismember(&w.plan.child_sigmask, SIGUSR1), 1);
	assert_int_equal(sigismember(&w.plan.child_sigmask, SIGPIPE), 1);
	assert_int_equal(sigismember(&w.plan.child_sigmask, SIGRTMIN + 2), 1);
	assert_int_equal(sigismember(&w.plan.child_sigmask, SIGTERM), 0);
	assert_memory_equal(&w.plan.child_sigmask, &r.plan.child_sigmask,
			    sizeof(sigset_t));
	assert_true(w.syscall_filter);
	assert_true(w.stdin_closed);
	assert_false(w.peak_unused);
	expect_caller_state(&w);
	expect_config(&w.cfg);

	/* the keeper's own: not taken from the client */
	assert_null(w.plan.place.cgroup);
	assert_int_equal(w.plan.place.clone_flags, 0);
	assert_null(w.plan.seccomp);
	assert_int_equal(w.plan.stdin_fd, -1);
	assert_int_equal(w.plan.parent_pid, 0);

	rg_wire_free(&w);
	free(r.big);
}

/* What goes with the plan: its flag each way. */
static void test_run_flags(void **state)
{
	char *argv[] = { "prog", NULL };
	struct rg_child_plan p;

	(void)state;
	small_plan(&p, argv);
	for (int i = 0; i < 2; i++) {
		struct rg_error err = { 0 };
		struct rg_wire_plan w;
		int fd = encode_run(&p, i);

		assert_int_equal(rg_wire_decode(fd, &w, &err), 0);
		close(fd);
		assert_int_equal(w.peak_unused, (bool)i);
		expect_config(&w.cfg);
		rg_wire_free(&w);
	}
}

/* root and workdir each absent, empty or set; no environment at all. */
static void test_optional_strings(void **state)
{
	static const char *const values[] = { NULL, "", "/x" };
	char *argv[] = { "", NULL };
	char *no_env[] = { NULL };

	(void)state;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			struct rg_child_plan p;
			struct rg_child_settings want;
			struct rg_wire_plan w;
			struct rg_error err = { 0 };
			int fd;

			small_plan(&p, argv);
			p.root = values[i];
			p.workdir = values[j];
			fd = encode(&p);
			assert_int_equal(rg_wire_decode(fd, &w, &err), 0);
			close(fd);
			if (values[i])
				assert_string_equal(w.plan.root, values[i]);
			else
				assert_null(w.plan.root);
			if (values[j])
				assert_string_equal(w.plan.workdir, values[j]);
			else
				assert_null(w.plan.workdir);
			assert_string_equal(w.plan.file, "prog");
			assert_string_equal(w.plan.root_prefix, "");
			expect_strings(w.plan.argv, argv);
			expect_strings(w.plan.envp, no_env);
			default_settings(&want);
			expect_settings(&w.plan.settings, &want);
			assert_false(w.plan.privs.set_gid);
			assert_false(w.syscall_filter);
			assert_false(w.stdin_closed);
			rg_wire_free(&w);
		}
}

static void test_sealed(void **state)
{
	struct big_run r;
	int fd;

	(void)state;
	big_run_init(&r);
	fd = encode(&r.plan);
	assert_int_equal(fcntl(fd, F_GET_SEALS), F_SEAL_WRITE | F_SEAL_GROW |
							 F_SEAL_SHRINK |
							 F_SEAL_SEAL);
	assert_int_equal(pwrite(fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fd, 1), -1);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, 0), -1);
	close(fd);
	free(r.big);
}

/* magic and version lead every version, whatever follows them. */
static void test_other_version(void **state)
{
	char *argv[] = { "prog", NULL };
	struct rg_child_plan p;
	char message[128], *buf;
	uint32_t version = RG_WIRE_VERSION + 1, lead[2];
	size_t len;

	(void)state;
	small_plan(&p, argv);
	buf = wire_of(&p, &len);
	memcpy(lead, buf, sizeof(lead));
	assert_int_equal(lead[1], RG_WIRE_VERSION);

	memcpy(buf + sizeof(uint32_t), &version, sizeof(version));
	snprintf(message, sizeof(message),
		 "a keeper of another runguard "
		 "version (wire %u, this is %u)",
		 version, RG_WIRE_VERSION);
	expect_refused(buf, len, message);
	/* a later version's header may be of any size */
	expect_refused(buf, 2 * sizeof(uint32_t), message);
	expect_refused(buf, len + 4096, message);

	/* version 1 had a magic of its own and no number */
	memcpy(buf, "RWW1", 4);
	snprintf(message, sizeof(message),
		 "a keeper of another runguard "
		 "version (wire 1, this is %u)",
		 RG_WIRE_VERSION);
	expect_refused(buf, len, message);
	free(buf);
}

static void test_truncated(void **state)
{
	char *argv[] = { "prog", "-x", "", NULL };
	char *envp[] = { "A=1", "", NULL };
	struct rg_child_plan p;
	char *buf;
	size_t len;

	(void)state;
	small_plan(&p, argv);
	p.envp = envp;
	p.root = "/r";
	buf = wire_of(&p, &len);
	for (size_t cut = 0; cut < len; cut++)
		expect_refused(buf, cut, MALFORMED);
	/* one byte too many is as wrong */
	expect_refused(buf, len + 1, MALFORMED);
	assert_false(refused_or_taken(buf, len));
	free(buf);
}

static void test_garbled(void **state)
{
	char *argv[] = { "prog", "-x", "", "y", NULL };
	char *envp[] = { "A=1", "", "B=2", NULL };
	struct rg_child_plan p;
	size_t len, header, refused = 0;
	uint32_t seed = 12345;
	char *buf;

	(void)state;
	small_plan(&p, argv);
	p.envp = envp;
	p.workdir = "/w";
	buf = wire_of(&p, &len);
	assert_true(len > strings_of(&p));
	header = len - strings_of(&p);

	/* any other magic */
	buf[0] ^= 0x20;
	expect_refused(buf, len, MALFORMED);
	buf[0] ^= 0x20;

	/* a string more or less than the header counts */
	for (size_t i = header; i < len; i++) {
		char was = buf[i];

		buf[i] = was ? '\0' : 'x';
		expect_refused(buf, len, MALFORMED);
		buf[i] = was;
	}

	/*
	 * A flipped header byte: refused, or (a setting, a limit, the mask)
	 * taken, never a crash or a leak. Magic and version always refused.
	 */
	for (size_t i = 0; i < header; i++) {
		buf[i] ^= (char)0xff;
		if (refused_or_taken(buf, len))
			refused++;
		else
			assert_true(i >= 2 * sizeof(uint32_t));
		buf[i] ^= (char)0xff;
	}
	print_message("%zu of %zu flipped header bytes refused\n", refused,
		      header);
	assert_true(refused >= 2 * sizeof(uint32_t));

	/* noise behind a valid magic and version */
	for (int round = 0; round < 2000; round++) {
		size_t n = 8 + (seed % (2 * len));

		for (size_t i = 8; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (char)(seed >> 16);
		}
		refused_or_taken(buf, n < len ? n : len);
	}
	free(buf);
}

static void test_wire_free(void **state)
{
	struct big_run r;
	struct rg_wire_plan w;
	struct rg_error err = { 0 };
	int fd;

	(void)state;
	big_run_init(&r);
	fd = encode(&r.plan);
	assert_int_equal(rg_wire_decode(fd, &w, &err), 0);
	close(fd);
	rg_wire_free(&w);
	assert_null(w.blob);
	assert_null(w.argv);
	assert_null(w.envp);
	assert_null(w.plan.file);
	/* twice is harmless; LeakSanitizer checks the rest at exit */
	rg_wire_free(&w);
	free(r.big);
}

/* the umask read back through a RUN, by the client's current means */
static mode_t umask_that_travels(mode_t set)
{
	struct big_run r;
	struct rg_wire_plan w;
	struct rg_error err = { 0 };
	mode_t got;
	int fd;

	umask(set);
	big_run_init(&r);
	fd = encode(&r.plan);
	assert_int_equal(rg_wire_decode(fd, &w, &err), 0);
	close(fd);
	got = w.caller.umask;
	rg_wire_free(&w);
	free(r.big);
	return got;
}

static void *nothing(void *arg)
{
	return arg;
}

/*
 * The caller's umask, read with umask() while it has one thread, and
 * from /proc/self/status once it had two (umask() would change it for
 * the other threads meanwhile): the same either way. Last: glibc
 * counts the process as multi-threaded from then on.
 */
static void test_umask_either_way(void **state)
{
	mode_t before = umask(0);
	pthread_t t;

	(void)state;
	assert_int_equal(umask_that_travels(027), 027);
	assert_int_equal(pthread_create(&t, NULL, nothing, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(umask_that_travels(077), 077);
	assert_int_equal(umask_that_travels(0), 0);
	umask(before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_run_flags),
		cmocka_unit_test(test_optional_strings),
		cmocka_unit_test(test_sealed),
		cmocka_unit_test(test_other_version),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbled),
		cmocka_unit_test(test_wire_free),
		cmocka_unit_test(test_umask_either_way),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
