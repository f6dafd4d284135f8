/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a slot's runner (keeper_runner.h, the keeper's fork that takes the
 * slot's next connection) and its client say to each other over the
 * slot's socket (SOCK_SEQPACKET: one message per request and per reply,
 * fds by SCM_RIGHTS). The run's plan travels in a memfd (keeper_wire.h).
 * Both sides are built from one source tree; a keeper of another build
 * answers HELLO with another version and is replaced, never misread.
 */
#ifndef RG_KEEPER_PROTO_H
#define RG_KEEPER_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/un.h>

#include <runguard/runguard.h>

#include "pool/keeper_wire.h"
#include "ns/ns.h"

/* Its comm and argv[0], as ps shows it; also how a pid is known as ours. */
#define RG_KEEPER_NAME "runguard-keeper"
/* A run's runner (keeper_runner.h), as ps shows it. */
#define RG_RUNNER_NAME "runguard-runner"

/* Changes with the messages below (low half) and the run's wire format. */
#define RG_KEEPER_PROTO_VERSION (RG_WIRE_VERSION << 16 | 10u)

enum rg_keeper_op {
	RG_KEEPER_HELLO = 1,
	/* 2 was SPAWN and 3 REAP: a run is one RUN now */
	RG_KEEPER_KILL = 4,
	RG_KEEPER_SCRUB = 5,
	RG_KEEPER_RUN = 6,
};

/* RUN's fds, in this order */
enum {
	RG_KEEPER_FD_PLAN,   /* the memfd of keeper_wire.h */
	RG_KEEPER_FD_STDIN,  /* a placeholder when the command's is closed */
	RG_KEEPER_FD_STDOUT, /* where the command's output goes */
	RG_KEEPER_FD_STDERR,
	RG_KEEPER_FD_CWD,
	RG_KEEPER_RUN_FDS,
};

struct rg_keeper_request {
	uint32_t op;
	uint32_t version; /* RG_KEEPER_PROTO_VERSION */
};

/* HELLO's, KILL's and SCRUB's reply */
struct rg_keeper_reply {
	int32_t errnum; /* 0: done */
	uint32_t version;
	struct rg_ns_scrub scrub;
	char message[1024]; /* as struct rg_error's */
};

/*
 * While the run is out, the client forwards the signals it handles to
 * the runner as struct signalfd_siginfo, ssi_signo 0 for a cancelled run;
 * the runner reads them as from a signalfd (supervise.h). Closing the
 * connection ends the run at once.
 */

/*
 * The runner's one message before the result: RG_SUPERVISOR_NOTIFY
 * (supervise.h) as a uint32, the hard wall limit hit, for the client to
 * send SIGUSR1 to cfg->timeout_notify_pid, which a PID namespace of the
 * run's own cannot reach.
 */

/* What the runner logged, replayed by the client: level, text, NUL. */
#define RG_KEEPER_LOG_MAX 4096

/*
 * RUN's one reply, from the runner (also when the keeper is gone). A RUN
 * refused before anything went out (a malformed plan) has from_runner 0,
 * errnum set and outcome RG_OUTCOME_ERROR; with resend 1 as well, the
 * slot's next runner serves it (a runner with the syscall filter installed
 * and a RUN without it, keeper_runner.h): the client connects again and
 * sends it again, once. The connection closes without a reply only when
 * the runner died. The runner closes the RUN's fds before it replies, but
 * for the outputs the client relays (rg_wire_run.relayed): those stay
 * open until the client hangs up, and forwarded says how much the client
 * is to read from each before it is done (keeper_relay.h).
 */
struct rg_keeper_result {
	int32_t errnum; /* of the outcome RG_OUTCOME_ERROR/CLEANUP_FAILED */
	uint32_t version;
	uint32_t result_size; /* sizeof(struct rg_result) where it was made */
	uint32_t from_runner; /* 0: refused, no run went out */
	uint32_t resend;      /* refused: send it to the next runner */
	uint32_t log_len;
	/* bytes written into the command's stdout and stderr fds */
	uint64_t forwarded[2];
	char message[1024];
	struct rg_result result;
	char log[RG_KEEPER_LOG_MAX];
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
int rg_keeper_socket_path(int dir_fd, const char *name, struct sockaddr_un *sa);

#endif
