/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A resident run's output into a regular file, written by the client, not
 * by the runner. A page of the page cache is charged to the memory cgroup
 * of the process that writes it, and the runner sits in the run's: a
 * program that printed 20 MB reported 20.9 MB of memory (0.5 MB per-run),
 * and the output counted towards its memory limit. So for a destination
 * that is a regular file the runner gets the write end of a pipe of ours,
 * and we copy what it forwards (its limit already applied) into the file.
 * Other destinations (pipes, /dev/null, a tty) go to the runner as they
 * are. docs/pool.md, "The run's output".
 */
#ifndef RG_KEEPER_RELAY_H
#define RG_KEEPER_RELAY_H

#include <poll.h>
#include <stdbool.h>

#include "base/base.h"
#include "run/run.h"

struct rg_relay {
	/* our pipe (pipe_fd, -1: none) into the caller's file, unlimited */
	struct rg_stream stream[2];
	int runner_fd[2]; /* what the runner forwards into */
	int own_write[2]; /* the pipes' write ends, or -1: closed once sent */
};

/*
 * dest: the command's stdout and stderr. Both the same open file (2>&1):
 * one pipe, so that the file gets the streams in the order the runner
 * forwarded them.
 */
int rg_relay_open(struct rg_relay *rl, const int dest[2], struct rg_error *err);

/*
 * Whether the runner's fd for output i (runner_fd[i]) is a pipe of ours,
 * before rg_relay_sent().
 */
bool rg_relay_is_ours(const struct rg_relay *rl, int i);

/* Once the runner has its ends: the pipes end when it closes them. */
void rg_relay_sent(struct rg_relay *rl);

/* The pipes to watch (POLLIN) into p[0..1]; fd -1 for none. */
void rg_relay_poll_fds(const struct rg_relay *rl, struct pollfd p[2]);

/*
 * Copy what pipe i holds now; 0, or -1 when the file cannot take it (err
 * says why; the rest of the stream is then read and dropped, so that the
 * runner never waits for us).
 */
int rg_relay_pump(struct rg_relay *rl, int i, struct rg_error *err);

/*
 * Everything the runner forwarded copied: forwarded[i] bytes into its fd
 * for output i, as its reply says (it keeps its ends until it exits); or,
 * with forwarded NULL (no reply), all until it closed them.
 */
int rg_relay_finish(struct rg_relay *rl, const uint64_t *forwarded,
		    struct rg_error *err);

void rg_relay_close(struct rg_relay *rl);

#endif
