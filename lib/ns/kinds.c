/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every part of lib/ns/ shares: the namespace kinds, the SysV object
 * kinds and the paths of a slot's pieces (kinds.h).
 */
#include "ns/kinds.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#include "base/base.h"

const struct rg_ns_kind rg_ns_kinds[NR_KINDS] = {
	[KIND_IPC] = { "ipc", "/proc/self/ns/ipc", "/proc/thread-self/ns/ipc",
		       CLONE_NEWIPC, RG_NS_IPC },
	[KIND_NET] = { "net", "/proc/self/ns/net", "/proc/thread-self/ns/net",
		       CLONE_NEWNET, RG_NS_NET },
	[KIND_UTS] = { "uts", "/proc/self/ns/uts", "/proc/thread-self/ns/uts",
		       CLONE_NEWUTS, RG_NS_UTS },
};

/* ---- paths ---- */

int rg_ns_check_name(const char *name, struct rg_error *err)
{
	if (!*name || strchr(name, '/'))
		return rg_fail(err, EINVAL, "invalid slot name \"%s\"", name);
	return 0;
}

int rg_ns_slot_path(char *buf, const char *dir, const char *name,
		    const char *suffix, struct rg_error *err)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s.%s", dir, name, suffix);

	if (n < 0 || n >= PATH_MAX)
		return rg_fail(err, ENAMETOOLONG, "path of %s/%s.%s", dir,
			       name, suffix);
	return 0;
}

int rg_ns_slot_paths(struct rg_ns_paths *p, const char *dir, const char *name,
		     struct rg_error *err)
{
	int i;

	if (rg_ns_check_name(name, err) < 0)
		return -1;
	for (i = 0; i < NR_KINDS; i++)
		if (rg_ns_slot_path(p->ns[i], dir, name, rg_ns_kinds[i].name,
				    err) < 0)
			return -1;
	return rg_ns_slot_path(p->mq, dir, name, "mq", err);
}

/* ---- SysV ids ---- */

/*
 * A program sees the ids its SysV objects get, and they must be those of
 * a new IPC namespace: otherwise they tell how many objects earlier runs
 * in the slot made. The kernel places an object at the id in
 * <kind>_next_id when that sysctl is not -1 (CONFIG_CHECKPOINT_RESTORE),
 * and any allocation sets it back to -1 (ipc/util.c, ipc_idr_alloc).
 * Neither the allocation cursor nor the sequence number can be reset.
 *
 * So a slot's IPC namespace is primed when it is made: one object of each
 * kind made and removed (the cursor is then where a new namespace's first
 * object leaves it), then <kind>_next_id set to 0 (where a new namespace
 * places its first object). A run then gets exactly a new namespace's
 * ids, and a <kind>_next_id that reads 0 after the run proves that it
 * made no object of that kind: nothing to scrub, nothing to replace. One
 * that reads -1 makes the scrub remove the objects and ask for a new
 * namespace (rg_ns_refresh). A program can tell a primed namespace only
 * by reading 0 in the sysctl where a new one reads -1.
 */

/* glibc leaves this to the caller */
union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

/*
 * How many objects the calling thread's IPC namespace has: one cheap
 * system call, where listing /proc/sysvipc costs an open, two reads and a
 * close. -1 if it cannot tell (then the listing decides).
 */
static int shm_in_use(void)
{
	struct shm_info info;

	if (shmctl(0, SHM_INFO, (struct shmid_ds *)&info) < 0)
		return -1;
	return info.used_ids;
}

static int sem_in_use(void)
{
	struct seminfo info;
	union semun arg = { .__buf = &info };

	if (semctl(0, 0, SEM_INFO, arg) < 0)
		return -1;
	return info.semusz;
}

static int msg_in_use(void)
{
	struct msginfo info;

	if (msgctl(0, MSG_INFO, (struct msqid_ds *)&info) < 0)
		return -1;
	return info.msgpool;
}

static int make_shm(void)
{
	return shmget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static int make_sem(void)
{
	return semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static int make_msg(void)
{
	return msgget(IPC_PRIVATE, IPC_CREAT | 0600);
}

static int rm_shm(int id)
{
	return shmctl(id, IPC_RMID, NULL);
}

static int rm_sem(int id)
{
	return semctl(id, 0, IPC_RMID);
}

static int rm_msg(int id)
{
	return msgctl(id, IPC_RMID, NULL);
}

const struct rg_ns_sysv_kind rg_ns_sysv_kinds[NR_SYSV] = {
	[SYSV_SHM] = { "/proc/sysvipc/shm", "/proc/sys/kernel/shm_next_id",
		       shm_in_use, make_shm, rm_shm },
	[SYSV_SEM] = { "/proc/sysvipc/sem", "/proc/sys/kernel/sem_next_id",
		       sem_in_use, make_sem, rm_sem },
	[SYSV_MSG] = { "/proc/sysvipc/msg", "/proc/sys/kernel/msg_next_id",
		       msg_in_use, make_msg, rm_msg },
};
