/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_runner.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "pool/keeper_image.h"
#include "pool/keeper_proto.h"
#include "ns/ns.h"
#include "pool/pool.h"
#include "base/base.h"
#include "run/run.h"
/* stack the call uses below prepare()'s: 10 KiB here, with room */
#define RUNNER_STACK_MARGIN (64 * 1024)
/* how long the run's processes may take to die once SIGKILLed */
#define KILL_TIMEOUT_MS 5000

struct runner_slot {
	struct rg_slot slot;	   /* the run's: the slot's cgroup */
	struct rg_slot child_slot; /* the child's: nothing to join, it is in */
	bool child_reaped;
	uint64_t held;	     /* charged before the child: ours, the keeper's */
	int64_t cpu_at_hold; /* our CPU as the timed window opened, ns */
	uint64_t memory_limit; /* the run's own */
};

/* The reply is large (its log): not on the stack of a forked process. */
static struct rg_keeper_result reply;

/* Made while we wait for the call, not in it (prepare()). */
static struct rg_run_prep prep;
static bool bounding_set_empty;
/* the run's syscall filter is ours: each child inherits it */
static bool filtered;
/* ours, which each child inherits (prepare()) */
static struct rlimit own_rlimits[RLIM_NLIMITS];
static uint32_t own_rlimits_known;
_Static_assert(RLIM_NLIMITS <= 32, "a bit per limit");
/* the slot's cgroup checked root's alone in this call; or why not */
static bool slot_checked;
static struct rg_error slot_unready;

static struct runner_slot *to_runner(struct rg_slot *slot)
{
	return rg_container_of(slot, struct runner_slot, slot);
}

static int64_t own_cpu_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int runner_spawn(struct rg_slot *slot, const struct rg_child_plan *plan,
			struct rg_child *child, struct rg_error *err)
{
	struct runner_slot *rs = to_runner(slot);
	struct rg_child_plan p = *plan;

	/* born in the slot's cgroup and namespaces: it joins none */
	rg_slot_place(&rs->child_slot, &p.place);
	/* ours for the run is charged by now: not the run's */
	rs->held = rg_keeper_slot_held(slot->cgroup);
	return rg_spawn(&p, child, err);
}

static int runner_hold(struct rg_slot *slot, pid_t child, struct rg_error *err)
{
	(void)child;
	(void)err;
	to_runner(slot)->cpu_at_hold = own_cpu_ns();
	return 0;
}

static int runner_reap(struct rg_slot *slot, struct rg_child *child,
		       int *status, struct rusage *ru, struct rg_error *err)
{
	if (rg_slot_reap_own(child, status, ru, err) < 0)
		return -1;
	to_runner(slot)->child_reaped = true;
	return 0;
}

/*
 * We are PID 1 of the run's PID namespace: kill(-1) reaches every process
 * of the run and nothing else, and each one, orphaned, ends up ours to
 * reap. With no child of ours left the namespace holds nobody but us
 * (each process in it descends from us, through a child of ours), and
 * nothing is killed: kill(-1) walks every process of the host.
 * The command itself is the supervisor's to reap (its rusage).
 */
static int runner_kill(struct rg_slot *slot, struct rg_error *err)
{
	const struct timespec pause = { .tv_nsec = 1000000 };
	bool reaped = to_runner(slot)->child_reaped;

	if (reaped && waitpid(-1, NULL, __WALL | WNOHANG) < 0 && errno == ECHILD)
		return 0;
	kill(-1, SIGKILL);
	if (!reaped)
		return 0;
	for (int waited_ms = 0;;) {
		pid_t pid = waitpid(-1, NULL, __WALL | WNOHANG);

		if (pid > 0 || (pid < 0 && errno == EINTR))
			continue;
		if (pid < 0)
			return 0; /* ECHILD */
		if (waited_ms++ >= KILL_TIMEOUT_MS)
			return rg_fail(err, ETIMEDOUT,
				       "processes of the run "
				       "survive SIGKILL");
		kill(-1, SIGKILL); /* one forked meanwhile */
		nanosleep(&pause, NULL);
	}
}

/*
 * Our CPU time in the window counts in the slot's cgroup: not the run's.
 * So does what was charged before the child was spawned (the keeper's
 * pages, ours, our files for the run): taken off the peak, as the slot's
 * limit has it on top of the run's (rg_slot_memory_limit). Without swap
 * those pages stay charged through the run, so the rest is the run's.
 * The counters move in whole charge batches: a run whose pages came from
 * a batch the slot held shows no rise, and is given the one batch a
 * fresh cgroup would charge it, as per-run. docs/pool.md.
 */
static void runner_correct_stats(struct rg_slot *slot,
				 struct rg_cgroup_stats *st)
{
	struct runner_slot *rs = to_runner(slot);
	uint64_t batch = rg_charge_batches(1), held = rs->held, now;
	/*
	 * Our CPU time between the two reads of the slot's CPU counter, as
	 * the counter has it; from the hold on only where that is unknown
	 * (a window wider than the counter's: a fresh keeper's first runs
	 * under emulation spent tens of ms outside it, taken off the run).
	 */
	int64_t own = st->reader_cpu_ns >= 0 ? st->reader_cpu_ns :
					       own_cpu_ns() - rs->cpu_at_hold;
	struct rg_error ignored;

	struct rusage ru;

	if (st->cpu_ns >= 0)
		st->cpu_ns = st->cpu_ns > own ? st->cpu_ns - own : 0;
	/* every process of the run was ours to reap, and nothing else */
	if (st->major_faults < 0 && getrusage(RUSAGE_CHILDREN, &ru) == 0)
		st->major_faults = ru.ru_majflt;
	if (!st->memory_peak_valid || !held)
		return;
	/*
	 * With the run gone, what the slot holds is at most what it held
	 * before; less when a charge of an earlier run was freed during this
	 * one (after an OOM kill): only what stayed is taken off, so the peak
	 * never reads below the program's.
	 */
	if (rg_cgroup_memory_usage(slot->cgroup, &now, &ignored) == 0 &&
	    now < held)
		held = now;
	st->memory_peak = st->memory_peak > held + batch ?
				  st->memory_peak - held :
				  batch;
	/*
	 * A run at its limit, or OOM-killed in its slot, reports its own
	 * limit, as per-run: what was held may have grown since the slot's
	 * limit was written, and taking it off would put it below.
	 */
	if (rs->memory_limit != RG_UNLIMITED &&
	    (st->memory_peak > rs->memory_limit || st->oom_killed))
		st->memory_peak = rs->memory_limit;
}

/* The slot is reset by the keeper once we are gone. */
static int runner_release(struct rg_slot *slot, struct rg_error *err)
{
	(void)slot;
	(void)err;
	return 0;
}

static const struct rg_slot_ops runner_slot_ops = {
	.spawn = runner_spawn,
	.hold = runner_hold,
	.reap = runner_reap,
	.kill_run = runner_kill,
	.correct_stats = runner_correct_stats,
	.release = runner_release,
};

static const struct rg_slot_ops child_slot_ops = { 0 };

static void runner_slot_init(struct runner_slot *rs, struct rg_cgroup *cg,
			     const struct rg_wire_plan *w)
{
	memset(rs, 0, sizeof(*rs));
	rg_slot_init(&rs->slot, &runner_slot_ops);
	rs->slot.cgroup = cg;
	rs->slot.namespaces_outlive_run = true;
	rg_slot_init(&rs->child_slot, &child_slot_ops);
	rs->child_slot.namespaces_outlive_run = true;
	rs->memory_limit = w->cfg.memory_limit;
	rg_cgroup_faults_by_reaper(cg); /* runner_correct_stats */
	/* a peak that cannot be reset (v2 5.19-6.11): rg_lease_open_cgroup */
	if (!w->cfg.pool_v2_exact_peak)
		rg_cgroup_sample_unresettable_peak(cg);
	else if (w->peak_unused)
		rg_cgroup_assume_peak_unused(cg);
}

/* The runner's messages go back with the result (keeper_proto.h). */
static void collect_log(void *data, enum rg_log_level level,
			const char *message)
{
	struct rg_keeper_result *r = data;
	size_t n = strlen(message) + 1;

	if (r->log_len + 1 + n > sizeof(r->log))
		return;
	r->log[r->log_len] = (char)level;
	memcpy(r->log + r->log_len + 1, message, n);
	r->log_len += (uint32_t)(1 + n);
}

/* The run's configuration: the client's plain data, our fds and sink. */
static void runner_config(const struct rg_wire_plan *w, const int *fds,
			  struct rg_config *cfg)
{
	*cfg = w->cfg;
	cfg->file = (char *)w->plan.file;
	cfg->argv = w->argv;
	cfg->output[0].fd = fds[RG_KEEPER_FD_STDOUT];
	cfg->output[1].fd = fds[RG_KEEPER_FD_STDERR];
	cfg->input.fd = w->stdin_closed ? -1 : fds[RG_KEEPER_FD_STDIN];
	cfg->handle_signals = false;   /* the client passes its on */
	cfg->reap_all_children = true; /* we are the run's init */
	cfg->pool_size = 0;
	cfg->log.fn = collect_log;
	cfg->log.data = &reply;
}

static void send_reply(int conn, enum rg_outcome outcome,
		       const struct rg_error *err)
{
	reply.version = RG_KEEPER_PROTO_VERSION;
	reply.result_size = sizeof(reply.result);
	reply.from_runner = 1;
	if (outcome == RG_OUTCOME_ERROR ||
	    outcome == RG_OUTCOME_CLEANUP_FAILED) {
		reply.errnum = err->errnum ? err->errnum : EIO;
		snprintf(reply.message, sizeof(reply.message), "%s",
			 err->message);
	}
	rg_keeper_send(conn, &reply,
		       offsetof(struct rg_keeper_result, log) + reply.log_len,
		       NULL, 0);
}

/*
 * RUN refused before anything of the run went out (keeper_proto.h); with
 * resend, for the slot's next runner.
 */
static void refuse_run(int conn, const struct rg_error *err, bool resend)
{
	reply.errnum = err->errnum ? err->errnum : EIO;
	reply.resend = resend;
	reply.version = RG_KEEPER_PROTO_VERSION;
	reply.result_size = sizeof(reply.result);
	snprintf(reply.message, sizeof(reply.message), "%s", err->message);
	rg_keeper_send(conn, &reply, offsetof(struct rg_keeper_result, log),
		       NULL, 0);
}

/* The keeper learns what to reset from these (keeper_server.c). */
static void tell_keeper(const struct rg_runner_args *a, char news)
{
	if (write(a->news_fd, &news, 1) < 0) {
		/* the keeper is gone: nobody resets the slot, its next
		 * holder finds that out (lease.c) */
	}
}

/*
 * Whether we can serve a RUN that wants the filter or not; the next runner
 * is made as this one asks. A RUN without the filter cannot lose ours: it
 * goes to the next runner (keeper_runner.h). With it, and not ours, the
 * child installs it.
 */
static bool filter_as_asked(const struct rg_runner_args *a, int conn,
			    bool wanted)
{
	struct rg_error err = { .errnum = EAGAIN };

	if (wanted != a->filter)
		tell_keeper(a, wanted ? RG_RUNNER_FILTER : RG_RUNNER_NO_FILTER);
	if (wanted || !filtered)
		return true;
	snprintf(err.message, sizeof(err.message),
		 "keeper: this runner has the syscall filter; its next one "
		 "serves a run without it");
	refuse_run(conn, &err, true);
	return false;
}

/*
 * The caller's limits that are ours already: the child need not set them
 * (a judgedaemon's are its keeper's, which it started: 16 calls fewer).
 */
static uint32_t limits_inherited(const struct rg_caller_state *caller)
{
	uint32_t same = 0;

	for (int i = 0; i < RLIM_NLIMITS; i++)
		if ((own_rlimits_known & (1u << i)) &&
		    own_rlimits[i].rlim_cur == caller->rlimits[i].rlim_cur &&
		    own_rlimits[i].rlim_max == caller->rlimits[i].rlim_max)
			same |= 1u << i;
	return same;
}

static void note_own_limits(void)
{
	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (getrlimit(i, &own_rlimits[i]) == 0)
			own_rlimits_known |= 1u << i;
}

/*
 * The slot's cgroup root's alone again if chmod'ed before this call came
 * (rg_keeper_slot_ready), once: after HELLO's answer, while the client
 * gets its files ready, so not in the RUN's time (lease.c).
 */
static void check_slot(const struct rg_runner_args *a)
{
	if (slot_checked)
		return;
	slot_checked = true;
	if (rg_keeper_slot_ready(a->slot, &slot_unready) < 0 &&
	    !slot_unready.errnum)
		slot_unready.errnum = EIO;
}

/* RUN's fd i, one of the client's relay pipes (keeper_relay.h)? */
static bool relayed(const struct rg_wire_plan *w, int i)
{
	return (i == RG_KEEPER_FD_STDOUT && w->relayed[0]) ||
	       (i == RG_KEEPER_FD_STDERR && w->relayed[1]);
}

/*
 * After the reply, the client first: the reply's wake-up puts it on our
 * CPU (a socket's wake-up says that the sender sleeps next), where it
 * waited for our exit and a kernel worker that the exit wakes, about
 * 90 us in most calls. We exit once it sleeps or the other CPU takes us;
 * the keeper resets the slot then. Moving ourselves to another CPU
 * instead cost the client the migration's 30-50 us, and back-to-back
 * runs a fifth of their rate (docs/performance.md).
 */
static void client_first(void)
{
	sched_yield();
}

/* The run of RUN's fds, supervised here; the result goes to the client. */
static void run(const struct rg_runner_args *a, int conn, int *fds)
{
	struct rg_error err = { 0 };
	enum rg_outcome outcome = RG_OUTCOME_ERROR;
	struct rg_planned_run planned = { 0 };
	struct rg_wire_plan w;
	struct runner_slot rs;
	struct rg_config cfg;
	int signal_fd;

	check_slot(a);
	if (slot_unready.errnum) {
		refuse_run(conn, &slot_unready, false);
		return;
	}
	if (rg_wire_decode(fds[RG_KEEPER_FD_PLAN], &w, &err) < 0) {
		refuse_run(conn, &err, false);
		return;
	}
	if (!filter_as_asked(a, conn, w.syscall_filter))
		return;
	tell_keeper(a, RG_RUNNER_RAN);
	/* ours to say, not the client's */
	w.plan.privs.bounding_set_empty = bounding_set_empty;
	runner_config(&w, fds, &cfg);
	runner_slot_init(&rs, a->slot->cgroup, &w);
	w.plan.stdin_fd = cfg.input.fd;
	w.caller.cwd_fd = fds[RG_KEEPER_FD_CWD];
	w.caller.rlimits_inherited = limits_inherited(&w.caller);
	w.plan.caller = &w.caller;
	w.plan.parent_pid = getpid();
	/* the connection, read non-blocking for signals (supervise.h) */
	signal_fd = fcntl(conn, F_DUPFD_CLOEXEC, 3);
	if (signal_fd < 0 || fcntl(signal_fd, F_SETFL, O_NONBLOCK) < 0)
		rg_fail(&err, errno, "runner: the client's connection");
	else if (!w.syscall_filter || filtered ||
		 rg_seccomp_program(&w.plan.seccomp, true, &err) == 0) {
		planned = (struct rg_planned_run){
			.cfg = &cfg,
			.plan = &w.plan,
			.slot = &rs.slot,
			.signal_fd = signal_fd,
			.notify_sock = signal_fd,
			.prep = &prep,
			.exits_after = true, /* rg_runner_main() */
		};
		outcome = rg_run_planned(&planned, &reply.result, &err);
	}
	/*
	 * DOMjudge unmounts the judging once the client returns: we hold
	 * none of its files or directories by then. The client's relay pipes
	 * stay until we exit: closing them would wake it before the reply
	 * does, once for each, and each wake-up takes our CPU from us (the
	 * reply says how much they carried, keeper_proto.h).
	 */
	for (int i = 0; i < RG_KEEPER_RUN_FDS; i++)
		if (!relayed(&w, i))
			rg_close_fd(&fds[i]);
	memcpy(reply.forwarded, planned.forwarded, sizeof(reply.forwarded));
	send_reply(conn, outcome, &err);
	client_first();
	tell_keeper(a, RG_RUNNER_REPLIED);
}

/* HELLO's, KILL's and SCRUB's reply. */
static void answer(int conn, int errnum, const char *message,
		   const struct rg_ns_scrub *scrub)
{
	struct rg_keeper_reply r = { .errnum = errnum,
				     .version = RG_KEEPER_PROTO_VERSION };

	if (scrub)
		r.scrub = *scrub;
	if (message)
		snprintf(r.message, sizeof(r.message), "%s", message);
	rg_keeper_send(conn, &r, sizeof(r), NULL, 0);
}

/* In the slot's IPC and net namespaces already: no setns. */
static void scrub(int conn)
{
	struct rg_ns_scrub report;
	struct rg_error err;

	if (rg_ns_scrub_here(&report, &err) < 0)
		answer(conn, err.errnum ? err.errnum : EIO, err.message, NULL);
	else
		answer(conn, 0, NULL, &report);
}

/*
 * One client, until its RUN is answered or it goes. Nothing of a run is
 * out before RUN: KILL has nothing to end.
 */
static void serve(const struct rg_runner_args *a, int conn)
{
	struct rg_keeper_request req;
	int fds[RG_KEEPER_RUN_FDS];
	char message[128];
	size_t nfds;

	for (;;) {
		ssize_t n = rg_keeper_recv(conn, &req, sizeof(req), fds,
					   RG_KEEPER_RUN_FDS, &nfds);

		if (n != (ssize_t)sizeof(req))
			return; /* EOF: the client is gone */
		if (req.version != RG_KEEPER_PROTO_VERSION) {
			snprintf(message, sizeof(message),
				 "a keeper of "
				 "another runguard build (protocol %u, this "
				 "is %u)",
				 RG_KEEPER_PROTO_VERSION, req.version);
			answer(conn, EPROTO, message, NULL);
		} else if (req.op == RG_KEEPER_RUN &&
			   nfds == RG_KEEPER_RUN_FDS) {
			run(a, conn, fds);
			return;
		} else if (req.op == RG_KEEPER_RUN) {
			struct rg_error err = { .errnum = EPROTO };

			snprintf(err.message, sizeof(err.message),
				 "keeper: a run without its files");
			refuse_run(conn, &err, false);
		} else if (req.op == RG_KEEPER_HELLO) {
			answer(conn, 0, NULL, NULL);
			check_slot(a);
		} else if (req.op == RG_KEEPER_KILL) {
			answer(conn, 0, NULL, NULL);
		} else if (req.op == RG_KEEPER_SCRUB) {
			scrub(conn);
		} else {
			answer(conn, EPROTO, "keeper: an unknown request",
			       NULL);
		}
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
	}
}

static bool peer_is_root(int conn)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       cred.uid == 0;
}

/* The slot's next client (root's); we end with the keeper until then. */
static int take_client(const struct rg_runner_args *a)
{
	struct pollfd p[2] = {
		{ .fd = a->listen_fd, .events = POLLIN },
		{ .fd = a->keeper_fd, .events = POLLIN },
	};

	for (;;) {
		int conn;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[1].revents)
			_exit(0); /* its pipe hung up: the keeper is gone */
		if (!p[0].revents)
			continue;
		conn = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			if (errno != EINTR && errno != ECONNABORTED &&
			    errno != EAGAIN)
				sleep(1); /* EMFILE and the like */
			continue;
		}
		if (peer_is_root(conn))
			return conn;
		close(conn);
	}
}

/*
 * The run's syscall filter on ourselves, as the keeper asks: nothing we do
 * after this needs what it denies (mounts, namespaces, ptrace, sockets
 * other than AF_UNIX and AF_NETLINK, clone3: the child is vfork()ed).
 * no_new_privs first, as the child sets it anyway: root without
 * CAP_SYS_ADMIN may install a filter only so. Where it fails, the child
 * installs the filter as it would without us, and fails as it would.
 */
static bool install_filter(const struct rg_runner_args *a)
{
	const struct sock_fprog *prog;
	struct rg_error ignored;

	return a->filter && rg_seccomp_program(&prog, true, &ignored) == 0 &&
	       prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       rg_seccomp_install(prog) == 0;
}

/*
 * What no call decides, done before it comes: the run's event loop and
 * the host's pressure files, our limits noted, our bounding set emptied
 * (we never exec: each child inherits it empty, 41 calls fewer in the
 * call), the syscall filter installed, and the pages the call touches
 * faulted in (keeper_image.h).
 */
static void prepare(const struct rg_runner_args *a)
{
	struct rg_error ignored;
	int cap_last = rg_privs_cap_last(&ignored);

	rg_run_prepare(&prep);
	note_own_limits();
	bounding_set_empty = cap_last >= 0 &&
			     rg_privs_drop_bounding_set(cap_last) == 0;
	filtered = install_filter(a);
	/* last: what the above touched is ours already */
	rg_keeper_image_map(RUNNER_STACK_MARGIN);
}

_Noreturn void rg_runner_main(const struct rg_runner_args *a)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int conn;

	/* first: ps and the keeper's own lookups tell us from the keeper */
	prctl(PR_SET_NAME, RG_RUNNER_NAME, 0, 0, 0);
	rg_result_init(&reply.result); /* if no run gets as far */
	/* the keeper ignores SIGCHLD: our children are ours to reap */
	sigaction(SIGCHLD, &dfl, NULL);
	prepare(a);
	conn = take_client(a);
	/*
	 * The next client is the next runner's, once the slot is reset. fd 0
	 * becomes /dev/null as 1 and 2 are: a file received now never takes
	 * a stdio number (a stdin dup2()ed onto itself would stay CLOEXEC).
	 */
	dup2(STDOUT_FILENO, a->listen_fd);
	close(a->keeper_fd);
	serve(a, conn);
	/* our PID namespace, empty already, goes with us */
	_exit(0);
}
