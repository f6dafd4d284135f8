/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library contenders of bench/run: a pooled runguard command line,
 * parsed once by the CLI's own parser, then run in-process with rg_run()
 * for every call, as a judge that links librunguard would run it.
 */
#ifndef RG_BENCH_DRIVER_LIBRARY_H
#define RG_BENCH_DRIVER_LIBRARY_H

#include <stddef.h>

struct lib_command;

/* What one call gives the driver, in the terms of a spawned runguard. */
struct lib_call {
	int status;	  /* a wait status: runguard's exit code */
	long long cpu_ns; /* the calling thread's CPU + the command's */
};

/*
 * argv is a runguard command line (argv[0] is ignored); it must outlive
 * the command. Returns NULL with a message in why.
 */
struct lib_command *lib_command_new(char **argv, char *why, size_t len);

/*
 * One run: stdin from in_fd, stdout to out_fd (unless the command line
 * names a file), the meta file written as runguard writes it, and on an
 * error its text to err_fd. Safe to call from several threads, each with
 * its own command.
 */
void lib_command_call(struct lib_command *lc, int in_fd, int out_fd,
		      int err_fd, struct lib_call *call);

void lib_command_free(struct lib_command *lc);

#endif
