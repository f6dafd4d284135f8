/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver: the timing half of bench/run. Python plans and evaluates; this
 * program only spawns, waits and takes the clocks, so that an
 * interpreter's own spawn cost does not distort the floor.
 *
 * The plan comes on stdin, one item per line, fields separated by tabs:
 *
 *   workers N          number of worker threads (first line)
 *   cmd CONTENDER STDIN STDOUT STDERR META SELF ARGV0 ARG...
 *                      a command; commands are numbered from 0 in order.
 *                      The three files become fds 0-2 (STDOUT and STDERR
 *                      truncated), META ("-": none) is emptied before and
 *                      read after each call, SELF 1: parse the program's
 *                      "self wall_ns=N cpu_ns=N" line from STDOUT.
 *   block TAG ROUND SECONDS CMD...
 *                      worker i runs command CMD_i back-to-back until
 *                      SECONDS have passed (a throughput block)
 *   once TAG ROUND CMD...
 *                      worker i runs command CMD_i once; all start together
 *   pause MS           nobody runs anything for MS milliseconds
 *
 * Every step starts when all workers have finished the previous one. A
 * call is timed with CLOCK_MONOTONIC from just before posix_spawn() to
 * wait4()'s return; its CPU time is wait4()'s rusage (user + system). All
 * results are kept in memory and printed at the end as JSON lines, one per
 * call, so that no output competes with the calls.
 *
 * A command of a library contender ("library", or a name that starts
 * with "library-", such as "library-resident") is not spawned: its ARGV, a
 * pooled runguard command line, is run in-process through librunguard
 * (driver_library.c), timed from just before rg_run() to the meta file
 * being closed.
 *
 * Usage: driver < PLAN > RESULTS
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver_library.h"

extern char **environ;

#define MAX_WORKERS 64
#define MAX_META 8192
#define MAX_STDERR 1024
#define MAX_STDOUT 4096

struct command {
	const char *contender;
	const char *in, *out, *err, *meta;
	bool self;
	char **argv;
	struct lib_command *lib; /* the library contender, else NULL */
};

enum step_kind { STEP_BLOCK, STEP_ONCE, STEP_PAUSE };

struct step {
	enum step_kind kind;
	const char *tag;
	long round;
	long long ns; /* block length or pause */
	int ncmds;
	int cmds[MAX_WORKERS];
};

struct record {
	int step, cmd, worker;
	long long start, dur, cpu;
	int status;	 /* wait status */
	int spawn_errno; /* posix_spawn() or open() failed: no status */
	long long self_wall, self_cpu; /* -1: no self line */
	char *meta, *err;	       /* meta file, stderr head on failure */
};

struct worker {
	int id;
	pthread_t thread;
	struct record *recs;
	size_t n, cap;
};

static struct command *commands;
static int ncommands;
static struct step *steps;
static int nsteps;
static int nworkers = 1;
static pthread_barrier_t barrier;
static long long origin;
static char *plan_text; /* the fields of commands and steps */

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "driver: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p)
		die("%s", "out of memory");
	return p;
}

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the plan ---------------------------------------------------------- */

static char *read_all(int fd, size_t limit, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = xrealloc(NULL, cap + 1);
	ssize_t r;

	while (n < limit) {
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, (cap < limit ? cap : limit) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Split line at tabs in place; return the number of fields. */
static int split(char *line, char **fields, int max)
{
	int n = 0;

	while (line && n < max)
		fields[n++] = strsep(&line, "\t");
	if (line)
		die("too many fields in a plan line starting with `%s'",
		    fields[0]);
	return n;
}

static long long parse_num(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		die("not a number in the plan: `%s'", s);
	return v;
}

static void add_library_command(struct command *c)
{
	char why[1024];

	c->lib = lib_command_new(c->argv, why, sizeof(why));
	if (!c->lib)
		die("library command: %s", why);
}

/* "library" and "library-*": run in-process, not spawned */
static bool is_library_contender(const char *contender)
{
	return strcmp(contender, "library") == 0 ||
	       strncmp(contender, "library-", strlen("library-")) == 0;
}

static void add_command(char **f, int n)
{
	struct command *c;
	int i;

	if (n < 8)
		die("%s",
		    "cmd needs CONTENDER STDIN STDOUT STDERR META SELF ARGV0");
	commands = xrealloc(commands, (ncommands + 1) * sizeof(*commands));
	c = &commands[ncommands++];
	c->contender = f[1];
	c->in = f[2];
	c->out = f[3];
	c->err = f[4];
	c->meta = strcmp(f[5], "-") ? f[5] : NULL;
	c->self = strcmp(f[6], "1") == 0;
	c->argv = xrealloc(NULL, (n - 7 + 1) * sizeof(char *));
	for (i = 7; i < n; i++)
		c->argv[i - 7] = f[i];
	c->argv[n - 7] = NULL;
	c->lib = NULL;
	if (is_library_contender(c->contender))
		add_library_command(c);
}

static void add_step(enum step_kind kind, char **f, int n)
{
	int first = kind == STEP_BLOCK ? 4 : 3;
	struct step *s;
	int i;

	if (n < first + 1 || n - first > nworkers)
		die("bad number of commands in `%s' step", f[0]);
	steps = xrealloc(steps, (nsteps + 1) * sizeof(*steps));
	s = &steps[nsteps++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->tag = f[1];
	s->round = (long)parse_num(f[2]);
	if (kind == STEP_BLOCK)
		s->ns = (long long)(strtod(f[3], NULL) * 1e9);
	s->ncmds = n - first;
	for (i = 0; i < s->ncmds; i++) {
		s->cmds[i] = (int)parse_num(f[first + i]);
		if (s->cmds[i] < 0 || s->cmds[i] >= ncommands)
			die("no such command: %s", f[first + i]);
	}
}

static void add_pause(char **f, int n)
{
	struct step *s;

	if (n != 2)
		die("%s", "pause needs MS");
	steps = xrealloc(steps, (nsteps + 1) * sizeof(*steps));
	s = &steps[nsteps++];
	memset(s, 0, sizeof(*s));
	s->kind = STEP_PAUSE;
	s->tag = "pause";
	s->ns = parse_num(f[1]) * 1000000LL;
}

static void parse_line(char *line)
{
	char *f[256] = { NULL };
	int n;

	if (!*line)
		return;
	n = split(line, f, 256);
	if (strcmp(f[0], "workers") == 0 && n == 2 && !ncommands && !nsteps)
		nworkers = (int)parse_num(f[1]);
	else if (strcmp(f[0], "cmd") == 0)
		add_command(f, n);
	else if (strcmp(f[0], "block") == 0)
		add_step(STEP_BLOCK, f, n);
	else if (strcmp(f[0], "once") == 0)
		add_step(STEP_ONCE, f, n);
	else if (strcmp(f[0], "pause") == 0)
		add_pause(f, n);
	else
		die("unknown plan line `%s'", f[0]);
	if (nworkers < 1 || nworkers > MAX_WORKERS)
		die("%s", "workers must be 1..64");
}

static void read_plan(void)
{
	char *plan, *line;

	plan = plan_text = read_all(0, (size_t)-1, NULL);

	while ((line = strsep(&plan, "\n")))
		parse_line(line);
}

/* ---- one call ---------------------------------------------------------- */

static char *read_file(const char *path, size_t limit)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *text;

	if (fd < 0)
		return NULL;
	text = read_all(fd, limit, NULL);
	close(fd);
	return text;
}

static int open_redirects(const struct command *c, int fds[3])
{
	const int out_flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;

	fds[0] = open(c->in, O_RDONLY | O_CLOEXEC);
	fds[1] = open(c->out, out_flags, 0644);
	fds[2] = open(c->err, out_flags, 0644);
	if (fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0)
		return 0;
	return -1;
}

static void close_redirects(int fds[3])
{
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * A meta file left over from the previous call must not pass for this
 * one's. Removed, not emptied: DOMjudge gives every call a new test-case
 * directory, so runguard creates its meta file. Rewriting one costs more
 * on ext4 (a truncated file is flushed on close: 125 against 20 us).
 */
static int remove_meta(const struct command *c)
{
	if (!c->meta || unlink(c->meta) == 0 || errno == ENOENT)
		return 0;
	return -1;
}

/* Spawn, wait and time; returns 0 or an errno value. */
static int spawn_and_wait(const struct command *c, int fds[3], struct record *r)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	pid_t pid;
	int rc, i;

	posix_spawn_file_actions_init(&fa);
	for (i = 0; i < 3; i++)
		posix_spawn_file_actions_adddup2(&fa, fds[i], i);
	r->start = now();
	rc = posix_spawn(&pid, c->argv[0], &fa, NULL, c->argv, environ);
	if (rc == 0) {
		while (wait4(pid, &r->status, 0, &ru) < 0 && errno == EINTR)
			;
		r->dur = now() - r->start;
	}
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return rc;
	r->cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
		 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	return 0;
}

static void call_library(const struct command *c, int fds[3], struct record *r)
{
	struct lib_call call;

	r->start = now();
	lib_command_call(c->lib, fds[0], fds[1], fds[2], &call);
	r->dur = now() - r->start;
	r->status = call.status;
	r->cpu = call.cpu_ns;
}

static void parse_self(const struct command *c, struct record *r)
{
	char *text = read_file(c->out, MAX_STDOUT);
	char *line = text ? strstr(text, "self wall_ns=") : NULL;

	if (!line || sscanf(line, "self wall_ns=%lld cpu_ns=%lld",
			    &r->self_wall, &r->self_cpu) != 2)
		r->self_wall = r->self_cpu = -1;
	free(text);
}

/* What Python needs to judge the call, read after the clock stopped. */
static void collect(const struct command *c, struct record *r)
{
	if (c->meta)
		r->meta = read_file(c->meta, MAX_META);
	if (c->self)
		parse_self(c, r);
	if (r->spawn_errno || !WIFEXITED(r->status) || WEXITSTATUS(r->status))
		r->err = read_file(c->err, MAX_STDERR);
}

static struct record *new_record(struct worker *w)
{
	struct record *r;

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->recs = xrealloc(w->recs, w->cap * sizeof(*w->recs));
	}
	r = &w->recs[w->n++];
	memset(r, 0, sizeof(*r));
	r->self_wall = r->self_cpu = -1;
	return r;
}

static void run_call(struct worker *w, int step, int cmd)
{
	const struct command *c = &commands[cmd];
	struct record *r = new_record(w);
	int fds[3] = { -1, -1, -1 };

	r->step = step;
	r->cmd = cmd;
	r->worker = w->id;
	if (remove_meta(c) < 0 || open_redirects(c, fds) < 0) {
		r->spawn_errno = errno;
		r->start = now();
	} else if (c->lib) {
		call_library(c, fds, r);
	} else {
		r->spawn_errno = spawn_and_wait(c, fds, r);
	}
	close_redirects(fds);
	collect(c, r);
}

/* ---- workers ----------------------------------------------------------- */

static void sleep_ns(long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void run_step(struct worker *w, int i)
{
	const struct step *s = &steps[i];
	long long end;

	if (s->kind == STEP_PAUSE) {
		if (w->id == 0)
			sleep_ns(s->ns);
		return;
	}
	if (w->id >= s->ncmds)
		return;
	if (s->kind == STEP_ONCE) {
		run_call(w, i, s->cmds[w->id]);
		return;
	}
	end = now() + s->ns;
	do
		run_call(w, i, s->cmds[w->id]);
	while (now() < end);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < nsteps; i++) {
		pthread_barrier_wait(&barrier);
		run_step(w, i);
	}
	return NULL;
}

/* ---- output ------------------------------------------------------------ */

static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", stdout);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch); /* bytes, not UTF-8 */
		else
			putchar(ch);
	}
	putchar('"');
}

static void put_record(const struct record *r)
{
	const struct step *s = &steps[r->step];

	printf("{\"step\": %d, \"tag\": ", r->step);
	put_json_string(s->tag);
	printf(", \"round\": %ld, \"contender\": ", s->round);
	put_json_string(commands[r->cmd].contender);
	printf(", \"cmd\": %d, \"worker\": %d, \"start_ns\": %lld, "
	       "\"dur_ns\": %lld, \"cpu_ns\": %lld",
	       r->cmd, r->worker, r->start - origin, r->dur, r->cpu);
	if (r->spawn_errno) {
		fputs(", \"error\": ", stdout);
		put_json_string(strerror(r->spawn_errno));
	} else if (WIFEXITED(r->status)) {
		printf(", \"exit\": %d", WEXITSTATUS(r->status));
	} else {
		printf(", \"signal\": %d", WTERMSIG(r->status));
	}
	if (r->self_wall >= 0)
		printf(", \"self_wall_ns\": %lld, \"self_cpu_ns\": %lld",
		       r->self_wall, r->self_cpu);
	if (r->meta) {
		fputs(", \"meta\": ", stdout);
		put_json_string(r->meta);
	}
	if (r->err) {
		fputs(", \"stderr\": ", stdout);
		put_json_string(r->err);
	}
	fputs("}\n", stdout);
}

/* Everything, so that a leak checker sees no leak. */
static void free_all(struct worker *workers)
{
	int i;

	for (i = 0; i < nworkers; i++) {
		for (size_t k = 0; k < workers[i].n; k++) {
			free(workers[i].recs[k].meta);
			free(workers[i].recs[k].err);
		}
		free(workers[i].recs);
	}
	free(workers);
	for (i = 0; i < ncommands; i++) {
		lib_command_free(commands[i].lib);
		free(commands[i].argv);
	}
	free(commands);
	free(steps);
	free(plan_text);
}

int main(int argc, char **argv)
{
	struct worker *workers;
	int i;

	(void)argv;
	if (argc != 1)
		die("%s", "usage: driver < PLAN > RESULTS");
	read_plan();
	workers = xrealloc(NULL, nworkers * sizeof(*workers));
	memset(workers, 0, nworkers * sizeof(*workers));
	pthread_barrier_init(&barrier, NULL, (unsigned)nworkers);
	origin = now();
	for (i = 0; i < nworkers; i++) {
		workers[i].id = i;
		if (pthread_create(&workers[i].thread, NULL, worker_main,
				   &workers[i]))
			die("%s", "cannot create a worker thread");
	}
	for (i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
	for (i = 0; i < nworkers; i++)
		for (size_t k = 0; k < workers[i].n; k++)
			put_record(&workers[i].recs[k]);
	pthread_barrier_destroy(&barrier);
	free_all(workers);
	return fflush(stdout) ? 1 : 0;
}
