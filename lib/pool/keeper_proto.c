/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_proto.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS RG_KEEPER_RUN_FDS

ssize_t rg_keeper_send(int sock, const void *buf, size_t len, const int *fds,
		       size_t nfds)
{
	char control[CMSG_SPACE(sizeof(int) * MAX_FDS)] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (nfds > MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n;
}

ssize_t rg_keeper_recv(int sock, void *buf, size_t len, int *fds, size_t max,
		       size_t *nfds)
{
	char control[CMSG_SPACE(sizeof(int) * MAX_FDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;
	ssize_t n;

	*nfds = 0;
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	/* every fd received is kept or closed, however many came */
	for (c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*nfds < max && !(msg.msg_flags & MSG_CTRUNC))
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

int rg_keeper_socket_path(int dir_fd, const char *name, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* through the trusted directory fd: no path length or walk issue */
	n = snprintf(sa->sun_path, sizeof(sa->sun_path),
		     "/proc/self/fd/%d/%s.sock", dir_fd, name);
	return n > 0 && (size_t)n < sizeof(sa->sun_path) ? 0 : -1;
}
