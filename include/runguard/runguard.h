/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librunguard: run one untrusted program inside a sandbox and report exactly
 * what it used.
 *
 * Usage: create a configuration with rg_config_new(), set what you need,
 * call rg_run() (as many times as you like), free it with rg_config_free().
 * Every call that can fail takes a struct rg_error out-parameter and returns
 * -1 (or NULL) on failure, 0 (or a pointer) on success; rg_run() returns
 * an enum rg_outcome.
 *
 * ABI: the library's soname is librunguard.so.0 and stays so while these
 * headers only grow. Public structs that the library reads or fills begin
 * with struct_size, which the caller sets to sizeof the struct it was
 * compiled with (the *_INIT macros do it): the library reads and writes no
 * byte past it, and fields the caller does not know are zero to the
 * library. struct rg_error is fixed as it is. See docs/abi.md.
 *
 * Timed window: the child performs its whole set-up (cgroup membership,
 * namespaces, chroot, ids, rlimits, environment, stdio, seccomp) first and
 * blocks. Only then are the CPU/memory baselines read, the wall clock and the
 * hard wall timer started and the child released to execve(). The wall clock
 * stops when the child's exit is observed, before any draining or clean-up.
 */
#ifndef RUNGUARD_RUNGUARD_H
#define RUNGUARD_RUNGUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RG_EXPORT __attribute__((visibility("default")))

/* Value for limits that are not set. */
#define RG_UNLIMITED UINT64_MAX

/* Errors: errnum is an errno value (0 when none applies). Fixed size. */
struct rg_error {
	int errnum;
	char message[1024];
};

/* "message: strerror(errnum)" (or just the message) into buf. */
RG_EXPORT const char *rg_error_format(const struct rg_error *err, char *buf,
				      size_t len);

enum rg_stream_id {
	RG_STDOUT = 0,
	RG_STDERR = 1,
};

enum rg_log_level {
	RG_LOG_ERROR = 0,
	RG_LOG_WARNING = 1,
	RG_LOG_NOTICE = 2,
	RG_LOG_DEBUG = 3,
};

typedef void (*rg_log_fn)(void *userdata, enum rg_log_level level,
			  const char *message);

struct rg_config;

RG_EXPORT struct rg_config *rg_config_new(struct rg_error *err);
RG_EXPORT void rg_config_free(struct rg_config *cfg);

/*
 * The command: argv[0..] is passed unchanged; file is looked up like
 * execvp() does, with the child's (reset) PATH, inside the new root and
 * working directory.
 */
RG_EXPORT int rg_config_set_command(struct rg_config *cfg, const char *file,
				    char *const argv[], struct rg_error *err);

/* chroot into dir. With a prefix set, dir must lie below it. */
RG_EXPORT int rg_config_set_root(struct rg_config *cfg, const char *dir,
				 struct rg_error *err);
RG_EXPORT int rg_config_set_root_prefix(struct rg_config *cfg,
					const char *prefix,
					struct rg_error *err);
/* Working directory inside the root (ignored without a root, as DOMjudge). */
RG_EXPORT int rg_config_set_workdir(struct rg_config *cfg, const char *dir,
				    struct rg_error *err);

/*
 * Identity of the command. Without a user, the child drops to the caller's
 * real uid. The command never runs as root: uid 0 is refused.
 */
RG_EXPORT int rg_config_set_user(struct rg_config *cfg, uid_t uid,
				 struct rg_error *err);
RG_EXPORT int rg_config_set_group(struct rg_config *cfg, gid_t gid,
				  struct rg_error *err);

/* Time limits in seconds; hard >= soft > 0. */
RG_EXPORT int rg_config_set_wall_limit(struct rg_config *cfg, double soft,
				       double hard, struct rg_error *err);
RG_EXPORT int rg_config_set_cpu_limit(struct rg_config *cfg, double soft,
				      double hard, struct rg_error *err);

/* Memory (RAM + swap) of the whole run, in bytes. */
RG_EXPORT int rg_config_set_memory_limit(struct rg_config *cfg, uint64_t bytes,
					 struct rg_error *err);
/* RLIMIT_FSIZE in bytes. */
RG_EXPORT int rg_config_set_file_limit(struct rg_config *cfg, uint64_t bytes,
				       struct rg_error *err);
/* RLIMIT_NPROC (counts every task of the run user, system-wide). */
RG_EXPORT int rg_config_set_process_limit(struct rg_config *cfg,
					  uint64_t count, struct rg_error *err);
/* Pin to CPUs, e.g. "2" or "0,2-3"; every CPU must be online. */
RG_EXPORT int rg_config_set_cpuset(struct rg_config *cfg, const char *cpus,
				   struct rg_error *err);
/* Core dumps are off (RLIMIT_CORE 0) unless allowed here. */
RG_EXPORT void rg_config_set_core_dumps(struct rg_config *cfg, bool allow);

/*
 * Where the command's stdout/stderr go. Default: the caller's fd 1 / fd 2.
 * A file is created (mode 0600, truncated) by the supervisor, relative to
 * the caller's working directory, when the run starts.
 */
RG_EXPORT int rg_config_set_output_file(struct rg_config *cfg,
					enum rg_stream_id stream,
					const char *path, struct rg_error *err);
RG_EXPORT int rg_config_set_output_fd(struct rg_config *cfg,
				      enum rg_stream_id stream, int fd,
				      struct rg_error *err);
/*
 * Where the command's stdin comes from. Default: the caller's fd 0, which a
 * multi-threaded judge cannot redirect per run. A file is opened read-only
 * by rg_run(), relative to the caller's working directory, before the run
 * (outside the timed window); a missing file fails the call with an error.
 * A fd stays the caller's: rg_run() neither closes nor moves it.
 * RG_INPUT_CLOSED (or a fd that is not open when rg_run() starts): the
 * command starts with its stdin closed.
 */
#define RG_INPUT_CLOSED (-1)
RG_EXPORT int rg_config_set_input_file(struct rg_config *cfg, const char *path,
				       struct rg_error *err);
RG_EXPORT int rg_config_set_input_fd(struct rg_config *cfg, int fd,
				     struct rg_error *err);
/* Forward at most this many bytes per stream; the rest is read and dropped. */
RG_EXPORT void rg_config_set_stream_limit(struct rg_config *cfg,
					  uint64_t bytes);

/*
 * Environment: by default only PATH of the caller is kept. Each assignment
 * "NAME=VALUE" is then set; a bare "NAME" unsets it.
 */
RG_EXPORT void rg_config_set_keep_environment(struct rg_config *cfg, bool keep);
RG_EXPORT int rg_config_add_environment(struct rg_config *cfg,
					const char *assignment,
					struct rg_error *err);

/* Send SIGUSR1 to this pid when the hard wall limit is hit. */
RG_EXPORT void rg_config_set_timeout_notify_pid(struct rg_config *cfg,
						pid_t pid);

/* The seccomp filter (on by default; see docs/security.md). */
RG_EXPORT void rg_config_set_syscall_filter(struct rg_config *cfg,
					    bool enabled);

/* Time between SIGTERM and SIGKILL when a run is aborted (default 0.1 s). */
RG_EXPORT int rg_config_set_kill_grace(struct rg_config *cfg, double seconds,
				       struct rg_error *err);

/* Parent cgroup (same name in every hierarchy), default "runguard". */
RG_EXPORT int rg_config_set_cgroup_parent(struct rg_config *cfg,
					  const char *name,
					  struct rg_error *err);

/*
 * While rg_run() runs, block SIGTERM, SIGINT and SIGHUP in the calling
 * thread and treat their arrival as "abort this run" (kill, clean up, report
 * received_signal). On by default; turn off in multi-threaded callers that
 * handle signals themselves and use a cancel fd instead.
 */
RG_EXPORT void rg_config_set_handle_signals(struct rg_config *cfg, bool handle);
/* The run is aborted as by SIGTERM when this fd becomes readable. */
RG_EXPORT void rg_config_set_cancel_fd(struct rg_config *cfg, int fd);

/*
 * Make the caller a child subreaper and reap every orphaned descendant of the
 * run before rg_run() returns. Only for callers that have no other children
 * (the runguard CLI): it reaps any child of the calling process.
 */
RG_EXPORT void rg_config_set_reap_all_children(struct rg_config *cfg,
					       bool reap);

RG_EXPORT void rg_config_set_log(struct rg_config *cfg, rg_log_fn fn,
				 void *userdata, enum rg_log_level max_level);

/*
 * Where the calls that take no rg_config report what they are doing:
 * pool creation, keepers, destruction and prewarm (pool.h) say it at
 * RG_LOG_NOTICE, slot by slot and file tree by file tree. Default: nowhere.
 * Process-wide: set it before such calls, not while one is under way.
 */
RG_EXPORT void rg_set_log(rg_log_fn fn, void *userdata,
			  enum rg_log_level max_level);

/* Bits of rg_result.wall_limit and cpu_limit. */
#define RG_LIMIT_SOFT 1u
#define RG_LIMIT_HARD 2u

/* What a run's tasks waited for (struct rg_result's wait_time). */
enum rg_wait {
	RG_WAIT_CPU = 0,       /* runnable, but no CPU was free */
	RG_WAIT_IO = 1,	       /* for I/O (a read from disk, say) */
	RG_WAIT_MEMORY = 2,    /* reclaim, refaults, compaction, swap-in */
	RG_WAIT_THROTTLED = 3, /* held back by a CPU quota */
	RG_NR_WAITS = 4
};

/*
 * How a run ended, from rg_run() and in rg_result.outcome. Every outcome
 * but RG_OUTCOME_ERROR comes with a result that describes the run; every
 * outcome but the first two with err saying what went wrong.
 */
enum rg_outcome {
	/* nothing ran, or it cannot be described: err says why */
	RG_OUTCOME_ERROR = -1,
	/* the command ran to completion, whatever its exit status */
	RG_OUTCOME_COMPLETED = 0,
	/*
	 * execve() failed with exec_errno (exit_code 255, the reason on the
	 * command's stderr): the submission's fault, not the host's
	 */
	RG_OUTCOME_EXEC_FAILED = 1,
	/* the child's set-up before exec failed (exit_code 255) */
	RG_OUTCOME_SETUP_FAILED = 2,
	/* the command ran, but what it left could not be cleaned up */
	RG_OUTCOME_CLEANUP_FAILED = 3,
};

/* "completed", "exec-failed", ...; "unknown" for other values. */
RG_EXPORT const char *rg_outcome_name(enum rg_outcome outcome);

struct rg_result {
	/* set by the caller: sizeof(struct rg_result), see RG_RESULT_INIT */
	size_t struct_size;
	enum rg_outcome outcome;
	/* wait status of the command as returned by wait4() */
	int status;
	/* exit status, 128 + signal if killed, 255 if it never ran */
	int exit_code;
	/* signal that terminated the command, 0 if it exited */
	int term_signal;
	/*
	 * Signal the supervisor acted on: SIGALRM for the hard wall limit,
	 * SIGTERM/SIGINT/SIGHUP received (or SIGTERM for the cancel fd); 0.
	 */
	int received_signal;
	/* RG_OUTCOME_EXEC_FAILED: why execve() failed; else 0 */
	int exec_errno;

	/* seconds */
	double wall_time;
	double user_time;
	double sys_time;
	/* cgroup CPU time of every process of the run; < 0 if unavailable */
	double cpu_time;
	/* RG_LIMIT_* bits */
	unsigned wall_limit;
	unsigned cpu_limit;

	/* peak memory of the whole run (RAM + swap where accounted) */
	uint64_t memory_bytes;
	/* how memory_bytes was measured, e.g. "memsw.max_usage_in_bytes" */
	char memory_method[40];
	/* the kernel's OOM killer killed a process of the run */
	bool oom_killed;
	/*
	 * Page faults that had to wait for I/O (the program's own code or
	 * data read back from disk): the usual reason for wall >> cpu. From
	 * the cgroup's memory.stat, else the command's rusage.
	 */
	uint64_t major_faults;

	/* the run used pool slot number pool_slot */
	bool pooled;
	unsigned int pool_slot;

	/* bytes consumed from each stream (including dropped ones) */
	uint64_t stream_bytes[2];
	/* bytes were dropped because of the stream limit */
	bool stream_truncated[2];

	/*
	 * Where the wall time went (docs/meta-file.md), measured outside the
	 * timed window: seconds during which some task of the run waited,
	 * by enum rg_wait, each valid when bit (1 << wait) of waits_known is
	 * set; how, e.g. "cgroup-psi" ("" when nothing is known).
	 */
	unsigned int waits_known;
	double wait_time[RG_NR_WAITS];
	char wait_method[40];
	/*
	 * The host's own pressure over the same window: percent of it during
	 * which some task of the host waited, by enum rg_wait (each valid
	 * when bit (1 << wait) of host_known is set).
	 */
	unsigned int host_known;
	double host_pressure[RG_NR_WAITS];
	/*
	 * One word for the gap between wall and CPU time: "none", "program",
	 * "host-cpu", "host-io", "host-memory", "own-memory-limit" (the rules
	 * are in docs/meta-file.md); "" when the waits are not known.
	 */
	char wall_time_cause[24];
	/* new fields go here, at the end */
};

/* clang-format off */
#define RG_RESULT_INIT { .struct_size = sizeof(struct rg_result) }
/* clang-format on */

/*
 * Run the command and describe it in *result (whose struct_size the caller
 * set). Returns the outcome (enum rg_outcome), which is also in
 * result->outcome. A result whose struct_size is unset or too small is
 * RG_OUTCOME_ERROR with EINVAL, and nothing is written to it.
 */
RG_EXPORT enum rg_outcome rg_run(const struct rg_config *cfg,
				 struct rg_result *result,
				 struct rg_error *err);

/* DOMjudge's time-result rule. */
enum rg_time_type {
	RG_TIME_CPU = 0,
	RG_TIME_WALL = 1,
};

/* "", "soft-timelimit" or "hard-timelimit" ("" for a malformed result). */
RG_EXPORT const char *rg_time_result(const struct rg_result *result,
				     enum rg_time_type selected);

RG_EXPORT const char *rg_version(void);

#ifdef __cplusplus
}
#endif

#endif
