/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* no byte for this long once the runner replied: it holds a pipe still */
#define FINISH_TIMEOUT_MS 10000

static bool is_file(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* One open file (dup'ed: 2>&1), else at least one inode. */
static bool same_file(int a, int b)
{
	struct stat sa, sb;
	long rc = syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, a, b);

	if (rc >= 0)
		return rc == 0;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int rg_relay_open(struct rg_relay *rl, const int dest[2], struct rg_error *err)
{
	static const char *const names[2] = { "stdout", "stderr" };

	for (int i = 0; i < 2; i++) {
		rg_stream_init(&rl->stream[i], names[i], -1, dest[i],
			       RG_UNLIMITED);
		rl->own_write[i] = -1;
		rl->runner_fd[i] = dest[i];
	}
	for (int i = 0; i < 2; i++) {
		int p[2];

		if (!is_file(dest[i]))
			continue;
		if (i == 1 && rl->stream[0].pipe_fd >= 0 &&
		    same_file(dest[0], dest[1])) {
			rl->runner_fd[1] = rl->own_write[0];
			continue;
		}
		if (pipe2(p, O_CLOEXEC) < 0 ||
		    fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
			int errnum = errno;

			rg_relay_close(rl);
			return rg_fail(err, errnum,
				       "a pipe for the command's output");
		}
		rl->stream[i].pipe_fd = p[0];
		rl->own_write[i] = rl->runner_fd[i] = p[1];
	}
	return 0;
}

bool rg_relay_is_ours(const struct rg_relay *rl, int i)
{
	return rl->runner_fd[i] >= 0 && (rl->runner_fd[i] == rl->own_write[0] ||
					 rl->runner_fd[i] == rl->own_write[1]);
}

/* What pipe i is to carry: both outputs where they share it (2>&1). */
static uint64_t expected(const struct rg_relay *rl, int i,
			 const uint64_t *forwarded)
{
	uint64_t n = 0;

	if (!forwarded)
		return UINT64_MAX; /* until the runner closes it */
	for (int j = 0; j < 2; j++)
		if (rl->runner_fd[j] == rl->runner_fd[i])
			n += forwarded[j];
	return n;
}

void rg_relay_sent(struct rg_relay *rl)
{
	for (int i = 0; i < 2; i++)
		rg_close_fd(&rl->own_write[i]);
}

void rg_relay_poll_fds(const struct rg_relay *rl, struct pollfd p[2])
{
	for (int i = 0; i < 2; i++)
		p[i] = (struct pollfd){ .fd = rl->stream[i].pipe_fd,
					.events = POLLIN };
}

/*
 * The stream forwards as the runner's own does (splice, a copy where the
 * file refuses it); past a failed write it drops what comes, so that the
 * runner never waits for us.
 */
int rg_relay_pump(struct rg_relay *rl, int i, struct rg_error *err)
{
	if (rg_stream_pump(&rl->stream[i], err) >= 0)
		return 0;
	rl->stream[i].dest_gone = true;
	return -1;
}

int rg_relay_finish(struct rg_relay *rl, const uint64_t *forwarded,
		    struct rg_error *err)
{
	struct rg_error pump_err;
	int rc = 0;

	for (int i = 0; i < 2; i++) {
		struct rg_stream *s = &rl->stream[i];
		uint64_t until = expected(rl, i, forwarded);

		while (s->pipe_fd >= 0 && s->consumed < until) {
			if (rg_stream_drain_until(s, until, FINISH_TIMEOUT_MS,
						  &pump_err) == 0) {
				if (s->pipe_fd < 0 || s->consumed >= until)
					break;
				rg_relay_close(rl);
				return rg_fail(err, ETIMEDOUT,
					       "the command's output did "
					       "not end");
			}
			s->dest_gone = true; /* drop the rest */
			if (!rc) {
				*err = pump_err;
				rc = -1;
			}
		}
	}
	return rc;
}

void rg_relay_close(struct rg_relay *rl)
{
	for (int i = 0; i < 2; i++) {
		rg_stream_close(&rl->stream[i]);
		rg_close_fd(&rl->own_write[i]);
	}
}
