/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting the child with a barrier:
 *
 *   parent                          child
 *   clone3 ------------------------> set-up (cgroup, namespaces, setsid,
 *                                    rlimits, chroot, ids, caps, stdio,
 *                                    seccomp)
 *   wait for READY <---------------- report READY, block on the go pipe
 *   baselines, start clock, timer
 *   release -----------------------> execve
 *
 * Reports travel over a close-on-exec pipe: after a successful execve the
 * parent reads EOF; a failed set-up or execve sends one record with the
 * errno and a message.
 *
 * A child born in its slot's cgroup and namespaces (a resident slot's
 * runner spawns it) skips the barrier and opens the window itself:
 *
 *   parent                          child (vfork: our memory, our stack)
 *   vfork, suspended --------------> set-up, READY into the pipe,
 *                                    baselines, start clock (our memory)
 *   resumes at its execve <-------- execve
 *   reads READY, supervises
 *
 * No round trip, and no copy of our page tables and pages charged to the
 * slot (a trivial run's peak showed them).
 */
#ifndef RG_SPAWN_H
#define RG_SPAWN_H

#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "base/base.h"
#include "ns/ns.h"
#include "run/privs.h"

struct rg_cgroup;

/* Where the child goes: what spawn.c and child.c need of the run's slot. */
struct rg_child_place {
	struct rg_cgroup *cgroup;
	/* namespaces the child creates with clone3 */
	unsigned long clone_flags;
	/* namespaces the child joins with setns, or -1 */
	int ns_fd[RG_NS_COUNT];
	/* the namespaces serve later runs: no POSIX message queues */
	bool namespaces_outlive_run;
};

/*
 * A keeper's child (keeper.h) is forked by the keeper, not by the caller:
 * what it would have inherited from the caller, taken over first.
 */
struct rg_caller_state {
	int cwd_fd;
	mode_t umask;
	struct rlimit rlimits[RLIM_NLIMITS];
	/* bit i: rlimits[i] is the forking process's already, not set again */
	uint32_t rlimits_inherited;
};

/*
 * What the child reads of struct rg_config's scalars: plain data, so that a
 * keeper's wire (keeper_wire.h) copies it whole and an option added here
 * reaches a keeper's child without further code. Filled only by
 * rg_child_plan_from_config().
 */
struct rg_child_settings {
	cpu_set_t cpuset_mask;	/* the child's affinity, if has_cpuset */
	double cpu_hard;	/* seconds, for RLIMIT_CPU */
	uint64_t file_limit;	/* RLIMIT_FSIZE; RG_UNLIMITED: none */
	uint64_t process_limit; /* RLIMIT_NPROC; RG_UNLIMITED: none */
	bool has_cpu_limit;
	bool has_cpuset;
	bool core_dumps;
};

/*
 * Everything the child needs, prepared by the parent: no allocation after
 * clone. The child reads nothing else; a field added here must also go on
 * a keeper's wire (keeper_wire.c), unless the keeper sets it itself.
 */
struct rg_child_plan {
	struct rg_child_settings settings;
	const char *file;
	char *const *argv;
	const char *root;    /* NULL: no chroot */
	const char *workdir; /* in the chroot; NULL: its / */
	char **envp;
	struct rg_child_place place;	  /* the slot's (rg_slot_place) */
	const struct sock_fprog *seccomp; /* NULL: no filter */
	struct rg_privs_plan privs;
	char root_prefix[4096]; /* realpath of the prefix + '/', or "" */
	sigset_t child_sigmask; /* the caller's mask, restored before exec */
	int stdin_fd; /* becomes the command's fd 0; -1: it starts closed */
	pid_t parent_pid;
	const struct rg_caller_state *caller; /* NULL: we are the caller */
	/*
	 * Set: the child opens the timed window by calling this in our
	 * memory just before its execve (see above); -1 makes it exit 255
	 * without exec. Only with no clone flags and no cgroup to clone
	 * into, and in a process of one thread (another would run beside
	 * the child in the memory it shares).
	 */
	int (*open_window)(void *arg);
	void *window_arg;
};

enum rg_report_kind {
	RG_REPORT_READY = 1,
	RG_REPORT_SETUP_FAILED = 2,
	RG_REPORT_EXEC_FAILED = 3,
	RG_REPORT_WARNING = 4, /* set-up goes on */
};

/* One record on the report pipe; smaller than PIPE_BUF, so atomic. */
struct rg_report {
	int kind;
	int errnum;
	int64_t maxrss_kib; /* READY: the child's own so far (getrusage) */
	char message[512];
};

/* The four pipes between parent and child: [0] read end, [1] write end. */
struct rg_spawn_pipes {
	int report[2];
	int go[2];
	int out[2][2];
};

struct rg_child {
	pid_t pid;
	int pidfd;
	int report_fd; /* read end of the report pipe */
	int go_fd;     /* write end of the barrier pipe */
	/*
	 * Its wait on a run queue (waits.h) as the timed window opened and
	 * as it ended, ns (-1 unknown), read through stat_fd (-1).
	 */
	int stat_fd;
	int64_t run_delay_base, run_delay_end;
	/*
	 * Its resident size's high-water mark at READY, KiB (-1 unknown):
	 * the image it was forked from, which the kernel keeps in the
	 * command's ru_maxrss after exec. A ru_maxrss not above it (and a
	 * margin) is not the command's.
	 */
	int64_t setup_maxrss_kib;
	/*
	 * From rg_spawn_prepare() to rg_spawn(): the pipes, both ends. The
	 * output read ends are the streams' (rg_stream_init) before the
	 * child exists; rg_spawn() moves the rest into the fields above.
	 */
	struct rg_spawn_pipes pipes;
};

/* The pipe ends as the child sees them. */
struct rg_child_fds {
	int report_fd;	  /* write end of the report pipe */
	int go_fd;	  /* read end of the barrier pipe */
	int output_fd[2]; /* write ends of the stdout/stderr pipes */
	int parent_fd[4]; /* the parent's ends, closed first */
};

/*
 * What of cfg the child reads: settings and the strings (pointing into
 * cfg, which must outlive the plan).
 */
void rg_child_plan_from_config(struct rg_child_plan *plan,
			       const struct rg_config *cfg);

/* The child's code; never returns. */
_Noreturn void rg_child_main(const struct rg_child_plan *plan,
			     const struct rg_child_fds *fds);

/*
 * The pipes (close-on-exec, above fd 2, output read ends non-blocking),
 * before the child exists: its output can be watched from before it runs
 * (a child that opens the window itself is running the command by the
 * time rg_spawn() returns, and the order in which its streams became
 * readable is the order they are forwarded in). Every fd of child is -1
 * or one of these; rg_child_close() closes them. barrier: the child
 * waits for rg_spawn_release() (a plan without open_window); else no
 * barrier pipe is made.
 */
int rg_spawn_prepare(struct rg_child *child, bool barrier,
		     struct rg_error *err);

/*
 * clone3 the child (with the slot's namespace flags and, on cgroup v2,
 * directly into the slot's cgroup), with the pipes of rg_spawn_prepare(),
 * which comes first. With plan->open_window: vfork it and return once it
 * has exec'd or exited. On failure the pipes are closed.
 */
int rg_spawn(const struct rg_child_plan *plan, struct rg_child *child,
	     struct rg_error *err);

/*
 * Wait for the child's READY, logging its warnings. On a set-up failure:
 * -1 with the child's message in err and *setup_failed set; the child exits
 * with 255.
 */
int rg_spawn_wait_ready(const struct rg_config *cfg, struct rg_child *child,
			bool *setup_failed, struct rg_error *err);

/*
 * Let the child exec. -1 if it cannot be told; *setup_failed then says
 * whether it died before (after its READY: the OOM killer in its set-up).
 */
int rg_spawn_release(struct rg_child *child, bool *setup_failed,
		     struct rg_error *err);

/*
 * After the child is gone: did execve fail? Returns 1 with *errnum set,
 * 0 if not.
 */
int rg_spawn_exec_failed(struct rg_child *child, int *errnum);

/* Close what is still open (pipes, pidfd). The child must be reaped. */
void rg_child_close(struct rg_child *child);

#endif
