/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to lib/ns/: the namespaces a slot keeps, the SysV object kinds
 * its IPC namespace can hold, and the paths of a slot's pieces in the pool
 * directory.
 */
#ifndef RG_NS_KINDS_H
#define RG_NS_KINDS_H

#include <limits.h>

#include "ns/ns.h"

struct rg_error;

/* ipc/mqueue.c; not in the uapi headers */
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif

/* stacked mounts on one piece: only from racing creations, never many */
#define MAX_STACKED 16

enum ns_kind_id { KIND_IPC, KIND_NET, KIND_UTS, NR_KINDS };

struct rg_ns_kind {
	const char *name;   /* file suffix and /proc/.../ns/<name> */
	const char *self;   /* the helper's own, to bind */
	const char *thread; /* the calling thread's, to come back */
	int type;	    /* CLONE_NEW*, also NS_GET_NSTYPE's answer */
	enum rg_ns_index index;
};

extern const struct rg_ns_kind rg_ns_kinds[NR_KINDS];

struct rg_ns_paths {
	char ns[NR_KINDS][PATH_MAX];
	char mq[PATH_MAX];
};

/* A slot name: not empty, no '/'. */
int rg_ns_check_name(const char *name, struct rg_error *err);
/* buf (PATH_MAX) = "<dir>/<name>.<suffix>" */
int rg_ns_slot_path(char *buf, const char *dir, const char *name,
		    const char *suffix, struct rg_error *err);
/* Every piece's path; checks the name first. */
int rg_ns_slot_paths(struct rg_ns_paths *p, const char *dir, const char *name,
		     struct rg_error *err);

enum { SYSV_SHM, SYSV_SEM, SYSV_MSG, NR_SYSV };

/* Paths below /proc show the IPC namespace of the thread that opens them. */
struct rg_ns_sysv_kind {
	const char *list; /* one line per object, after a header */
	const char *next_id;
	int (*in_use)(void);
	int (*make)(void);
	int (*rmid)(int id);
};

/* See the comment in kinds.c on why ids are primed. */
extern const struct rg_ns_sysv_kind rg_ns_sysv_kinds[NR_SYSV];

#endif
