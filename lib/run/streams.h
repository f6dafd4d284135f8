/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Forwarding one output stream of the command (a pipe) to its destination
 * with a byte limit: past the limit data is still read, counted and
 * dropped, so the command is never blocked or killed by it.
 */
#ifndef RG_STREAMS_H
#define RG_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include <runguard/runguard.h>

struct rg_stream {
	int pipe_fd; /* non-blocking read end; -1 once at EOF */
	int dest_fd;
	bool use_splice;   /* cleared for good when the kernel refuses */
	bool dest_gone;	   /* the reader of dest went away (EPIPE) */
	uint64_t limit;	   /* RG_UNLIMITED for none */
	uint64_t consumed; /* read from the pipe, dropped bytes included */
	uint64_t forwarded;
	const char *name; /* for messages */
};

void rg_stream_init(struct rg_stream *s, const char *name, int pipe_fd,
		    int dest_fd, uint64_t limit);

/*
 * Move what is available now. Returns 1 if bytes moved, 0 if nothing was
 * available, -1 on error. At EOF the pipe is closed (pipe_fd = -1).
 */
int rg_stream_pump(struct rg_stream *s, struct rg_error *err);

/* Pump until EOF or until timeout_ms passes without progress. */
int rg_stream_drain(struct rg_stream *s, int timeout_ms, struct rg_error *err);

/*
 * The same, but done once `until` bytes were read from the pipe, which
 * stays open: a writer that holds it after its last byte (keeper_relay.h).
 */
int rg_stream_drain_until(struct rg_stream *s, uint64_t until, int timeout_ms,
			  struct rg_error *err);

void rg_stream_close(struct rg_stream *s);

static inline bool rg_stream_truncated(const struct rg_stream *s)
{
	return s->consumed > s->forwarded;
}

#endif
