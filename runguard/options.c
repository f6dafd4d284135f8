/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * DOMjudge-compatible option parsing. Semantics that callers depend on:
 * '+' stops at the command, prefixes of long options work, the last of a
 * repeated option wins (-V accumulates), -u/-g are resolved on the spot so
 * that a bad user is fatal even next to --help.
 */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <runguard/pool.h>

#include "base/base.h"
#include "parse.h"
#include "users.h"

/* Long-only options; values above any char. */
enum {
	OPT_HELP = 256,
	OPT_VERSION,
	OPT_SECCOMP,
	OPT_ALLOW_CORE_DUMPS,
	OPT_POOL_SIZE,
	OPT_POOL_DIR,
	OPT_POOL_KEEPER,
	OPT_POOL_CREATE,
	OPT_POOL_SHOW,
	OPT_POOL_DESTROY,
	OPT_POOL_PREWARM,
	OPT_JSON,
};

/*
 * Our additions must not steal a prefix: "se" and "a" start no DOMjudge
 * option ("s" alone was already ambiguous). tests/unit checks this.
 */
static const struct option long_options[] = {
	{ "root", required_argument, NULL, 'r' },
	{ "user", required_argument, NULL, 'u' },
	{ "group", required_argument, NULL, 'g' },
	{ "chdir", required_argument, NULL, 'd' },
	{ "walltime", required_argument, NULL, 't' },
	{ "cputime", required_argument, NULL, 'C' },
	{ "memsize", required_argument, NULL, 'm' },
	{ "filesize", required_argument, NULL, 'f' },
	{ "nproc", required_argument, NULL, 'p' },
	{ "cpuset", required_argument, NULL, 'P' },
	{ "no-core", no_argument, NULL, 'c' },
	{ "stdout", required_argument, NULL, 'o' },
	{ "stderr", required_argument, NULL, 'e' },
	{ "streamsize", required_argument, NULL, 's' },
	{ "environment", no_argument, NULL, 'E' },
	{ "variable", required_argument, NULL, 'V' },
	{ "outmeta", required_argument, NULL, 'M' },
	{ "runpipepid", required_argument, NULL, 'U' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "seccomp", required_argument, NULL, OPT_SECCOMP },
	{ "allow-core-dumps", no_argument, NULL, OPT_ALLOW_CORE_DUMPS },
	{ "pool-size", required_argument, NULL, OPT_POOL_SIZE },
	{ "pool-dir", required_argument, NULL, OPT_POOL_DIR },
	{ "pool-keeper", required_argument, NULL, OPT_POOL_KEEPER },
	{ "pool-create", no_argument, NULL, OPT_POOL_CREATE },
	{ "pool-show", no_argument, NULL, OPT_POOL_SHOW },
	{ "pool-destroy", optional_argument, NULL, OPT_POOL_DESTROY },
	{ "pool-prewarm", no_argument, NULL, OPT_POOL_PREWARM },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

const struct option *rg_cli_long_options(void)
{
	return long_options;
}

static void set_defaults(struct rg_cli_options *o)
{
	memset(o, 0, sizeof(*o));
	o->time_used = RG_TIME_CPU;
	o->syscall_filter = true;
	o->pool_size = -1;
}

void rg_cli_options_free(struct rg_cli_options *o)
{
	for (size_t i = 0; i < o->env_len; i++)
		free(o->env[i]);
	free(o->env);
	o->env = NULL;
	o->env_len = 0;
}

static int invalid(const char *what, const char *arg, struct rg_error *err)
{
	return rg_fail(err, 0, "invalid %s specified: `%s'", what, arg);
}

static int set_time(const char *what, const char *arg, bool *has, double *soft,
		    double *hard, struct rg_error *err)
{
	switch (rg_parse_time_pair(arg, soft, hard)) {
	case RG_PARSE_OK:
		*has = true;
		return 0;
	case RG_PARSE_HARD_BELOW_SOFT:
		return rg_fail(err, 0,
			       "invalid %s specified: `%s': hard limit is lower than soft limit",
			       what, arg);
	default:
		return invalid(what, arg, err);
	}
}

static int set_kb(const char *what, const char *arg, long min,
		  uint64_t on_overflow, bool *has, uint64_t *bytes,
		  struct rg_error *err)
{
	if (rg_parse_kb(arg, min, on_overflow, bytes))
		return invalid(what, arg, err);
	*has = true;
	return 0;
}

static int set_processes(struct rg_cli_options *o, const char *arg,
			 struct rg_error *err)
{
	long n;

	if (rg_parse_long(arg, 1, LONG_MAX, &n))
		return invalid("process limit", arg, err);
	o->has_process_limit = true;
	o->processes = (uint64_t)n;
	return 0;
}

static int push_env(struct rg_cli_options *o, const char *piece,
		    struct rg_error *err)
{
	char **grown;
	char *copy = strdup(piece);

	if (!copy)
		return rg_fail(err, errno, "copying `%s'", piece);
	grown = realloc(o->env, (o->env_len + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return rg_fail(err, errno, "copying `%s'", piece);
	}
	grown[o->env_len++] = copy;
	o->env = grown;
	return 0;
}

/* -V accumulates; each argument holds ';'-separated assignments. */
static int add_variables(struct rg_cli_options *o, const char *arg,
			 struct rg_error *err)
{
	char *copy = strdup(arg), *piece, *save = NULL;
	int ret = 0;

	if (!copy)
		return rg_fail(err, errno, "copying `%s'", arg);
	/* strtok semantics, as DOMjudge: empty pieces are dropped. */
	for (piece = strtok_r(copy, ";", &save); piece && ret == 0;
	     piece = strtok_r(NULL, ";", &save))
		ret = push_env(o, piece, err);
	free(copy);
	return ret;
}

/* --check reports a user or group that does not resolve as an item. */
static int set_user(struct rg_cli_options *o, const char *arg,
		    struct rg_error *err)
{
	if (rg_cli_resolve_user(arg, &o->uid, o->check ? NULL : err)) {
		if (!o->check)
			return -1;
		o->uid = (uid_t)-1;
	}
	o->user = arg;
	return 0;
}

static int set_group(struct rg_cli_options *o, const char *arg,
		     struct rg_error *err)
{
	if (rg_cli_resolve_group(arg, &o->gid, o->check ? NULL : err) &&
	    !o->check)
		return -1;
	o->group = arg;
	o->has_gid = true;
	return 0;
}

static int set_seccomp(struct rg_cli_options *o, const char *arg,
		       struct rg_error *err)
{
	if (rg_parse_on_off(arg, &o->syscall_filter))
		return rg_fail(err, 0,
			       "invalid argument `%s' for --seccomp (use on or off)",
			       arg);
	return 0;
}

static int set_pool_size(struct rg_cli_options *o, const char *arg,
			 struct rg_error *err)
{
	if (rg_parse_long(arg, 0, RG_POOL_SIZE_MAX, &o->pool_size))
		return rg_fail(err, 0,
			       "invalid pool size specified: `%s' "
			       "(0 to %d)",
			       arg, RG_POOL_SIZE_MAX);
	return 0;
}

/* The administrative commands: one per invocation. */
static int set_pool_command(struct rg_cli_options *o, int opt, const char *arg,
			    struct rg_error *err)
{
	enum rg_cli_pool_command cmd;

	switch (opt) {
	case OPT_POOL_CREATE:
		cmd = RG_CLI_POOL_CREATE;
		break;
	case OPT_POOL_SHOW:
		cmd = RG_CLI_POOL_SHOW;
		break;
	case OPT_POOL_PREWARM:
		cmd = RG_CLI_POOL_PREWARM;
		break;
	default:
		if (arg && strcmp(arg, "force") && strcmp(arg, "wait"))
			return rg_fail(err, 0,
				       "invalid argument `%s' for "
				       "--pool-destroy (`force' or `wait')",
				       arg);
		cmd = !arg		    ? RG_CLI_POOL_DESTROY :
		      !strcmp(arg, "force") ? RG_CLI_POOL_DESTROY_FORCE :
					      RG_CLI_POOL_DESTROY_WAIT;
	}
	if (o->pool_command && o->pool_command != cmd)
		return rg_fail(err, 0, "only one pool command at a time");
	o->pool_command = cmd;
	return 0;
}

/* Options with a numeric argument. */
static int handle_limit(struct rg_cli_options *o, int opt, const char *arg,
			struct rg_error *err)
{
	switch (opt) {
	case 't':
		/* time-used follows the last of -t / -C */
		o->time_used = RG_TIME_WALL;
		return set_time("walltime", arg, &o->has_wall_limit,
				&o->wall_soft, &o->wall_hard, err);
	case 'C':
		o->time_used = RG_TIME_CPU;
		return set_time("cputime", arg, &o->has_cpu_limit,
				&o->cpu_soft, &o->cpu_hard, err);
	case 'm':
		return set_kb("memory limit", arg, 1, RG_UNLIMITED,
			      &o->has_memory_limit, &o->memory_bytes, err);
	case 'f':
		return set_kb("filesize limit", arg, 1, RG_UNLIMITED,
			      &o->has_file_limit, &o->file_bytes, err);
	case 's':
		return set_kb("streamsize limit", arg, 0, LONG_MAX,
			      &o->has_stream_limit, &o->stream_bytes, err);
	case 'p':
		return set_processes(o, arg, err);
	case 'U':
		/* Unchecked, as DOMjudge; only a positive pid is used. */
		o->notify_pid = strtol(arg, NULL, 10);
		return 0;
	}
	return rg_fail(err, 0, "unexpected option code %d", opt);
}

/* Options that only record their argument (last one wins). */
static bool handle_string(struct rg_cli_options *o, int opt, char *arg)
{
	const char **slot;

	switch (opt) {
	case 'r':
		slot = &o->root;
		break;
	case 'd':
		slot = &o->workdir;
		break;
	case 'P':
		slot = &o->cpuset;
		break;
	case 'o':
		slot = &o->stdout_file;
		break;
	case 'e':
		slot = &o->stderr_file;
		break;
	case 'M':
		slot = &o->meta_file;
		break;
	default:
		return false;
	}
	*slot = arg;
	return true;
}

/* Options without an argument. */
static bool handle_flag(struct rg_cli_options *o, int opt)
{
	bool *flag;

	switch (opt) {
	case 'c':
		flag = &o->no_core;
		break;
	case 'E':
		flag = &o->keep_environment;
		break;
	case 'v':
		flag = &o->verbose;
		break;
	case 'q':
		flag = &o->quiet;
		break;
	case OPT_HELP:
		flag = &o->show_help;
		break;
	case OPT_VERSION:
		flag = &o->show_version;
		break;
	case OPT_ALLOW_CORE_DUMPS:
		flag = &o->allow_core_dumps;
		break;
	default:
		return false;
	}
	*flag = true;
	return true;
}

static int handle_option(struct rg_cli_options *o, int opt, char *arg,
			 struct rg_error *err)
{
	if (handle_string(o, opt, arg) || handle_flag(o, opt))
		return 0;
	switch (opt) {
	case 'u':
		return set_user(o, arg, err);
	case 'g':
		return set_group(o, arg, err);
	case 'V':
		return add_variables(o, arg, err);
	case OPT_SECCOMP:
		return set_seccomp(o, arg, err);
	case OPT_POOL_SIZE:
		return set_pool_size(o, arg, err);
	case OPT_POOL_DIR:
		o->pool_dir = arg;
		return 0;
	case OPT_POOL_KEEPER: /* yes|no, checked with the other settings */
		o->pool_keeper = arg;
		return 0;
	case OPT_JSON: /* checked once the command is known */
		o->json = true;
		return 0;
	case OPT_POOL_CREATE:
	case OPT_POOL_SHOW:
	case OPT_POOL_DESTROY:
	case OPT_POOL_PREWARM:
		return set_pool_command(o, opt, arg, err);
	}
	return handle_limit(o, opt, arg, err);
}

/*
 * getopt leaves optopt 0 for an unknown or ambiguous long option, and the
 * option's value (maybe not a char) for a long option with a bad argument,
 * so a long option is named by the word it came from.
 */
static int unknown_option(const char *word, struct rg_error *err)
{
	char c[8];

	if (word && word[0] == '-' && word[1] == '-' && word[2])
		return rg_fail(err, 0,
			       "unknown option or missing argument `%.*s'",
			       (int)strcspn(word, "="), word);
	/* A short option: DOMjudge 9.0 prints it as a character. */
	if (optopt > 0 && optopt < 0x80 && isprint(optopt))
		snprintf(c, sizeof(c), "%c", optopt);
	else
		snprintf(c, sizeof(c), "\\x%02x", optopt & 0xff);
	return rg_fail(err, 0, "unknown option or missing argument `%s'", c);
}

/*
 * --check is no entry of the long option table: DOMjudge's --ch (for
 * --chdir) would become ambiguous. Spelled in full, getopt reports it as
 * unknown, from the word it came from.
 */
static bool is_check(int opt, int word, int argc, char **argv)
{
	return opt == '?' && word < argc && !strcmp(argv[word], "--check");
}

static int parse_loop(struct rg_cli_options *o, int argc, char **argv,
		      struct rg_error *err)
{
	/* optind = 0 makes glibc re-initialise, so we can parse again. */
	optind = 0;
	opterr = 0;
	for (;;) {
		/* The word getopt looks at (mid-cluster it stays the same). */
		int word = optind ? optind : 1;
		int opt = getopt_long(argc, argv, RG_CLI_SHORT_OPTIONS,
				      long_options, NULL);

		if (opt == -1)
			return 0;
		if (is_check(opt, word, argc, argv))
			continue;
		if (opt == '?' || opt == ':')
			return unknown_option(word < argc ? argv[word] : NULL,
					      err);
		if (handle_option(o, opt, optarg, err))
			return -1;
	}
}

/*
 * Is --check among the options? Known before the real pass, so that -u
 * and -g (wherever they are) do not fail on what the check reports.
 */
static bool wants_check(int argc, char **argv)
{
	bool check = false;
	int opt, word, i;

	/* a run (no such word) pays one pass of strcmp, not a getopt pass */
	for (i = 1; i < argc && strcmp(argv[i], "--check"); i++)
		;
	if (i >= argc)
		return false;
	optind = 0;
	opterr = 0;
	do {
		word = optind ? optind : 1;
		opt = getopt_long(argc, argv, RG_CLI_SHORT_OPTIONS,
				  long_options, NULL);
		check |= is_check(opt, word, argc, argv);
	} while (opt != -1);
	return check;
}

/* What goes with --check and --json. */
static int check_combination(const struct rg_cli_options *o,
			     struct rg_error *err)
{
	if (o->check && o->pool_command)
		return rg_fail(err, 0, "--check goes without a pool command");
	if (o->check && o->command_argc)
		return rg_fail(err, 0, "--check takes no command");
	if (o->json && o->pool_command != RG_CLI_POOL_SHOW && !o->check)
		return rg_fail(err, 0,
			       "--json goes with --pool-show or --check only");
	return 0;
}

/* For _cleanup_: free what a failed parse set (NULL once parsed). */
static void free_unparsed(struct rg_cli_options **o)
{
	if (*o)
		rg_cli_options_free(*o);
}

int rg_cli_parse(struct rg_cli_options *o, int argc, char **argv,
		 struct rg_error *err)
{
	_cleanup_(free_unparsed) struct rg_cli_options *unparsed = o;
	int first;

	set_defaults(o);
	o->check = wants_check(argc, argv);
	if (parse_loop(o, argc, argv, err))
		return -1;
	first = optind < argc ? optind : argc;
	o->command = argv + first;
	o->command_argc = argc - first;
	if (check_combination(o, err))
		return -1;
	/* Never keep root's groups for a user: default to its namesake. */
	if (!o->check && o->user) {
		if (!o->group && rg_cli_default_group(o->user, &o->gid, err))
			return -1;
		o->has_gid = true;
	}
	unparsed = NULL;
	return 0;
}
