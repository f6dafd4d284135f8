/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The DOMjudge command line: every option in every spelling, and getopt's
 * corner cases the judge scripts (and runpipe) rely on. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"
#include "usage.h"

#define ARGV(...) ((char *[]){ "runguard", __VA_ARGS__, NULL })

static int count(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

static void parse_ok(struct rg_cli_options *o, char **argv)
{
	struct rg_error err = { 0 };

	if (rg_cli_parse(o, count(argv), argv, &err) != 0)
		fail_msg("parse failed: %s", err.message);
}

static void parse_fails(char **argv, const char *message)
{
	struct rg_cli_options o;
	struct rg_error err = { 0 };

	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), -1);
	assert_string_equal(err.message, message);
	/* on failure nothing is left to free */
	assert_null(o.env);
}

static void assert_command(const struct rg_cli_options *o, int argc,
			   const char *first)
{
	assert_int_equal(o->command_argc, argc);
	if (first)
		assert_string_equal(o->command[0], first);
	assert_null(o->command[argc]);
}

/* ---- every option, every spelling ---- */

struct form {
	char *args[4];
	void (*check)(const struct rg_cli_options *o);
};

static void check_root(const struct rg_cli_options *o)
{
	assert_string_equal(o->root, "/x");
}

static void check_user(const struct rg_cli_options *o)
{
	assert_string_equal(o->user, "daemon");
	assert_int_equal(o->uid, 1);
	assert_true(o->has_gid);
	assert_int_equal(o->gid, 1);
	assert_null(o->group);
}

static void check_group(const struct rg_cli_options *o)
{
	assert_null(o->user);
	assert_string_equal(o->group, "daemon");
	assert_true(o->has_gid);
	assert_int_equal(o->gid, 1);
}

static void check_chdir(const struct rg_cli_options *o)
{
	assert_string_equal(o->workdir, "/w");
}

static void check_walltime(const struct rg_cli_options *o)
{
	assert_true(o->has_wall_limit);
	assert_true(o->wall_soft == 2 && o->wall_hard == 3);
	assert_int_equal(o->time_used, RG_TIME_WALL);
	assert_false(o->has_cpu_limit);
}

static void check_cputime(const struct rg_cli_options *o)
{
	assert_true(o->has_cpu_limit);
	assert_true(o->cpu_soft == 1.5 && o->cpu_hard == 1.5);
	assert_int_equal(o->time_used, RG_TIME_CPU);
	assert_false(o->has_wall_limit);
}

static void check_memsize(const struct rg_cli_options *o)
{
	assert_true(o->has_memory_limit);
	assert_true(o->memory_bytes == 1024000);
}

static void check_filesize(const struct rg_cli_options *o)
{
	assert_true(o->has_file_limit);
	assert_true(o->file_bytes == 10240);
}

static void check_nproc(const struct rg_cli_options *o)
{
	assert_true(o->has_process_limit);
	assert_true(o->processes == 7);
}

static void check_cpuset(const struct rg_cli_options *o)
{
	assert_string_equal(o->cpuset, "0,2-3");
}

static void check_no_core(const struct rg_cli_options *o)
{
	assert_true(o->no_core);
	assert_false(o->allow_core_dumps);
}

static void check_stdout(const struct rg_cli_options *o)
{
	assert_string_equal(o->stdout_file, "out");
	assert_null(o->stderr_file);
}

static void check_stderr(const struct rg_cli_options *o)
{
	assert_string_equal(o->stderr_file, "err");
	assert_null(o->stdout_file);
}

static void check_streamsize(const struct rg_cli_options *o)
{
	assert_true(o->has_stream_limit);
	assert_true(o->stream_bytes == 0);
}

static void check_environment(const struct rg_cli_options *o)
{
	assert_true(o->keep_environment);
}

static void check_variable(const struct rg_cli_options *o)
{
	assert_int_equal(o->env_len, 1);
	assert_string_equal(o->env[0], "A=1");
}

static void check_outmeta(const struct rg_cli_options *o)
{
	assert_string_equal(o->meta_file, "meta");
}

static void check_runpipepid(const struct rg_cli_options *o)
{
	assert_int_equal(o->notify_pid, 42);
}

static void check_verbose(const struct rg_cli_options *o)
{
	assert_true(o->verbose);
	assert_false(o->quiet);
}

static void check_quiet(const struct rg_cli_options *o)
{
	assert_true(o->quiet);
	assert_false(o->verbose);
}

static void check_help(const struct rg_cli_options *o)
{
	assert_true(o->show_help);
	assert_false(o->show_version);
}

static void check_version(const struct rg_cli_options *o)
{
	assert_true(o->show_version);
	assert_false(o->show_help);
}

static void check_seccomp_off(const struct rg_cli_options *o)
{
	assert_false(o->syscall_filter);
}

static void check_allow_core(const struct rg_cli_options *o)
{
	assert_true(o->allow_core_dumps);
	assert_false(o->no_core);
}

static const struct form forms[] = {
	{ { "-r", "/x" }, check_root },
	{ { "-r/x" }, check_root },
	{ { "--root", "/x" }, check_root },
	{ { "--root=/x" }, check_root },
	{ { "--ro=/x" }, check_root },
	{ { "--roo", "/x" }, check_root },
	{ { "-u", "daemon" }, check_user },
	{ { "-udaemon" }, check_user },
	{ { "--user", "daemon" }, check_user },
	{ { "--user=daemon" }, check_user },
	{ { "--u=daemon" }, check_user },
	{ { "-g", "daemon" }, check_group },
	{ { "-gdaemon" }, check_group },
	{ { "--group=daemon" }, check_group },
	{ { "--gr", "daemon" }, check_group },
	{ { "--g=daemon" }, check_group },
	{ { "-d", "/w" }, check_chdir },
	{ { "-d/w" }, check_chdir },
	{ { "--chdir=/w" }, check_chdir },
	{ { "--ch", "/w" }, check_chdir },
	{ { "-t", "2:3" }, check_walltime },
	{ { "-t2:3" }, check_walltime },
	{ { "--walltime=2:3" }, check_walltime },
	{ { "--walltime", "2:3" }, check_walltime },
	{ { "--w=2:3" }, check_walltime },
	{ { "--wall", "2:3" }, check_walltime },
	{ { "-C", "1.5" }, check_cputime },
	{ { "-C1.5" }, check_cputime },
	{ { "--cputime=1.5" }, check_cputime },
	{ { "--cputime", "1.5" }, check_cputime },
	{ { "--cput", "1.5" }, check_cputime },
	{ { "-m", "1000" }, check_memsize },
	{ { "-m1000" }, check_memsize },
	{ { "--memsize=1000" }, check_memsize },
	{ { "--m", "1000" }, check_memsize },
	{ { "-f", "10" }, check_filesize },
	{ { "-f10" }, check_filesize },
	{ { "--filesize=10" }, check_filesize },
	{ { "--f=10" }, check_filesize },
	{ { "-p", "7" }, check_nproc },
	{ { "-p7" }, check_nproc },
	{ { "--nproc=7" }, check_nproc },
	{ { "--np", "7" }, check_nproc },
	{ { "-P", "0,2-3" }, check_cpuset },
	{ { "-P0,2-3" }, check_cpuset },
	{ { "--cpuset=0,2-3" }, check_cpuset },
	{ { "--cpus", "0,2-3" }, check_cpuset },
	{ { "-c" }, check_no_core },
	{ { "--no-core" }, check_no_core },
	{ { "--no" }, check_no_core },
	{ { "--no-c" }, check_no_core },
	{ { "-o", "out" }, check_stdout },
	{ { "-oout" }, check_stdout },
	{ { "--stdout=out" }, check_stdout },
	{ { "--stdo", "out" }, check_stdout },
	{ { "-e", "err" }, check_stderr },
	{ { "-eerr" }, check_stderr },
	{ { "--stderr=err" }, check_stderr },
	{ { "--stde", "err" }, check_stderr },
	{ { "-s", "0" }, check_streamsize },
	{ { "-s0" }, check_streamsize },
	{ { "--streamsize=0" }, check_streamsize },
	{ { "--str", "0" }, check_streamsize },
	{ { "-E" }, check_environment },
	{ { "--environment" }, check_environment },
	{ { "--e" }, check_environment },
	{ { "--env" }, check_environment },
	{ { "-V", "A=1" }, check_variable },
	{ { "-VA=1" }, check_variable },
	{ { "--variable=A=1" }, check_variable },
	{ { "--va", "A=1" }, check_variable },
	{ { "-M", "meta" }, check_outmeta },
	{ { "-Mmeta" }, check_outmeta },
	{ { "--outmeta=meta" }, check_outmeta },
	{ { "--o", "meta" }, check_outmeta },
	{ { "-U", "42" }, check_runpipepid },
	{ { "-U42" }, check_runpipepid },
	{ { "--runpipepid=42" }, check_runpipepid },
	{ { "--ru", "42" }, check_runpipepid },
	{ { "-v" }, check_verbose },
	{ { "--verbose" }, check_verbose },
	{ { "--verb" }, check_verbose },
	{ { "-q" }, check_quiet },
	{ { "--quiet" }, check_quiet },
	{ { "--q" }, check_quiet },
	{ { "--help" }, check_help },
	{ { "--h" }, check_help },
	{ { "--version" }, check_version },
	{ { "--vers" }, check_version },
	{ { "--seccomp=off" }, check_seccomp_off },
	{ { "--seccomp", "off" }, check_seccomp_off },
	{ { "--se=off" }, check_seccomp_off },
	{ { "--secc", "off" }, check_seccomp_off },
	{ { "--allow-core-dumps" }, check_allow_core },
	{ { "--allow" }, check_allow_core },
	{ { "--a" }, check_allow_core },
};

static void test_every_form(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char *argv[8] = { "runguard" };
		struct rg_cli_options o;
		int argc = 1;

		for (int j = 0; j < 4 && forms[i].args[j]; j++)
			argv[argc++] = forms[i].args[j];
		print_message("form %s %s\n", argv[1], argc > 2 ? argv[2] : "");
		argv[argc++] = "cmd";
		argv[argc] = NULL;
		parse_ok(&o, argv);
		forms[i].check(&o);
		assert_command(&o, 1, "cmd");
		rg_cli_options_free(&o);
	}
}

static void test_defaults(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("cmd", "arg"));
	assert_command(&o, 2, "cmd");
	assert_string_equal(o.command[1], "arg");
	assert_null(o.root);
	assert_null(o.user);
	assert_false(o.has_gid);
	assert_false(o.has_wall_limit || o.has_cpu_limit);
	assert_int_equal(o.time_used, RG_TIME_CPU);
	assert_false(o.has_memory_limit || o.has_file_limit);
	assert_false(o.has_process_limit || o.has_stream_limit);
	assert_null(o.cpuset);
	assert_false(o.no_core || o.allow_core_dumps);
	assert_false(o.keep_environment);
	assert_int_equal(o.env_len, 0);
	assert_null(o.meta_file);
	assert_int_equal(o.notify_pid, 0);
	assert_false(o.verbose || o.quiet);
	assert_true(o.syscall_filter);
	assert_false(o.show_help || o.show_version);
	rg_cli_options_free(&o);
}

/* ---- prefixes: our additions must not break DOMjudge's ---- */

static const struct {
	const char *name;
	int has_arg;
} dj_options[] = {
	{ "root", 1 },	   { "user", 1 },	{ "group", 1 },
	{ "chdir", 1 },	   { "walltime", 1 },	{ "cputime", 1 },
	{ "memsize", 1 },  { "filesize", 1 },	{ "nproc", 1 },
	{ "cpuset", 1 },   { "no-core", 0 },	{ "stdout", 1 },
	{ "stderr", 1 },   { "streamsize", 1 }, { "environment", 0 },
	{ "variable", 1 }, { "outmeta", 1 },	{ "runpipepid", 1 },
	{ "verbose", 0 },  { "quiet", 0 },	{ "help", 0 },
	{ "version", 0 },
};

#define N_DJ (sizeof(dj_options) / sizeof(dj_options[0]))

/* Would getopt_long resolve --prefix among DOMjudge's options alone? */
static bool dj_unique(const char *prefix, size_t len)
{
	int matches = 0;

	for (size_t i = 0; i < N_DJ; i++) {
		if (strlen(dj_options[i].name) == len &&
		    strncmp(dj_options[i].name, prefix, len) == 0)
			return true;
		if (strncmp(dj_options[i].name, prefix, len) == 0)
			matches++;
	}
	return matches == 1;
}

/* The option our table resolves --word to, or NULL. */
static const char *resolve(const char *word, int has_arg)
{
	const struct option *table = rg_cli_long_options();
	char buf[64];
	char *argv[] = { "runguard", buf, "1", NULL };
	int index = -1, opt;

	snprintf(buf, sizeof(buf), "--%s", word);
	optind = 0;
	opterr = 0;
	opt = getopt_long(has_arg ? 3 : 2, argv, RG_CLI_SHORT_OPTIONS, table,
			  &index);
	if (opt == '?' || opt == -1 || index < 0)
		return NULL;
	return table[index].name;
}

static void test_dj_prefixes_survive(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_DJ; i++) {
		const char *name = dj_options[i].name;
		size_t shortest = 0;

		for (size_t len = 1; len <= strlen(name); len++) {
			char prefix[32];
			const char *got;

			if (!dj_unique(name, len))
				continue;
			if (!shortest)
				shortest = len;
			snprintf(prefix, sizeof(prefix), "%.*s", (int)len,
				 name);
			got = resolve(prefix, dj_options[i].has_arg);
			if (!got || strcmp(got, name) != 0)
				fail_msg("--%s resolves to %s, not %s", prefix,
					 got ? got : "(error)", name);
		}
		/* every DOMjudge name is unique at full length at least */
		assert_true(shortest > 0);
		print_message("--%.*s is the shortest prefix of --%s\n",
			      (int)shortest, name, name);
	}
}

static void test_our_table_matches_dj(void **state)
{
	const struct option *table = rg_cli_long_options();

	(void)state;
	for (size_t i = 0; i < N_DJ; i++) {
		assert_string_equal(table[i].name, dj_options[i].name);
		assert_int_equal(table[i].has_arg == required_argument,
				 dj_options[i].has_arg);
	}
	/*
	 * The additions come after and start with "se", "a", "po" and "j"
	 * (no DOMjudge long option starts with 'p' or 'j').
	 */
	size_t i = N_DJ + 2;

	assert_string_equal(table[N_DJ].name, "seccomp");
	assert_string_equal(table[N_DJ + 1].name, "allow-core-dumps");
	for (; table[i].name && strncmp(table[i].name, "pool-", 5) == 0; i++)
		;
	assert_string_equal(table[i].name, "json");
	assert_null(table[i + 1].name);
	for (size_t j = 0; j < N_DJ; j++)
		assert_true(dj_options[j].name[0] != 'p' &&
			    dj_options[j].name[0] != 'j');
}

/* ---- getopt behaviour ---- */

static void test_clusters(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-cEvq", "cmd"));
	assert_true(o.no_core && o.keep_environment && o.verbose && o.quiet);
	assert_command(&o, 1, "cmd");
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-ct5", "cmd"));
	assert_true(o.no_core);
	assert_true(o.has_wall_limit && o.wall_soft == 5);
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-cvM", "meta", "cmd"));
	assert_true(o.no_core && o.verbose);
	assert_string_equal(o.meta_file, "meta");
	assert_command(&o, 1, "cmd");
	rg_cli_options_free(&o);
}

static void test_plus_stops_at_command(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-c", "cmd", "-t", "5", "--help", "-x"));
	assert_true(o.no_core);
	assert_false(o.has_wall_limit || o.show_help);
	assert_command(&o, 5, "cmd");
	assert_string_equal(o.command[1], "-t");
	assert_string_equal(o.command[4], "-x");
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-", "-c"));
	assert_command(&o, 2, "-");
	assert_false(o.no_core);
	rg_cli_options_free(&o);
}

static void test_double_dash(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-v", "--", "-c", "x"));
	assert_true(o.verbose);
	assert_false(o.no_core);
	assert_command(&o, 2, "-c");
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("--", "--"));
	assert_command(&o, 1, "--");
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("--"));
	assert_command(&o, 0, NULL);
	rg_cli_options_free(&o);
}

static void test_arguments_that_look_like_options(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-o", "-c", "-V", "--foo", "-M", "--", "cmd"));
	assert_string_equal(o.stdout_file, "-c");
	assert_false(o.no_core);
	assert_int_equal(o.env_len, 1);
	assert_string_equal(o.env[0], "--foo");
	assert_string_equal(o.meta_file, "--");
	assert_command(&o, 1, "cmd");
	rg_cli_options_free(&o);
}

static void test_last_wins(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-t", "1", "--walltime=2:3", "-r", "a", "-r", "b",
			  "-m", "1", "-m", "2", "-s", "5", "-s", "0", "-P",
			  "1", "-P", "", "-M", "a", "-M", "b", "-U", "1", "-U",
			  "2", "--seccomp=off", "--seccomp=on", "-o", "x",
			  "-o", "y", "-u", "root", "-u", "daemon", "-p", "3",
			  "-p", "4", "cmd"));
	assert_true(o.wall_soft == 2 && o.wall_hard == 3);
	assert_string_equal(o.root, "b");
	assert_true(o.memory_bytes == 2048);
	assert_true(o.stream_bytes == 0);
	assert_string_equal(o.cpuset, "");
	assert_string_equal(o.meta_file, "b");
	assert_int_equal(o.notify_pid, 2);
	assert_true(o.syscall_filter);
	assert_string_equal(o.stdout_file, "y");
	assert_int_equal(o.uid, 1);
	assert_int_equal(o.gid, 1);
	assert_true(o.processes == 4);
	rg_cli_options_free(&o);
}

static void test_variables_accumulate(void **state)
{
	static const char *const want[] = { "A=1", "B=2",   "C=3",
					    "D",   "E=x=y", "A=4" };
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-V", "A=1;B=2", "-c", "--variable=C=3", "-VD",
			  "--va", ";;E=x=y;;", "-V", ";", "-V", "A=4", "cmd"));
	assert_int_equal(o.env_len, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(o.env[i], want[i]);
	rg_cli_options_free(&o);
}

static void test_runpipepid_anywhere(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-r", "/x", "--nproc=1", "-U", "99", "-t", "1", "--",
			  "prog"));
	assert_int_equal(o.notify_pid, 99);
	assert_command(&o, 1, "prog");
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-c", "-v", "--outmeta=m", "--runpipepid=7", "p"));
	assert_int_equal(o.notify_pid, 7);
	rg_cli_options_free(&o);

	/* unchecked, as DOMjudge: junk is 0, i.e. no notification */
	parse_ok(&o, ARGV("-U", "abc", "p"));
	assert_int_equal(o.notify_pid, 0);
	rg_cli_options_free(&o);

	/* after the command it belongs to the command (HEAD runpipe bug) */
	parse_ok(&o, ARGV("--", "p", "-U", "5"));
	assert_int_equal(o.notify_pid, 0);
	assert_command(&o, 3, "p");
	rg_cli_options_free(&o);
}

static void test_time_used(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-t", "1", "-C", "2", "c"));
	assert_int_equal(o.time_used, RG_TIME_CPU);
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("-C", "2", "-t", "1", "c"));
	assert_int_equal(o.time_used, RG_TIME_WALL);
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("-t", "1", "c"));
	assert_int_equal(o.time_used, RG_TIME_WALL);
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("-C", "1", "-t", "1", "-C", "2", "c"));
	assert_int_equal(o.time_used, RG_TIME_CPU);
	assert_true(o.has_wall_limit && o.has_cpu_limit);
	rg_cli_options_free(&o);
	/* the judgedaemon's order */
	parse_ok(&o, ARGV("--walltime=1.2:2.4", "--cputime=1:1.5", "c"));
	assert_int_equal(o.time_used, RG_TIME_CPU);
	assert_true(o.wall_soft == 1.2 && o.wall_hard == 2.4);
	assert_true(o.cpu_soft == 1 && o.cpu_hard == 1.5);
	rg_cli_options_free(&o);
}

static void test_time_errors(void **state)
{
	(void)state;
	parse_fails(ARGV("-t", "0", "c"), "invalid walltime specified: `0'");
	parse_fails(ARGV("--cputime=2:1", "c"),
		    "invalid cputime specified: `2:1': hard limit is lower than soft limit");
	parse_fails(ARGV("-t", "1:", "c"), "invalid walltime specified: `1:'");
	parse_fails(ARGV("-C", "nan", "c"), "invalid cputime specified: `nan'");
	parse_fails(ARGV("-C", "inf", "c"), "invalid cputime specified: `inf'");
	parse_fails(ARGV("-t", "1s", "c"), "invalid walltime specified: `1s'");
	parse_fails(ARGV("-t", "-1", "c"), "invalid walltime specified: `-1'");
}

static void test_sizes(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-m", "18014398509481983", "-f", "18014398509481984",
			  "-s", "18014398509481984", "c"));
	assert_true(o.memory_bytes == 18014398509481983ULL * 1024);
	assert_true(o.file_bytes == RG_UNLIMITED);
	assert_true(o.stream_bytes == LONG_MAX);
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-m", "9223372036854775807", "-s",
			  "9223372036854775807", "c"));
	assert_true(o.has_memory_limit && o.memory_bytes == RG_UNLIMITED);
	assert_true(o.stream_bytes == LONG_MAX);
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-p", "9223372036854775807", "c"));
	assert_true(o.processes == LONG_MAX);
	rg_cli_options_free(&o);
}

static void test_size_errors(void **state)
{
	(void)state;
	parse_fails(ARGV("-m", "0", "c"),
		    "invalid memory limit specified: `0'");
	parse_fails(ARGV("-m", "9223372036854775808", "c"),
		    "invalid memory limit specified: `9223372036854775808'");
	parse_fails(ARGV("-f", "0", "c"),
		    "invalid filesize limit specified: `0'");
	parse_fails(ARGV("-f", "1k", "c"),
		    "invalid filesize limit specified: `1k'");
	parse_fails(ARGV("-s", "-1", "c"),
		    "invalid streamsize limit specified: `-1'");
	parse_fails(ARGV("-s", "", "c"),
		    "invalid streamsize limit specified: `'");
	parse_fails(ARGV("-p", "0", "c"),
		    "invalid process limit specified: `0'");
	parse_fails(ARGV("--nproc=x", "c"),
		    "invalid process limit specified: `x'");
}

static void test_unknown_and_missing(void **state)
{
	(void)state;
	parse_fails(ARGV("-x", "c"), "unknown option or missing argument `x'");
	parse_fails(ARGV("-cx", "c"), "unknown option or missing argument `x'");
	parse_fails(ARGV("--verbose", "-cx", "c"),
		    "unknown option or missing argument `x'");
	parse_fails(ARGV("-c", "-t"), "unknown option or missing argument `t'");
	parse_fails(ARGV("-ct"), "unknown option or missing argument `t'");
	parse_fails(ARGV("-M"), "unknown option or missing argument `M'");
	parse_fails(ARGV("--foo", "c"),
		    "unknown option or missing argument `--foo'");
	parse_fails(ARGV("--foo=bar", "c"),
		    "unknown option or missing argument `--foo'");
	parse_fails(ARGV("--walltime"),
		    "unknown option or missing argument `--walltime'");
	parse_fails(ARGV("--help=1"),
		    "unknown option or missing argument `--help'");
	parse_fails(ARGV("--no-core=1", "c"),
		    "unknown option or missing argument `--no-core'");
	parse_fails(ARGV("--allow-core-dumps=1", "c"),
		    "unknown option or missing argument `--allow-core-dumps'");
	/* ambiguous prefixes */
	parse_fails(ARGV("--s=1", "c"),
		    "unknown option or missing argument `--s'");
	parse_fails(ARGV("--ver", "c"),
		    "unknown option or missing argument `--ver'");
	parse_fails(ARGV("--cpu=1", "c"),
		    "unknown option or missing argument `--cpu'");
	parse_fails(ARGV("-\x01", "c"),
		    "unknown option or missing argument `\\x01'");
	parse_fails(ARGV("-\xe9", "c"),
		    "unknown option or missing argument `\\xe9'");
}

static void test_seccomp_errors(void **state)
{
	(void)state;
	parse_fails(ARGV("--seccomp=maybe", "c"),
		    "invalid argument `maybe' for --seccomp (use on or off)");
	parse_fails(ARGV("--seccomp"),
		    "unknown option or missing argument `--seccomp'");
}

static void test_help_version(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("--help"));
	assert_true(o.show_help);
	assert_command(&o, 0, NULL);
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("--version", "--help"));
	assert_true(o.show_help && o.show_version);
	rg_cli_options_free(&o);

	/* acted on after the loop: a later fatal error still wins */
	parse_fails(ARGV("--help", "-t", "0"),
		    "invalid walltime specified: `0'");
	parse_fails(ARGV("--version", "-x"),
		    "unknown option or missing argument `x'");
	parse_fails(ARGV("--help", "-u", "no-such-user-xyz"),
		    "invalid username or ID specified: `no-such-user-xyz'");
	parse_fails(ARGV("-g", "no-such-group-xyz", "--version"),
		    "invalid groupname or ID specified: `no-such-group-xyz'");
}

/*
 * "--NAME" followed by what its argument needs: "=" (required), "[="
 * (optional), a blank or the end of the line (none), so that a longer
 * option with the same beginning does not count.
 */
static bool help_names(const char *help, const struct option *opt)
{
	char needle[64];
	size_t len = (size_t)snprintf(needle, sizeof(needle), "--%s",
				      opt->name);
	const char *pos;

	for (pos = strstr(help, needle); pos; pos = strstr(pos + 1, needle)) {
		const char *after = pos + len;

		if (opt->has_arg == required_argument && *after == '=')
			return true;
		if (opt->has_arg == optional_argument &&
		    !strncmp(after, "[=", 2))
			return true;
		if (opt->has_arg == no_argument &&
		    (*after == ' ' || *after == '\n'))
			return true;
	}
	return false;
}

static void test_help_names_every_long_option(void **state)
{
	const struct option *opt;
	char *help = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&help, &len);

	(void)state;
	assert_non_null(out);
	assert_int_equal(rg_cli_print_help(out, "runguard"), 0);
	fclose(out);
	for (opt = rg_cli_long_options(); opt->name; opt++)
		if (!help_names(help, opt))
			fail_msg("--help does not document --%s", opt->name);
	free(help);
}

static void test_help_after_missing_default_group(void **state)
{
	struct rg_cli_options o;
	struct rg_error err = { 0 };
	char **argv = ARGV("-u", "nobody", "--help");

	(void)state;
	assert_int_equal(rg_cli_parse(&o, count(argv), argv, &err), -1);
	assert_non_null(strstr(err.message, "no group named `nobody'"));
}

/* --json is for --pool-show alone: anything else would ignore it */
static void test_json_only_with_pool_show(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("--pool-show", "--json"));
	assert_true(o.json);
	assert_int_equal(o.pool_command, RG_CLI_POOL_SHOW);
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("--pool-show"));
	assert_false(o.json);
	rg_cli_options_free(&o);
	parse_fails(ARGV("--json"),
		    "--json goes with --pool-show or --check only");
	parse_fails(ARGV("--json", "--pool-create"),
		    "--json goes with --pool-show or --check only");
	parse_fails(ARGV("--json", "true"),
		    "--json goes with --pool-show or --check only");
}

/*
 * --check takes the run's settings, no command and no pool command; a -u
 * or -g that does not resolve is the check's to report, wherever --check
 * stands.
 */
static void test_check(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("--check"));
	assert_true(o.check);
	assert_false(o.json);
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("--check", "--json", "-P", "1"));
	assert_true(o.check);
	assert_true(o.json);
	assert_string_equal(o.cpuset, "1");
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("-u", "rg-no-such-user", "--check"));
	assert_string_equal(o.user, "rg-no-such-user");
	assert_int_equal(o.uid, (uid_t)-1);
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("--check", "-u", "root", "-g", "rg-no-such-group"));
	assert_int_equal(o.uid, 0);
	rg_cli_options_free(&o);
	parse_fails(ARGV("-u", "rg-no-such-user"),
		    "invalid username or ID specified: `rg-no-such-user'");
	parse_fails(ARGV("--check", "--pool-show"),
		    "--check goes without a pool command");
	parse_fails(ARGV("--check", "true"), "--check takes no command");
}

static void test_no_command(void **state)
{
	struct rg_cli_options o;
	char *empty[] = { NULL };

	(void)state;
	parse_ok(&o, ARGV("-c"));
	assert_command(&o, 0, NULL);
	rg_cli_options_free(&o);

	parse_ok(&o, (char *[]){ "runguard", NULL });
	assert_command(&o, 0, NULL);
	rg_cli_options_free(&o);

	assert_int_equal(rg_cli_parse(&o, 0, empty, NULL), 0);
	assert_command(&o, 0, NULL);
	rg_cli_options_free(&o);
}

static void test_users_and_groups(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-u", "root", "c"));
	assert_int_equal(o.uid, 0);
	assert_true(o.has_gid);
	assert_int_equal(o.gid, 0);
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-u", "nobody", "-g", "nogroup", "c"));
	assert_int_equal(o.uid, 65534);
	assert_int_equal(o.gid, 65534);
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-g", "nogroup", "-u", "nobody", "c"));
	assert_int_equal(o.uid, 65534);
	assert_int_equal(o.gid, 65534);
	assert_string_equal(o.group, "nogroup");
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("--user=1", "--group=1", "c"));
	assert_int_equal(o.uid, 1);
	assert_int_equal(o.gid, 1);
	rg_cli_options_free(&o);

	parse_ok(&o, ARGV("-g", "4000", "c"));
	assert_null(o.user);
	assert_int_equal(o.gid, 4000);
	rg_cli_options_free(&o);

	/* DOMjudge's quirk: the default group is named like the -u string */
	parse_fails(ARGV("-u", "1", "c"),
		    "invalid groupname or ID specified: no group named `1' (the default group for user `1'); use --group");
	parse_fails(ARGV("-u", "-1", "c"),
		    "invalid username or ID specified: `-1'");
	parse_fails(ARGV("-u", "x y", "c"),
		    "username `x y' does not match the POSIX pattern");
	parse_fails(ARGV("-g", "-3", "c"),
		    "invalid groupname or ID specified: `-3'");
}

static void test_empty_cpuset_kept(void **state)
{
	struct rg_cli_options o;

	(void)state;
	parse_ok(&o, ARGV("-P", "", "c"));
	assert_string_equal(o.cpuset, "");
	rg_cli_options_free(&o);
}

static void test_reparse_after_error(void **state)
{
	struct rg_cli_options o;

	(void)state;
	/* fail in the middle of a cluster, then parse afresh */
	parse_fails(ARGV("-cxv", "c"),
		    "unknown option or missing argument `x'");
	parse_ok(&o, ARGV("-v", "c"));
	assert_true(o.verbose);
	assert_false(o.no_core);
	assert_command(&o, 1, "c");
	rg_cli_options_free(&o);
	parse_ok(&o, ARGV("-V", "A=1", "c"));
	assert_int_equal(o.env_len, 1);
	rg_cli_options_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_form),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_dj_prefixes_survive),
		cmocka_unit_test(test_our_table_matches_dj),
		cmocka_unit_test(test_clusters),
		cmocka_unit_test(test_plus_stops_at_command),
		cmocka_unit_test(test_double_dash),
		cmocka_unit_test(test_arguments_that_look_like_options),
		cmocka_unit_test(test_last_wins),
		cmocka_unit_test(test_variables_accumulate),
		cmocka_unit_test(test_runpipepid_anywhere),
		cmocka_unit_test(test_time_used),
		cmocka_unit_test(test_time_errors),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_size_errors),
		cmocka_unit_test(test_unknown_and_missing),
		cmocka_unit_test(test_seccomp_errors),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_help_names_every_long_option),
		cmocka_unit_test(test_help_after_missing_default_group),
		cmocka_unit_test(test_json_only_with_pool_show),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_no_command),
		cmocka_unit_test(test_users_and_groups),
		cmocka_unit_test(test_empty_cpuset_kept),
		cmocka_unit_test(test_reparse_after_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
