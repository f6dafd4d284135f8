/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cli_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void rg_cli_log_init(struct rg_cli_log *log, const char *progname, int fd)
{
	log->progname = progname;
	log->name = progname;
	clock_gettime(CLOCK_MONOTONIC, &log->start);
	log->verbose = false;
	log->quiet = false;
	log->shared = false;
	log->fd = fd;
}

static void choose_name(struct rg_cli_log *log)
{
	const char *slash = strrchr(log->progname, '/');

	log->name = log->progname;
	if (log->shared && !log->verbose && slash && slash[1])
		log->name = slash + 1;
}

void rg_cli_log_set_mode(struct rg_cli_log *log, bool verbose, bool quiet)
{
	log->verbose = verbose;
	log->quiet = quiet;
	choose_name(log);
}

void rg_cli_log_set_shared(struct rg_cli_log *log, bool shared)
{
	log->shared = shared;
	choose_name(log);
}

enum rg_log_level rg_cli_log_level(const struct rg_cli_log *log)
{
	if (log->quiet)
		return RG_LOG_ERROR;
	return log->verbose ? RG_LOG_DEBUG : RG_LOG_WARNING;
}

static double elapsed(const struct rg_cli_log *log)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - log->start.tv_sec) +
	       (double)(now.tv_nsec - log->start.tv_nsec) * 1e-9;
}

static int format_line(const struct rg_cli_log *log, enum rg_log_level level,
		       const char *message, char *buf, size_t len)
{
	switch (level) {
	case RG_LOG_ERROR:
		return snprintf(buf, len, "%s: %s\n", log->name, message);
	case RG_LOG_WARNING:
		return snprintf(buf, len, "%s: warning: %s\n", log->name,
				message);
	default:
		return snprintf(buf, len, "%s [%d @ %10.6f]: verbose: %s\n",
				log->name, (int)getpid(), elapsed(log),
				message);
	}
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

void rg_cli_log_message(void *userdata, enum rg_log_level level,
			const char *message)
{
	const struct rg_cli_log *log = userdata;
	char buf[2048];
	int n;
	int saved_errno = errno;

	if (level > rg_cli_log_level(log))
		return;
	n = format_line(log, level, message, buf, sizeof(buf));
	if (n > 0) {
		/* Keep the newline when the line had to be cut. */
		if ((size_t)n >= sizeof(buf)) {
			n = sizeof(buf) - 1;
			buf[n - 1] = '\n';
		}
		write_all(log->fd, buf, (size_t)n);
	}
	errno = saved_errno;
}
