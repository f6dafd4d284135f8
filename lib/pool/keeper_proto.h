/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a slot's keeper and its client say to each other over the slot's
 * socket (SOCK_SEQPACKET: one message per request and per reply, fds by
 * SCM_RIGHTS). The run's plan travels in a memfd (keeper_wire.h). Both
 * sides are built from one source tree; a keeper of another build answers
 * HELLO with another version and is replaced, never misread.
 */
#ifndef RG_KEEPER_PROTO_H
#define RG_KEEPER_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/un.h>

#include "keeper_wire.h"
#include "ns.h"

/* Its comm and argv[0], as ps shows it; also how a pid is known as ours. */
#define RG_KEEPER_NAME "runguard-keeper"
/* A run's runner (keeper_server.c), as ps shows it. */
#define RG_RUNNER_NAME "runguard-runner"

/* Changes with the messages below (low half) and the plan's wire format. */
#define RG_KEEPER_PROTO_VERSION (RG_WIRE_VERSION << 16 | 4u)

enum rg_keeper_op {
	RG_KEEPER_HELLO = 1,
	RG_KEEPER_SPAWN = 2,
	RG_KEEPER_KILL = 4, /* 3 was REAP: the runner answers it now */
	RG_KEEPER_SCRUB = 5,
};

/* SPAWN's reply fds, in this order */
enum {
	RG_KEEPER_REPLY_CHILD,	      /* the run's child's pidfd */
	RG_KEEPER_REPLY_RUNNER,	      /* the runner's end of its socket */
	RG_KEEPER_REPLY_RUNNER_PIDFD, /* the runner's pidfd */
	RG_KEEPER_REPLY_FDS,
};

/*
 * What a run's runner sends its client once the run's child has ended
 * (the client has the runner's socket from SPAWN's reply: the result
 * comes from the runner also when the keeper is gone).
 */
struct rg_runner_done {
	int32_t errnum;
	int32_t status;
	int64_t cpu_ns; /* the runner's own CPU, to this message */
	/* the child's wait on a run queue as it ended (waits.h); -1 */
	int64_t run_delay_ns;
	struct rusage rusage;
};

/* SPAWN's fds, in this order */
enum {
	RG_KEEPER_FD_PLAN,
	RG_KEEPER_FD_STDIN,
	RG_KEEPER_FD_REPORT,
	RG_KEEPER_FD_GO,
	RG_KEEPER_FD_STDOUT,
	RG_KEEPER_FD_STDERR,
	RG_KEEPER_FD_CWD,
	RG_KEEPER_SPAWN_FDS,
};

struct rg_keeper_request {
	uint32_t op;
	uint32_t version; /* RG_KEEPER_PROTO_VERSION */
};

struct rg_keeper_reply {
	int32_t errnum; /* 0: done */
	uint32_t version;
	int64_t keeper_cpu_ns; /* KILL: the keeper's CPU since SPAWN */
	struct rg_ns_scrub scrub;
	char message[1024]; /* as struct rg_error's */
};

ssize_t rg_keeper_send(int sock, const void *buf, size_t len, const int *fds,
		       size_t nfds);

/*
 * One message and up to max fds (CLOEXEC); fds beyond max, or of a message
 * cut short, are closed.
 */
ssize_t rg_keeper_recv(int sock, void *buf, size_t len, int *fds, size_t max,
		       size_t *nfds);

/* <pool dir>/<name>.sock through the pool directory's fd. */
int rg_keeper_socket_path(int dir_fd, const char *name,
			  struct sockaddr_un *sa);

/* The pid of pidfd's process in our /proc's PID namespace; -1. */
pid_t rg_pidfd_pid(int pidfd);

#endif
