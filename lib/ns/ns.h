/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Persisted namespaces of pooled slots. Each slot keeps an IPC, a network
 * and a UTS namespace alive between runs as nsfs bind mounts in a
 * directory (the pool directory's ns/, whose layout docs/pool.md's "Files"
 * describes):
 *
 *   <dir>/<name>.ipc  .net  .uts   bind mounts of /proc/<helper>/ns/...
 *   <dir>/<name>.mq/                the slot IPC namespace's mqueue fs
 *
 * Runs join them with setns(), so no namespace is created or destroyed per
 * run (net and IPC namespace teardown is globally serialized and waits for
 * RCU). Creation, removal and replacement mount in the caller's mount
 * namespace; the per-run calls (open, scrub) do not mount anything.
 */
#ifndef RG_NS_H
#define RG_NS_H

#include <stdbool.h>

struct rg_error;

/* The namespaces a slot holds, in the order of its fds. */
enum rg_ns_index {
	RG_NS_IPC,
	RG_NS_NET,
	RG_NS_MNT,
	RG_NS_UTS,
	RG_NS_COUNT,
};

/*
 * Make dir (created with mode 0700, its missing parents 0755) a private
 * mount point: bind-mounted onto itself, then MS_PRIVATE. The nsfs binds
 * made inside it then neither propagate to other mount namespaces (where
 * copies would keep our namespaces alive after rg_ns_remove) nor receive
 * mounts from elsewhere.
 *
 * Idempotent: does nothing when the topmost mount on dir is already private
 * (/proc/self/mountinfo). A mount on dir that is not private is never
 * changed: a private bind is stacked on top of it. Concurrent callers are
 * serialized with flock() on <dir>/.ns-prepare.lock (a file left in place;
 * do not take flocks on it yourself).
 */
int rg_ns_prepare_dir(const char *dir, struct rg_error *err);

/*
 * Create the namespaces of slot name in dir (prepared with
 * rg_ns_prepare_dir): a forked helper unshares IPC, net and UTS, sets
 * kernel.shm_rmid_forced=1 in the new IPC namespace and primes its SysV
 * ids (kinds.c, "SysV ids": a run gets the ids of a new namespace, and the
 * scrub can tell whether it made any object), mounts its mqueue fs
 * on <dir>/<name>.mq and binds its three namespaces onto <dir>/<name>.ipc,
 * .net and .uts. The loopback device stays down, as in a fresh net ns.
 * Leftovers of an earlier creation under that name are removed first; on
 * failure everything of that name is removed again.
 *
 * name: non-empty, no '/', not "." or "..".
 */
int rg_ns_create(const char *dir, const char *name, struct rg_error *err);

/*
 * Per run: open the slot's namespaces for setns() into fds[RG_NS_IPC],
 * fds[RG_NS_NET] and fds[RG_NS_UTS] (O_RDONLY | O_CLOEXEC);
 * fds[RG_NS_MNT] is -1. Each file is checked to be an nsfs file of the
 * right type. Fails with errno ENOENT when a file is missing and ESTALE
 * when one is not (or no longer) a mounted namespace of that type, e.g.
 * after a reboot or an unmount: re-create the slot then. On failure every
 * fd is -1 (nothing stays open). The fds stay valid until closed, even
 * across rg_ns_replace_net (they then refer to the old namespace).
 */
int rg_ns_open(const char *dir, const char *name, int fds[RG_NS_COUNT],
	       struct rg_error *err);

/* Close what rg_ns_open opened and set the fds to -1. */
void rg_ns_close(int fds[RG_NS_COUNT]);

/*
 * Unmount (MNT_DETACH) and unlink every piece of slot name. Missing pieces
 * are fine. The namespaces die when the last fd or process holding them
 * goes.
 */
int rg_ns_remove(const char *dir, const char *name, struct rg_error *err);

/* What rg_ns_scrub found and removed. */
struct rg_ns_scrub {
	unsigned int shm;     /* SysV shared memory segments */
	unsigned int sem;     /* SysV semaphore sets */
	unsigned int msg;     /* SysV message queues */
	unsigned int mqueues; /* POSIX message queues */
	/* unix sockets still in the net ns (stuck in flight): replace it */
	unsigned int unix_sockets_left;
	/*
	 * The run made SysV objects: the ids the namespace gives next are
	 * no longer a new namespace's (they would tell the next run how
	 * many were made). Replace it.
	 */
	bool ipc_used;
	/*
	 * The calling thread could not return to its own IPC or net
	 * namespace: it must not be used for anything else (let it exit).
	 */
	bool thread_stranded;
};

/*
 * After a run, with every process of the slot killed: remove every SysV
 * object of the slot's IPC namespace and tell whether the run made any
 * (the calling thread joins it with setns and returns; a run that made
 * none costs three sysctl reads there), unlink every POSIX message queue
 * in <dir>/<name>.mq
 * and count the unix sockets left in the slot's net namespace. In-flight
 * sockets (passed over SCM_RIGHTS, e.g. to themselves) live until the
 * unix garbage collector runs: the scrub kicks it and waits up to 200 ms.
 * Sockets still left then are reported, not an error: replace the net
 * namespace (rg_ns_replace_net).
 *
 * fds: from rg_ns_open; report: required (zeroed first). Fails with ESTALE
 * when <dir>/<name>.mq is not an mqueue mount. The calling thread must
 * have no SysV semaphore undo state of its own (setns to another IPC namespace applies it).
 */
/*
 * The unix sockets of net namespace net_fd (a run's own, about to go):
 * the garbage collector kicked and waited for as rg_ns_scrub does, so that
 * a file a run left in flight (and a lock on it) is let go before the
 * next run. *left: sockets still there after 200 ms.
 */
int rg_ns_settle_unix(int net_fd, unsigned int *left, struct rg_error *err);

int rg_ns_scrub(const int fds[RG_NS_COUNT], const char *dir, const char *name,
		struct rg_ns_scrub *report, struct rg_error *err);

/*
 * The SysV and unix socket parts of rg_ns_scrub, in the calling thread's
 * own IPC and net namespaces (a resident slot's keeper lives in the
 * slot's): no setns. report is zeroed first.
 */
int rg_ns_scrub_here(struct rg_ns_scrub *report, struct rg_error *err);

/* The POSIX message queue part of rg_ns_scrub, added to report. */
int rg_ns_scrub_mqueues(const char *dir, const char *name,
			struct rg_ns_scrub *report, struct rg_error *err);

/*
 * Give slot name a fresh net namespace (when rg_ns_scrub reports sockets
 * left): a forked helper unshares a net ns, detaches the old bind and binds
 * the new one. fds from an earlier rg_ns_open still refer to the old
 * namespace: reopen. If it fails after the detach, the slot has no net
 * namespace and rg_ns_open fails with ESTALE: re-create the slot.
 */
int rg_ns_replace_net(const char *dir, const char *name, struct rg_error *err);

/*
 * Give slot name a fresh, primed IPC namespace (when rg_ns_scrub reports
 * ipc_used), and mount its mqueue fs on <dir>/<name>.mq instead of the
 * old one's. As rg_ns_replace_net otherwise.
 */
int rg_ns_replace_ipc(const char *dir, const char *name, struct rg_error *err);

/*
 * After rg_ns_scrub: the new namespaces report asks for (IPC when
 * ipc_used, net when unix_sockets_left), made by one helper outside any
 * run, and fds (from rg_ns_open) reopened on them. Does nothing when the
 * report asks for nothing. On failure fds are -1.
 */
int rg_ns_refresh(const char *dir, const char *name,
		  const struct rg_ns_scrub *report, int fds[RG_NS_COUNT],
		  struct rg_error *err);

#endif
