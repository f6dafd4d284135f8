/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runguard command line, parsed as DOMjudge's runguard parses it:
 * getopt_long with RG_CLI_SHORT_OPTIONS and DOMjudge's long options, plus
 * our --seccomp=on|off, --allow-core-dumps, the --pool-* options and
 * --check [--json].
 */
#ifndef RG_CLI_OPTIONS_H
#define RG_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <runguard/runguard.h>

enum rg_cli_pool_command {
	RG_CLI_POOL_NONE = 0,
	RG_CLI_POOL_CREATE,
	RG_CLI_POOL_SHOW,
	RG_CLI_POOL_DESTROY,
	RG_CLI_POOL_DESTROY_FORCE,
	RG_CLI_POOL_DESTROY_WAIT,
	RG_CLI_POOL_PREWARM, /* the paths are in command */
};

/*
 * Everything the command line said. Strings point into argv, except env
 * (owned; free with rg_cli_options_free()).
 */
struct rg_cli_options {
	const char *root;    /* -r */
	const char *workdir; /* -d */

	const char *user; /* -u as given, NULL if absent */
	uid_t uid;
	/* -g as given; NULL both without -g and when defaulted from -u */
	const char *group;
	bool has_gid; /* -g, or the -u default group */
	gid_t gid;

	bool has_wall_limit; /* -t */
	double wall_soft, wall_hard;
	bool has_cpu_limit; /* -C */
	double cpu_soft, cpu_hard;
	enum rg_time_type time_used; /* the last of -t / -C; CPU */

	bool has_memory_limit; /* -m; RG_UNLIMITED on overflow */
	uint64_t memory_bytes;
	bool has_file_limit; /* -f; RG_UNLIMITED on overflow */
	uint64_t file_bytes;
	bool has_process_limit; /* -p */
	uint64_t processes;
	const char *cpuset; /* -P; "" counts as absent */

	bool no_core;	       /* -c */
	bool allow_core_dumps; /* --allow-core-dumps */

	const char *stdout_file; /* -o */
	const char *stderr_file; /* -e */
	bool has_stream_limit;	 /* -s; LONG_MAX on overflow */
	uint64_t stream_bytes;

	bool keep_environment; /* -E */
	char **env;	       /* every -V piece, in order */
	size_t env_len;

	const char *meta_file; /* -M */
	long notify_pid;       /* -U (strtol, unchecked), 0 */

	bool verbose;	     /* -v */
	bool quiet;	     /* -q (beats -v, as in 9.0) */
	bool syscall_filter; /* --seccomp, default on */

	long pool_size;			       /* --pool-size; -1 if absent */
	const char *pool_dir;		       /* --pool-dir */
	const char *pool_keeper;	       /* --pool-keeper (yes|no) */
	enum rg_cli_pool_command pool_command; /* --pool-create ... */
	bool json; /* --json: --pool-show, --check */
	/* --check: -u/-g that do not resolve leave uid/gid -1 */
	bool check;

	bool show_help;	   /* --help (beats --version) */
	bool show_version; /* --version */

	/* The command and its arguments: argv + optind; NULL-terminated. */
	char **command;
	int command_argc; /* 0: no command given */
};

/*
 * Parse argv. Re-entrant (resets getopt). Returns 0, or -1 with the
 * message (without the program name) in err; opts is then freed already.
 */
int rg_cli_parse(struct rg_cli_options *opts, int argc, char **argv,
		 struct rg_error *err);

void rg_cli_options_free(struct rg_cli_options *opts);

/* The long option table (terminated by a zero entry), for tests. */
const struct option *rg_cli_long_options(void);

#define RG_CLI_SHORT_OPTIONS "+r:u:g:d:t:C:m:f:p:P:co:e:s:EV:M:vqU:"

#endif
