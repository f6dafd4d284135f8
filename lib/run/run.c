/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One run, start to end: prepare everything the child needs, take a slot,
 * spawn, wait for the child's READY, take baselines, start the clock,
 * release, supervise, and then (outside the timed window) kill leftovers,
 * drain the output, read the stats and give the slot back.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "base/base.h"
#include "cgroup/cgroup.h"
#include "run/env.h"
#include "run/root.h"
#include "run/run.h"
#include "run/syscall_filter.h"
#include "run/slot.h"
#include "run/spawn.h"
#include "run/supervise.h"
#include "run/waits.h"
#include "run/verdict.h"
#include "run/watchdog.h"

/* how long output may keep coming after every process of the run is dead */
#define DRAIN_TIMEOUT_MS 1000

struct run {
	const struct rg_config *cfg;
	const struct rg_slot_source *source; /* NULL: a transient slot */
	struct rg_result *result;
	struct rg_child_plan plan;
	bool owns_env; /* plan.envp is ours to free */
	/* we are in the slot's cgroup (a resident slot's runner) */
	bool supervisor_in_slot;
	bool exits_after; /* rg_planned_run */
	struct rg_slot *slot;
	struct rg_watchdog watchdog;
	struct rg_child child;
	bool prepared, spawned, reaped; /* rg_spawn_prepare(), rg_spawn() */
	struct rg_supervisor sup;
	bool sup_ready;
	/* until the supervisor takes them over (init_supervisor) */
	int signal_fd;
	int notify_sock;
	struct rg_stream streams[2];
	int output_fd[2]; /* files we opened, or -1 */
	int input_fd;	  /* the input file we opened, or -1 */
	bool signals_blocked;
	sigset_t saved_mask;
	struct rg_host_waits host; /* the host's pressure, for the result */
	bool host_open;		   /* rg_host_waits_open() */
	/* the child opened the window (plan.open_window), or failed to */
	bool window_open, window_failed;
	struct timespec window_start;
	struct rg_error window_err;
};

static double timespec_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double timeval_seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* A user without a group gets its primary group, never root's gid 0. */
static int resolve_gid(const struct rg_config *cfg,
		       struct rg_privs_plan *privs, struct rg_error *err)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int rc;

	privs->gid = cfg->gid;
	privs->set_gid = cfg->has_gid;
	if (cfg->has_gid || !cfg->has_uid)
		return 0;
	rc = getpwuid_r(cfg->uid, &pw, buf, sizeof(buf), &found);
	if (!found)
		return rg_fail(err, rc,
			       "no group given and uid %u has no "
			       "user entry to take it from",
			       (unsigned)cfg->uid);
	privs->gid = pw.pw_gid;
	privs->set_gid = true;
	return 0;
}

static int prepare_plan(struct run *r, struct rg_error *err)
{
	const struct rg_config *cfg = r->cfg;
	struct rg_child_plan *plan = &r->plan;
	int cap_last;

	rg_child_plan_from_config(plan, cfg);
	plan->parent_pid = getpid();
	plan->privs.uid = cfg->has_uid ? cfg->uid : getuid();
	if (resolve_gid(cfg, &plan->privs, err) < 0)
		return -1;
	cap_last = rg_privs_cap_last(err);
	if (cap_last < 0)
		return -1;
	plan->privs.cap_last = cap_last;
	if (rg_root_prefix(cfg, plan->root_prefix, sizeof(plan->root_prefix),
			   err) < 0)
		return -1;
	/* a pool slot's net namespace outlives the run (syscall_filter.h) */
	if (cfg->syscall_filter &&
	    rg_seccomp_program(&plan->seccomp, cfg->pool_size > 0, err) < 0)
		return -1;
	r->owns_env = true;
	return rg_env_build(cfg, &plan->envp, err);
}

static int block_signals(struct run *r, int *signal_fd, struct rg_error *err)
{
	sigset_t handled;
	int rc;

	*signal_fd = -1;
	sigemptyset(&handled);
	if (r->cfg->handle_signals) {
		sigaddset(&handled, SIGTERM);
		sigaddset(&handled, SIGINT);
		sigaddset(&handled, SIGHUP);
	}
	rc = pthread_sigmask(SIG_BLOCK, &handled, &r->saved_mask);
	if (rc != 0)
		return rg_fail(err, rc, "blocking signals");
	r->signals_blocked = true;
	/* the command starts with the caller's mask, minus what we block */
	r->plan.child_sigmask = r->saved_mask;
	sigdelset(&r->plan.child_sigmask, SIGTERM);
	sigdelset(&r->plan.child_sigmask, SIGINT);
	sigdelset(&r->plan.child_sigmask, SIGHUP);
	if (!r->cfg->handle_signals)
		return 0;
	*signal_fd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
	if (*signal_fd < 0)
		return rg_fail(err, errno, "signalfd");
	return 0;
}

/*
 * A stdin fd that is not open means a closed stdin for the command. Read
 * first thing in rg_run(): a fd we open later may take that number (the
 * signalfd did, and a resident run got it as its stdin).
 */
static void note_input(struct run *r)
{
	const struct rg_output *in = &r->cfg->input;

	r->plan.stdin_fd = in->fd;
	if (!in->path && in->fd >= 0 && fcntl(in->fd, F_GETFD) < 0)
		r->plan.stdin_fd = RG_INPUT_CLOSED;
}

static int open_input(struct run *r, struct rg_error *err)
{
	const struct rg_output *in = &r->cfg->input;

	if (!in->path)
		return 0;
	r->input_fd = open(in->path, O_RDONLY | O_CLOEXEC);
	if (r->input_fd < 0)
		return rg_fail(err, errno, "cannot open `%s'", in->path);
	r->plan.stdin_fd = r->input_fd;
	return 0;
}

static int open_outputs(struct run *r, int dest[2], struct rg_error *err)
{
	for (int i = 0; i < 2; i++) {
		const struct rg_output *o = &r->cfg->output[i];

		dest[i] = o->fd;
		if (!o->path)
			continue;
		r->output_fd[i] = open(o->path,
				       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				       0600);
		if (r->output_fd[i] < 0)
			return rg_fail(err, errno, "cannot open `%s'", o->path);
		dest[i] = r->output_fd[i];
	}
	return 0;
}

/* A transient slot, or one of the pool's (waiting while all are busy). */
static int take_slot(struct run *r, struct rg_error *err)
{
	if (!r->source)
		return rg_slot_open_transient(r->cfg, &r->slot, err);
	if (r->source->acquire(r->source->ctx, r->cfg, r->signal_fd, &r->slot,
			       err) < 0)
		return -1;
	r->result->pooled = true;
	r->result->pool_slot = (unsigned int)r->slot->pool_index;
	return 0;
}

/*
 * In the child, sharing our memory, just before its execve (spawn.h): the
 * cgroup's baselines, the host's, and the clock, as release_child() takes
 * them otherwise. We sleep meanwhile; nothing here allocates.
 */
static int open_window_in_child(void *arg)
{
	struct run *r = arg;

	if (rg_cgroup_start(r->slot->cgroup, &r->window_err) < 0) {
		r->window_failed = true;
		return -1;
	}
	rg_host_waits_start(&r->host);
	clock_gettime(CLOCK_MONOTONIC, &r->window_start);
	r->window_open = true;
	return 0;
}

/* A child that opens the window itself did, or we say why not. */
static int check_window(struct run *r, bool *setup_failed, struct rg_error *err)
{
	if (!r->plan.open_window || r->window_open)
		return 0;
	if (r->window_failed) {
		*err = r->window_err;
		return -1;
	}
	*setup_failed = true; /* killed between its READY and execve */
	return rg_fail(err, 0, "child died during set-up");
}

/*
 * From clone3 to the child's READY: it waits at the barrier then, or (if
 * it opens the window itself) has exec'd already.
 */
static int start_child(struct run *r, const int dest[2], bool *setup_failed,
		       struct rg_error *err)
{
	static const char *const names[2] = { "stdout", "stderr" };

	rg_slot_place(r->slot, &r->plan.place);
	if (rg_slot_can_abandon(r->slot) &&
	    rg_watchdog_start(&r->watchdog, r->slot, err) < 0)
		return -1;
	/* only now: the pool's detached walker must not become our orphan */
	if (r->cfg->reap_all_children &&
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return rg_fail(err, errno, "cannot become a child subreaper");
	rg_cgroup_expect_tasks(r->slot->cgroup);
	if (rg_spawn_prepare(&r->child, !r->plan.open_window, err) < 0)
		return -1;
	r->prepared = true;
	for (int i = 0; i < 2; i++) {
		/* owned by the stream now */
		rg_stream_init(&r->streams[i], names[i],
			       rg_steal_fd(&r->child.pipes.out[i][0]), dest[i],
			       r->cfg->stream_limit);
	}
	if (rg_supervisor_watch_streams(&r->sup, r->streams, err) < 0)
		return -1;
	if (rg_slot_spawn(r->slot, &r->plan, &r->child, err) < 0)
		return -1;
	r->spawned = true;
	if (rg_supervisor_attach(&r->sup, &r->child, r->slot, err) < 0)
		return -1;
	if (rg_spawn_wait_ready(r->cfg, &r->child, setup_failed, err) < 0)
		return -1;
	if (check_window(r, setup_failed, err) < 0)
		return -1;
	return rg_slot_hold(r->slot, r->child.pid, err);
}

/* The timed window opens here, unless the child opened it. */
static int release_child(struct run *r, bool *setup_failed,
			 struct rg_error *err)
{
	bool by_child = r->window_open;

	if (by_child)
		rg_cgroup_reader_starts_now(r->slot->cgroup);
	else if (rg_cgroup_start(r->slot->cgroup, err) < 0)
		return -1;
	if (!by_child)
		rg_host_waits_start(&r->host);
	r->child.stat_fd = r->supervisor_in_slot ?
				   rg_task_stat_open_pidfd(r->child.pidfd) :
				   rg_task_stat_open(r->child.pid);
	r->child.run_delay_base = rg_task_run_delay(r->child.stat_fd);
	if (rg_supervisor_start(&r->sup, by_child ? &r->window_start : NULL,
				err) < 0)
		return -1;
	return by_child ? 0 : rg_spawn_release(&r->child, setup_failed, err);
}

static void verdict_limits(const struct rg_config *cfg,
			   struct rg_verdict_limits *l)
{
	l->has_cpu_limit = cfg->has_cpu_limit;
	l->cpu_soft = cfg->cpu_soft;
	l->cpu_hard = cfg->cpu_hard;
	l->has_wall_limit = cfg->has_wall_limit;
	l->wall_soft = cfg->wall_soft;
	l->memory_limit = cfg->memory_limit;
}

/*
 * How the verdict is logged. The result (the meta file) holds it all; where
 * the command's stderr is the caller's own fd 2, a log sink writing there
 * (the CLI's) would add these lines to the command's stream, which DOMjudge
 * counts (its runguard_test allows 100 bytes beyond -s). DOMjudge's
 * runguard has closed that fd by now and loses them: here they become
 * notices (shown with -v).
 */
static enum rg_log_level verdict_level(const struct rg_config *cfg)
{
	const struct rg_output *o = &cfg->output[RG_STDERR];

	return !o->path && o->fd == STDERR_FILENO ? RG_LOG_NOTICE :
						    RG_LOG_WARNING;
}

/* verdict.h decides; the log says what it decided. */
static void decide(struct run *r)
{
	const struct rg_config *cfg = r->cfg;
	struct rg_result *res = r->result;
	struct rg_verdict_limits l;
	enum rg_log_level level = verdict_level(cfg);

	verdict_limits(cfg, &l);
	rg_verdict_exit(&l, r->sup.status, r->sup.aborting, res);
	if (res->cpu_limit & RG_LIMIT_HARD)
		rg_log(cfg, level, "timelimit exceeded (hard cpu time)");
	else if (res->term_signal)
		rg_log(cfg, level, "command terminated with signal %d",
		       res->term_signal);
	rg_verdict_time_limits(&l, r->sup.wall_hard_hit, res);
	if (res->wall_limit & RG_LIMIT_SOFT)
		rg_log(cfg, level, "timelimit exceeded (soft wall time)");
	if (res->cpu_limit & RG_LIMIT_SOFT)
		rg_log(cfg, level, "timelimit exceeded (soft cpu time)");
	rg_waits_blame(res, rg_verdict_memory_limit_reached(&l, res->oom_killed,
							    res->memory_bytes));
}

/*
 * The child's own wait for a CPU, where it is larger than its cgroup's
 * (PSI weighs the CPUs a run moved between, psi.h): exact for a program
 * of one thread, and most are. Plus the supervisor's own waits in the
 * window: waiting to run (woken by a memory sample, say, as the run
 * ended), it saw the end late, and the wall time holds that delay. A
 * supervisor in the run's cgroup (a resident slot's runner, on the run's
 * CPUs) has those waits in the cgroup's pressure already, mostly while the
 * run waited too: there only its wake-up for the run's end is added.
 */
static void own_cpu_wait(const struct run *r, struct rg_cgroup_stats *st)
{
	int64_t base = r->child.run_delay_base, end = r->child.run_delay_end;
	int64_t *cpu = &st->wait_ns[RG_PSI_CPU];
	int64_t ours = r->supervisor_in_slot ? r->sup.self_delay_ns :
					       r->sup.self_window_delay_ns;

	if (base < 0 || end < base)
		return;
	if (end - base > *cpu)
		*cpu = end - base;
	if (ours > 0)
		*cpu += ours;
	if (!st->wait_method)
		st->wait_method = "schedstat";
}

/*
 * The kernel keeps the image a child was forked from in the command's
 * ru_maxrss (exec folds the old high-water mark in): a resident slot's
 * runner's, about 700 KiB, where a trivial program's own is 300 KiB on
 * v2 before 6.12 (verdict.h).
 */
static bool maxrss_is_the_commands(const struct run *r)
{
	return rg_verdict_maxrss_is_the_commands((int64_t)r->sup.rusage.ru_maxrss,
						 r->child.setup_maxrss_kib);
}

static int read_stats(struct run *r, struct rg_error *err)
{
	struct rg_result *res = r->result;
	struct rg_cgroup_stats st;

	if (rg_cgroup_read_stats(r->slot->cgroup, &st, err) < 0)
		return -1;
	rg_slot_correct_stats(r->slot, &st);
	own_cpu_wait(r, &st);
	rg_waits_set(res, st.wait_ns, st.wait_method);
	rg_host_waits_read(&r->host, res);
	res->cpu_time = st.cpu_ns < 0 ? -1.0 : (double)st.cpu_ns / 1e9;
	res->oom_killed = st.oom_killed;
	res->major_faults = st.major_faults >= 0 ?
				    (uint64_t)st.major_faults :
				    (uint64_t)r->sup.rusage.ru_majflt;
	if (st.memory_peak_valid) {
		res->memory_bytes = st.memory_peak;
		snprintf(res->memory_method, sizeof(res->memory_method), "%s",
			 st.memory_method);
		/* samples can miss a spike that one process's maxrss saw */
		if (st.memory_peak_lower_bound && maxrss_is_the_commands(r) &&
		    (uint64_t)r->sup.rusage.ru_maxrss * 1024 > res->memory_bytes)
			res->memory_bytes = (uint64_t)r->sup.rusage.ru_maxrss *
					    1024;
	} else {
		/* no cgroup peak on this kernel: the largest process */
		res->memory_bytes = (uint64_t)r->sup.rusage.ru_maxrss * 1024;
		snprintf(res->memory_method, sizeof(res->memory_method),
			 "rusage.maxrss");
	}
	return 0;
}

/* After the child is gone: nothing of the run may survive it. */
static int collect(struct run *r, struct rg_error *err)
{
	struct rg_result *res = r->result;

	if (rg_slot_kill_run(r->slot, err) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (rg_stream_drain(&r->streams[i], DRAIN_TIMEOUT_MS, err) < 0)
			return -1;
		res->stream_bytes[i] = r->streams[i].consumed;
		res->stream_truncated[i] = rg_stream_truncated(&r->streams[i]);
	}
	res->outcome = rg_spawn_exec_failed(&r->child, &res->exec_errno) ?
			       RG_OUTCOME_EXEC_FAILED :
			       RG_OUTCOME_COMPLETED;
	res->wall_time = timespec_diff(&r->sup.start, &r->sup.end);
	res->user_time = timeval_seconds(&r->sup.rusage.ru_utime);
	res->sys_time = timeval_seconds(&r->sup.rusage.ru_stime);
	if (read_stats(r, err) < 0)
		return -1;
	rg_supervisor_collect_signals(&r->sup);
	res->received_signal = r->sup.received_signal;
	decide(r);
	return 0;
}

static int reap_child_now(struct run *r);

/*
 * The child runs in the run's cgroup from clone3 on: a memory limit below
 * what its set-up touches (-m 1) has the OOM killer kill it before exec.
 * That is the run hitting its limit, as DOMjudge reports it (its child is
 * killed the same way): a SIGKILLed command, not an internal error.
 */
static bool oom_killed_in_setup(const struct run *r)
{
	int status = r->sup.status;

	return r->reaped && r->result->oom_killed && WIFSIGNALED(status) &&
	       WTERMSIG(status) == SIGKILL;
}

/*
 * The child failed before exec and exits 255 by itself: completed when it
 * was the run's memory limit that killed it (a normal result).
 */
static enum rg_outcome collect_setup_failure(struct run *r)
{
	struct rg_result *res = r->result;
	struct rg_error ignored;
	bool reaped = reap_child_now(r) == 0;

	if (reaped)
		res->status = r->sup.status;
	rg_slot_kill_run(r->slot, &ignored);
	read_stats(r, &ignored);
	/*
	 * The window never opened, so the cgroup has no CPU time of this run
	 * (rg_cgroup_read_stats()); the child alone ran, and was reaped.
	 */
	res->user_time = timeval_seconds(&r->sup.rusage.ru_utime);
	res->sys_time = timeval_seconds(&r->sup.rusage.ru_stime);
	res->cpu_time = reaped ? res->user_time + res->sys_time : -1.0;
	/* the command never ran: there is no wall time to explain */
	res->waits_known = res->host_known = 0;
	res->wait_method[0] = '\0';
	if (oom_killed_in_setup(r)) {
		decide(r);
		return RG_OUTCOME_COMPLETED;
	}
	res->exit_code = 255;
	return RG_OUTCOME_SETUP_FAILED;
}

/* Make sure the direct child is dead and reaped (error paths). */
static int reap_child_now(struct run *r)
{
	struct rg_error ignored;

	if (!r->spawned || r->reaped)
		return 0;
	r->reaped = true;
	return rg_slot_reap(r->slot, &r->child, &r->sup.status, &r->sup.rusage,
			    &ignored);
}

/*
 * With the subreaper set, orphans of the run end up as our children. They
 * are all dead or dying (the cgroup is empty), but a task leaves its cgroup
 * just before it becomes a zombie: wait for them, boundedly.
 */
static void reap_orphans(struct run *r)
{
	const struct timespec pause = { .tv_nsec = 1000000 };

	if (!r->cfg->reap_all_children)
		return;
	for (int waited_ms = 0; waited_ms < 2000;) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);

		if (pid > 0)
			continue;
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			return; /* ECHILD: none left */
		nanosleep(&pause, NULL);
		waited_ms++;
	}
}

/* Neither the run's files nor the slot: ours (rg_planned_run.exits_after) */
static void close_own_fds(struct run *r)
{
	if (r->prepared)
		rg_child_close(&r->child);
	if (r->sup_ready)
		rg_supervisor_close(&r->sup);
	else
		rg_close_fd(&r->signal_fd);
	rg_host_waits_close(&r->host);
}

/* Returns -1 if the slot could not be given back cleanly. */
static int finish(struct run *r, struct rg_error *err)
{
	struct rg_error ignored;
	int release_rc;

	if (r->spawned && !r->reaped) {
		kill(r->child.pid, SIGKILL);
		if (r->slot)
			rg_slot_kill_run(r->slot, &ignored);
		reap_child_now(r);
	}
	/* everything of the run is dead: a crash from here leaks nothing */
	rg_watchdog_stop(&r->watchdog);
	reap_orphans(r);
	for (int i = 0; i < 2; i++) {
		rg_stream_close(&r->streams[i]);
		if (r->output_fd[i] >= 0)
			close(r->output_fd[i]);
	}
	if (r->input_fd >= 0)
		close(r->input_fd);
	if (!r->exits_after)
		close_own_fds(r);
	if (r->owns_env)
		rg_env_free(r->plan.envp);
	release_rc = rg_slot_release(r->slot, err);
	r->slot = NULL;
	/* last: until the cgroup is gone a signal must not kill us */
	if (r->signals_blocked)
		pthread_sigmask(SIG_SETMASK, &r->saved_mask, NULL);
	return release_rc;
}

/*
 * The event loop and the host's pressure files: only for a run supervised
 * here (a resident slot's is its runner's). The signal fd goes to the
 * supervisor, which closes it.
 */
static int init_supervisor(struct run *r, struct rg_error *err)
{
	int signal_fd = r->signal_fd;

	r->signal_fd = -1;
	if (!r->host_open)
		rg_host_waits_open(&r->host);
	r->host_open = true;
	if (rg_supervisor_init(&r->sup, r->cfg, signal_fd, err) < 0)
		return -1;
	r->sup_ready = true;
	r->sup.notify_sock = r->notify_sock;
	return 0;
}

/* From the spawn on: the child started, supervised and collected. */
static enum rg_outcome run_child(struct run *r, const int dest[2],
				 struct rg_error *err)
{
	bool setup_failed = false;

	if (init_supervisor(r, err) < 0)
		return RG_OUTCOME_ERROR;
	if (start_child(r, dest, &setup_failed, err) < 0)
		return setup_failed ? collect_setup_failure(r) :
				      RG_OUTCOME_ERROR;
	if (release_child(r, &setup_failed, err) < 0)
		return setup_failed ? collect_setup_failure(r) :
				      RG_OUTCOME_ERROR;
	if (rg_supervisor_run(&r->sup, err) < 0)
		return RG_OUTCOME_ERROR;
	r->reaped = true;
	if (collect(r, err) < 0)
		return RG_OUTCOME_ERROR;
	return r->result->outcome;
}

/*
 * A resident slot's runner does all of run_child() in the slot and sends
 * the result whole; where it was run is ours to say.
 */
static enum rg_outcome run_by_slot(struct run *r, const int dest[2],
				   struct rg_error *err)
{
	struct rg_result *res = r->result;
	unsigned int slot = res->pool_slot;

	if (rg_slot_run(r->slot, r->cfg, &r->plan, dest, r->signal_fd, res,
			err) < 0) {
		res->outcome = RG_OUTCOME_ERROR;
		return RG_OUTCOME_ERROR;
	}
	res->struct_size = sizeof(*res);
	res->pooled = true;
	res->pool_slot = slot;
	return res->outcome;
}

/* docs/design.md §2, steps 4 to 12. */
static enum rg_outcome supervise_run(struct run *r, struct rg_error *err)
{
	int dest[2];

	/* a bad -r or -d fails as in the child, before anything is made */
	if (rg_root_check(r->cfg, r->plan.root_prefix, err) < 0) {
		r->result->exit_code = 255;
		r->result->cpu_time = 0.0;
		return RG_OUTCOME_SETUP_FAILED;
	}
	if (open_input(r, err) < 0 || open_outputs(r, dest, err) < 0)
		return RG_OUTCOME_ERROR;
	if (take_slot(r, err) < 0)
		return RG_OUTCOME_ERROR;
	rg_slot_prewarm(r->slot, r->cfg);
	if (rg_slot_runs_itself(r->slot))
		return run_by_slot(r, dest, err);
	return run_child(r, dest, err);
}

static void init_common(struct run *r, const struct rg_config *cfg,
			struct rg_result *result)
{
	memset(r, 0, sizeof(*r));
	rg_host_waits_init(&r->host);
	r->signal_fd = r->notify_sock = -1;
	r->cfg = cfg;
	r->result = result;
	r->output_fd[0] = r->output_fd[1] = -1;
	r->input_fd = -1;
	r->streams[0].pipe_fd = r->streams[1].pipe_fd = -1;
	rg_result_init(result);
}

static int init_run(struct run *r, const struct rg_config *cfg,
		    const struct rg_slot_source *source,
		    struct rg_result *result, struct rg_error *err)
{
	init_common(r, cfg, result);
	r->source = source;
	note_input(r);
	if (!cfg->file || !cfg->argv)
		return rg_fail(err, EINVAL, "no command specified");
	if (prepare_plan(r, err) < 0)
		return -1;
	return block_signals(r, &r->signal_fd, err);
}

/*
 * The outcome of a run that got this far; a host left unclean after a
 * described run is still a failure, and the caller must hear of it.
 */
static enum rg_outcome run_outcome(struct run *r, enum rg_outcome outcome,
				   struct rg_error *err)
{
	struct rg_error release_err;

	if (finish(r, &release_err) == 0 || outcome == RG_OUTCOME_ERROR ||
	    outcome == RG_OUTCOME_SETUP_FAILED)
		return outcome;
	*err = release_err;
	return RG_OUTCOME_CLEANUP_FAILED;
}

enum rg_outcome rg_run_with(const struct rg_config *cfg,
			    const struct rg_slot_source *source,
			    struct rg_result *result, struct rg_error *err)
{
	struct rg_result own;
	enum rg_outcome outcome = RG_OUTCOME_ERROR;
	struct run r;

	if (rg_abi_check(result,
			 RG_SIZE_THROUGH(struct rg_result, stream_truncated),
			 "rg_result", err) < 0)
		return RG_OUTCOME_ERROR;
	if (init_run(&r, cfg, source, &own, err) == 0)
		outcome = supervise_run(&r, err);
	/* finish() even after a failed init: it undoes what init did */
	own.outcome = run_outcome(&r, outcome, err);
	rg_abi_copy_out(result, &own, sizeof(own));
	return own.outcome;
}

void rg_run_prepare(struct rg_run_prep *prep)
{
	struct rg_error ignored;

	rg_host_waits_open(&prep->host);
	/* else the run makes them itself, and fails as it would */
	prep->ready = rg_supervisor_open(&prep->sup, &ignored) == 0;
	if (!prep->ready)
		rg_host_waits_close(&prep->host);
}

/*
 * In a resident slot's runner: no signals of our own (the client passes
 * its on), the files opened and the slot taken by the client.
 */
enum rg_outcome rg_run_planned(struct rg_planned_run *p,
			       struct rg_result *result, struct rg_error *err)
{
	enum rg_outcome outcome = RG_OUTCOME_ERROR;
	const int dest[2] = { p->cfg->output[0].fd, p->cfg->output[1].fd };
	struct run r;

	init_common(&r, p->cfg, result);
	r.plan = *p->plan;
	r.slot = p->slot;
	r.signal_fd = p->signal_fd;
	r.notify_sock = p->notify_sock;
	r.supervisor_in_slot = true;
	r.exits_after = p->exits_after;
	if (p->prep && p->prep->ready) {
		r.sup = p->prep->sup;
		r.host = p->prep->host;
		r.host_open = true;
		p->prep->ready = false;
	}
	/* born in the slot: the child needs no barrier (spawn.h) */
	r.plan.open_window = open_window_in_child;
	r.plan.window_arg = &r;
	outcome = run_child(&r, dest, err);
	result->outcome = run_outcome(&r, outcome, err);
	for (int i = 0; i < 2; i++)
		p->forwarded[i] = r.streams[i].forwarded;
	return result->outcome;
}
