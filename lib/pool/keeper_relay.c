/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a whole default pipe buffer per call */
#define CHUNK 65536
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
	for (int i = 0; i < 2; i++) {
		rl->read_fd[i] = rl->own_write[i] = -1;
		rl->dest_fd[i] = rl->runner_fd[i] = dest[i];
		rl->dropping[i] = false;
	}
	for (int i = 0; i < 2; i++) {
		int p[2];

		if (!is_file(dest[i]))
			continue;
		if (i == 1 && rl->read_fd[0] >= 0 &&
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
		rl->read_fd[i] = p[0];
		rl->own_write[i] = rl->runner_fd[i] = p[1];
	}
	return 0;
}

void rg_relay_sent(struct rg_relay *rl)
{
	for (int i = 0; i < 2; i++)
		rg_close_fd(&rl->own_write[i]);
}

void rg_relay_poll_fds(const struct rg_relay *rl, struct pollfd p[2])
{
	for (int i = 0; i < 2; i++)
		p[i] = (struct pollfd){ .fd = rl->read_fd[i],
					.events = POLLIN };
}

/* Through a buffer: splice refuses some files (O_APPEND). */
static ssize_t copy(int from, int to, bool write_it)
{
	char *buf = malloc(CHUNK);
	ssize_t n = buf ? read(from, buf, CHUNK) : -1;

	for (ssize_t done = 0; write_it && n > 0 && done < n;) {
		ssize_t w = write(to, buf + done, (size_t)(n - done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			n = -1;
			break;
		}
		done += w;
	}
	free(buf);
	return n;
}

int rg_relay_pump(struct rg_relay *rl, int i, struct rg_error *err)
{
	int fd = rl->read_fd[i];
	ssize_t n;

	if (fd < 0)
		return 0;
	if (rl->dropping[i]) {
		n = copy(fd, -1, false);
	} else {
		n = splice(fd, NULL, rl->dest_fd[i], NULL, CHUNK,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && (errno == EINVAL || errno == ENOSYS))
			n = copy(fd, rl->dest_fd[i], true);
	}
	if (n == 0)
		rg_close_fd(&rl->read_fd[i]);
	if (n >= 0 || errno == EAGAIN || errno == EINTR)
		return 0;
	if (rl->dropping[i])
		return rg_fail(err, errno, "reading the command's output");
	/* the rest is read and dropped: the runner must never wait for us */
	rl->dropping[i] = true;
	return rg_fail(err, errno, "writing the command's %s",
		       i ? "stderr" : "stdout");
}

int rg_relay_finish(struct rg_relay *rl, struct rg_error *err)
{
	struct rg_error pump_err;
	int rc = 0;

	for (;;) {
		struct pollfd p[2];
		int ready;

		rg_relay_poll_fds(rl, p);
		if (p[0].fd < 0 && p[1].fd < 0)
			return rc;
		ready = poll(p, 2, FINISH_TIMEOUT_MS);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			rg_relay_close(rl);
			return rg_fail(err, ready ? errno : ETIMEDOUT,
				       "the command's output did not end");
		}
		for (int i = 0; i < 2; i++)
			if (p[i].revents &&
			    rg_relay_pump(rl, i, &pump_err) < 0 && !rc) {
				*err = pump_err;
				rc = -1;
			}
	}
}

void rg_relay_close(struct rg_relay *rl)
{
	for (int i = 0; i < 2; i++) {
		rg_close_fd(&rl->read_fd[i]);
		rg_close_fd(&rl->own_write[i]);
	}
}
