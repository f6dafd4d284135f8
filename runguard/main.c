/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runguard: a drop-in for DOMjudge's judgehost runguard on top of
 * librunguard. Exit status: the command's (128 + signal if killed), or 255
 * when runguard itself failed; then the meta file, if it was opened, holds
 * an internal-error key.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <runguard/meta.h>
#include <runguard/pool.h>
#include <runguard/runguard.h>

#include "check_command.h"
#include "config_map.h"
#include "base/base.h"
#include "cli_log.h"
#include "options.h"
#include "pool_admin.h"
#include "settings.h"
#include "rg-build-config.h"
#include "usage.h"
#include "users.h"

#define EXIT_INTERNAL 255

struct cli {
	const char *progname;
	const char *meta_path;
	FILE *meta;
	bool stdin_closed; /* we were started with fd 0 closed */
};

/* A bad command line: nothing is open yet, so there is no meta file. */
static void __attribute__((noreturn))
usage_error(const struct cli *cli, const struct rg_error *err)
{
	char text[sizeof(err->message) + 256];

	fprintf(stderr, "%s: %s\n", cli->progname,
		rg_error_format(err, text, sizeof(text)));
	fprintf(stderr, "Try `%s --help' for more information.\n",
		cli->progname);
	exit(EXIT_INTERNAL);
}

/* The meta file itself failed: report it, but write nothing more to it. */
static void __attribute__((noreturn)) meta_failed(struct cli *cli)
{
	fprintf(stderr, "%s: cannot write to file `%s': %s\n", cli->progname,
		cli->meta_path, strerror(errno ? errno : EIO));
	if (cli->meta)
		fclose(cli->meta);
	exit(EXIT_INTERNAL);
}

static void close_meta(struct cli *cli)
{
	FILE *meta = cli->meta;

	cli->meta = NULL;
	if (meta && fclose(meta) != 0)
		meta_failed(cli);
}

/*
 * Fatal error after the meta file was opened. A valid result (the child's
 * set-up failed, or the cleanup after a completed run) is reported after
 * internal-error, where DOMjudge's watchdog appends its keys to what its
 * child wrote; memory-method stays last, as in every layout with keys.
 */
static void __attribute__((noreturn))
fatal(struct cli *cli, const struct rg_error *err,
      const struct rg_result *result, const struct rg_meta_options *mo)
{
	char text[sizeof(err->message) + 256];
	char line[sizeof(text) + 256];

	snprintf(line, sizeof(line), "%s: %s", cli->progname,
		 rg_error_format(err, text, sizeof(text)));
	fprintf(stderr, "%s\n", line);
	if (cli->meta) {
		if (rg_meta_write_internal_error(cli->meta, line))
			meta_failed(cli);
		if (result && result->outcome != RG_OUTCOME_ERROR &&
		    rg_meta_write_result(cli->meta, result, mo))
			meta_failed(cli);
		close_meta(cli);
	}
	exit(EXIT_INTERNAL);
}

static void open_meta(struct cli *cli, const char *path)
{
	struct rg_error err;

	if (!path)
		return;
	cli->meta_path = path;
	cli->meta = fopen(path, "w");
	if (!cli->meta) {
		rg_fail(&err, errno, "cannot open `%s'", path);
		fatal(cli, &err, NULL, NULL);
	}
}

static struct rg_config *make_config(struct cli *cli,
				     const struct rg_cli_options *o,
				     const struct rg_cli_settings *s,
				     struct rg_cli_log *log)
{
	struct rg_error err = { 0 };
	struct rg_config *cfg;

	/* Checked before the chroot, against the host's user database. */
	if (o->user &&
	    rg_cli_check_valid_user(o->uid, o->user, RG_VALID_USERS, &err))
		fatal(cli, &err, NULL, NULL);
	cfg = rg_config_new(&err);
	if (!cfg)
		fatal(cli, &err, NULL, NULL);
	if (rg_cli_build_config(o, cfg, &err) ||
	    rg_config_set_pool(cfg, s->pool_dir, s->pool_size, &err) ||
	    rg_config_set_pool_v2_memory_peak(cfg, s->v2_memory_peak, &err)) {
		rg_config_free(cfg);
		fatal(cli, &err, NULL, NULL);
	}
	if (cli->stdin_closed &&
	    rg_config_set_input_fd(cfg, RG_INPUT_CLOSED, &err)) {
		rg_config_free(cfg);
		fatal(cli, &err, NULL, NULL);
	}
	rg_config_set_pool_favordynmods(cfg, s->favordynmods);
	rg_config_set_pool_keeper(cfg, s->keeper);
	rg_config_set_log(cfg, rg_cli_log_message, log, rg_cli_log_level(log));
	return cfg;
}

static int run(struct cli *cli, const struct rg_cli_options *o,
	       const struct rg_cli_settings *s, struct rg_cli_log *log)
{
	struct rg_result result = RG_RESULT_INIT;
	struct rg_meta_options mo;
	struct rg_error err = { 0 };
	struct rg_config *cfg;
	enum rg_outcome outcome;

	rg_cli_meta_options(o, &mo);
	cfg = make_config(cli, o, s, log);
	outcome = rg_run(cfg, &result, &err);
	rg_config_free(cfg);
	/* an exec failure is the submission's, reported on its stderr */
	if (outcome != RG_OUTCOME_COMPLETED && outcome != RG_OUTCOME_EXEC_FAILED)
		fatal(cli, &err, &result, &mo);
	if (cli->meta && rg_meta_write_result(cli->meta, &result, &mo))
		meta_failed(cli);
	close_meta(cli);
	return result.exit_code;
}

/*
 * Held from the start: during the run the library turns them into a clean
 * end of the run (meta file complete, nothing left behind); one that
 * arrives earlier aborts the run as soon as it starts.
 */
static void hold_termination_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * A closed fd 0, 1 or 2 gets /dev/null before we open anything. Otherwise
 * the meta file or one of our pipes takes its number: the command got the
 * meta file as its stdin and could write lines into it, and our copy of
 * its output would go there. A closed stdin stays closed for the command.
 * Returns whether fd 0 was closed.
 */
static bool hold_closed_stdio(void)
{
	bool stdin_closed = fcntl(STDIN_FILENO, F_GETFD) < 0;

	for (int fd = 0; fd <= 2; fd++) {
		int null;

		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		/* the lowest free number: this one */
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0 && null != fd)
			close(null);
	}
	return stdin_closed;
}

int main(int argc, char **argv)
{
	struct cli cli = { .progname = "runguard" };
	struct rg_error err = { 0 };
	struct rg_cli_settings settings;
	struct rg_cli_options opts;
	struct rg_cli_log log;
	int status;

	cli.stdin_closed = hold_closed_stdio();
	hold_termination_signals();
	if (argc > 0 && argv[0])
		cli.progname = argv[0];
	rg_cli_log_init(&log, cli.progname, STDERR_FILENO);
	if (rg_cli_parse(&opts, argc, argv, &err))
		usage_error(&cli, &err);
	status = rg_cli_print_info(stdout, cli.progname, opts.show_help,
				   opts.show_version);
	if (status <= 0) {
		rg_cli_options_free(&opts);
		return status ? EXIT_INTERNAL : 0;
	}
	rg_cli_log_set_mode(&log, opts.verbose, opts.quiet);
	rg_cli_log_set_shared(&log, !opts.stderr_file);
	if (opts.check) {
		status = rg_cli_check(&opts, cli.progname, stdout, stderr);
		rg_cli_options_free(&opts);
		return status;
	}
	if (opts.pool_command) {
		if (rg_cli_settings_load(&opts, &settings, &err))
			usage_error(&cli, &err);
		/* -v: creation, keepers, destroy and prewarm say each step */
		rg_set_log(rg_cli_log_message, &log, rg_cli_log_level(&log));
		status = rg_cli_pool_admin(&opts, &settings, cli.progname,
					   stdout, stderr);
		rg_cli_options_free(&opts);
		return status;
	}
	if (opts.command_argc == 0) {
		rg_fail(&err, 0, "no command specified");
		usage_error(&cli, &err);
	}
	open_meta(&cli, opts.meta_file);
	if (rg_cli_settings_load(&opts, &settings, &err))
		fatal(&cli, &err, NULL, NULL);
	status = run(&cli, &opts, &settings, &log);
	rg_cli_options_free(&opts);
	return status;
}
