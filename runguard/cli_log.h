/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CLI's log sink for the library, in DOMjudge 9.0's line formats. */
#ifndef RG_CLI_LOG_H
#define RG_CLI_LOG_H

#include <stdbool.h>
#include <time.h>

#include <runguard/runguard.h>

struct rg_cli_log {
	const char *progname;
	const char *name;      /* the name lines start with (see shared) */
	struct timespec start; /* CLOCK_MONOTONIC at program start */
	bool verbose;
	bool quiet;
	bool shared; /* fd is also the command's stderr (no -e) */
	int fd;	     /* where lines go: 2 */
};

void rg_cli_log_init(struct rg_cli_log *log, const char *progname, int fd);

/* Apply -v / -q: quiet wins whatever the order, as in DOMjudge 9.0. */
void rg_cli_log_set_mode(struct rg_cli_log *log, bool verbose, bool quiet);

/*
 * The command's stderr goes to fd as well (no -e): the lines land in the
 * command's stream, which DOMjudge counts against -s plus 100 bytes. Then,
 * unless verbose, they start with the last component of progname only.
 */
void rg_cli_log_set_shared(struct rg_cli_log *log, bool shared);

/* The max_level for rg_config_set_log(). */
enum rg_log_level rg_cli_log_level(const struct rg_cli_log *log);

/*
 * rg_log_fn: "<prog>: warning: <msg>", "<prog> [<pid> @ <s>]: verbose:
 * <msg>" for notices and debug, "<prog>: <msg>" for errors. One write()
 * per line, no stdio: it may run in a forked child.
 */
void rg_cli_log_message(void *userdata, enum rg_log_level level,
			const char *message);

#endif
