/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "run/streams.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <unistd.h>

#include "base/base.h"

/* a whole default pipe buffer per call */
#define CHUNK 65536

void rg_stream_init(struct rg_stream *s, const char *name, int pipe_fd,
		    int dest_fd, uint64_t limit)
{
	*s = (struct rg_stream){
		.pipe_fd = pipe_fd,
		.dest_fd = dest_fd,
		.use_splice = true,
		.limit = limit,
		.name = name,
	};
}

void rg_stream_close(struct rg_stream *s)
{
	if (s->pipe_fd >= 0)
		close(s->pipe_fd);
	s->pipe_fd = -1;
}

static size_t budget(const struct rg_stream *s)
{
	uint64_t left;

	if (s->dest_gone)
		return 0;
	if (s->limit == RG_UNLIMITED)
		return CHUNK;
	left = s->limit - s->forwarded;
	return left < CHUNK ? (size_t)left : CHUNK;
}

/* A full destination (a pipe to a slow reader): wait a little for room
 * instead of spinning on a readable source. */
static void wait_writable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	poll(&p, 1, 10);
}

static bool source_has_data(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* Returns 0, or -errno of the failed write (EPIPE included). */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			wait_writable(fd);
			continue;
		}
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Read up to len bytes and forward them unless discarding. Returns bytes
 * read, 0 at EOF or -errno (a failed write also counts as read: *write_rc). */
static ssize_t copy_chunk(struct rg_stream *s, size_t len, bool forward,
			  int *write_rc)
{
	char buf[CHUNK];
	ssize_t n = read(s->pipe_fd, buf, len);

	if (n < 0)
		return -errno;
	if (n > 0 && forward)
		*write_rc = write_all(s->dest_fd, buf, n);
	return n;
}

static ssize_t splice_chunk(struct rg_stream *s, size_t len)
{
	ssize_t n = splice(s->pipe_fd, NULL, s->dest_fd, NULL, len,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

	if (n >= 0)
		return n;
	if (errno == EAGAIN && source_has_data(s->pipe_fd))
		wait_writable(s->dest_fd);
	return -errno;
}

static ssize_t move_chunk(struct rg_stream *s, bool forward, size_t len,
			  int *write_rc)
{
	ssize_t n;

	if (forward && s->use_splice) {
		n = splice_chunk(s, len);
		if (n != -EINVAL && n != -ENOSYS)
			return n;
		/* O_APPEND, a tty, ...: copy from now on */
		s->use_splice = false;
	}
	return copy_chunk(s, forward ? len : CHUNK, forward, write_rc);
}

int rg_stream_pump(struct rg_stream *s, struct rg_error *err)
{
	size_t len;
	bool forward;
	int write_rc = 0;
	ssize_t n;

	if (s->pipe_fd < 0)
		return 0;
	len = budget(s);
	forward = len > 0;
	n = move_chunk(s, forward, len, &write_rc);
	if (n == -EINTR || n == -EAGAIN)
		return 0;
	if (n == -EPIPE || write_rc == -EPIPE) {
		/* our reader left (e.g. runpipe): end of stream, as DOMjudge */
		s->dest_gone = true;
		rg_stream_close(s);
		return 0;
	}
	if (write_rc < 0)
		return rg_fail(err, -write_rc, "writing the command's %s",
			       s->name);
	if (n < 0)
		return rg_fail(err, (int)-n, "copying the command's %s",
			       s->name);
	if (n == 0) {
		rg_stream_close(s);
		return 0;
	}
	s->consumed += n;
	if (forward)
		s->forwarded += n;
	return 1;
}

int rg_stream_drain(struct rg_stream *s, int timeout_ms, struct rg_error *err)
{
	return rg_stream_drain_until(s, UINT64_MAX, timeout_ms, err);
}

int rg_stream_drain_until(struct rg_stream *s, uint64_t until, int timeout_ms,
			  struct rg_error *err)
{
	while (s->pipe_fd >= 0 && s->consumed < until) {
		struct pollfd p = { .fd = s->pipe_fd, .events = POLLIN };
		int rc = poll(&p, 1, timeout_ms);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return rg_fail(err, errno,
				       "waiting for the command's %s", s->name);
		if (rc == 0)
			return 0; /* someone outside the run still holds it */
		if (rg_stream_pump(s, err) < 0)
			return -1;
	}
	return 0;
}
