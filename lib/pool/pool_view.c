/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read-only view of a pool for administrators (rg_pool_show), and the
 * pid of a slot's keeper.
 */
#include "pool/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/base.h"
#include "cgroup/cgroup.h"
#include "ns/ns.h"
#include "pool/keeper.h"
#include "rg-build-config.h"

static enum rg_pool_slot_state slot_state(int dir_fd, unsigned int index,
					  const struct slot_record *rec)
{
	char lock[32];
	int fd;

	snprintf(lock, sizeof(lock), "slot-%u.lock", index);
	fd = openat(dir_fd, lock,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 &&
	    errno == EWOULDBLOCK) {
		close(fd);
		return RG_POOL_SLOT_HELD;
	}
	rg_close_fd(&fd);
	return rec->state == SLOT_IN_USE ? RG_POOL_SLOT_DIRTY :
					   RG_POOL_SLOT_FREE;
}

static void fill_slot_info(int dir_fd, unsigned int index,
			   struct rg_pool_slot_info *s)
{
	struct slot_record rec;

	memset(s, 0, sizeof(*s));
	s->struct_size = sizeof(*s);
	s->index = index;
	rg_pool_read_record(dir_fd, index, &rec);
	s->state = slot_state(dir_fd, index, &rec);
	s->holder = s->state == RG_POOL_SLOT_FREE ? 0 : rec.holder;
	s->runs = rec.runs;
	s->last_reset = rec.last_reset;
	s->settings_known = rec.flags & SLOT_SETTINGS_KNOWN;
	s->memory_limit = rec.memory_limit;
	snprintf(s->cpuset, sizeof(s->cpuset), "%s", rec.cpuset);
}

int rg_pool_slot_keeper(const char *dir, unsigned int index, pid_t *pid,
			struct rg_error *err)
{
	char name[32];
	int dir_fd;

	if (rg_pool_open_dir(dir ? dir : RG_POOL_DIR_DEFAULT, false, &dir_fd,
			     err) < 0)
		return -1;
	rg_pool_slot_name(index, name, sizeof(name));
	*pid = rg_keeper_probe(dir_fd, name);
	close(dir_fd);
	return 0;
}

static void fill_pool_info(const struct pool_header *h,
			   struct rg_pool_info *info)
{
	struct rg_pool_info own = { .struct_size = sizeof(own) };

	own.size = h->size;
	own.cgroup_version = (int)h->cgroup_version;
	snprintf(own.cgroup_path, sizeof(own.cgroup_path), "%s",
		 h->cgroup_path);
	own.favordynmods = h->flags & RG_POOL_FAVORDYNMODS;
	own.created = h->created;
	rg_abi_copy_out(info, &own, sizeof(own));
}

/* The caller's array: elements of slot_size bytes, as far as it knows. */
static int fill_slots(int dir_fd, unsigned int count, size_t slot_size,
		      struct rg_pool_slot_info **slots, struct rg_error *err)
{
	char *array = calloc(count, slot_size);

	if (!array)
		return rg_fail(err, errno, "allocating the pool view");
	for (unsigned int i = 0; i < count; i++) {
		struct rg_pool_slot_info own;
		void *element = array + (size_t)i * slot_size;

		fill_slot_info(dir_fd, i, &own);
		memcpy(element, &slot_size, sizeof(slot_size));
		rg_abi_copy_out(element, &own, sizeof(own));
	}
	*slots = (struct rg_pool_slot_info *)(void *)array;
	return 0;
}

int rg_pool_show(const char *dir, struct rg_pool_info *info,
		 struct rg_pool_slot_info **slots, size_t slot_size,
		 struct rg_error *err)
{
	struct pool_header h;
	int dir_fd, rc;

	*slots = NULL;
	if (rg_abi_check(info, RG_SIZE_THROUGH(struct rg_pool_info, created),
			 "rg_pool_info", err) < 0)
		return -1;
	if (slot_size < RG_SIZE_THROUGH(struct rg_pool_slot_info, cpuset))
		return rg_fail(err, EINVAL,
			       "slot_size %zu is too small: pass "
			       "sizeof(struct rg_pool_slot_info)",
			       slot_size);
	if (!dir)
		dir = RG_POOL_DIR_DEFAULT;
	if (rg_pool_open_dir(dir, false, &dir_fd, err) < 0)
		return -1;
	if (rg_pool_read_header(dir_fd, &h) < 0) {
		close(dir_fd);
		return rg_fail(err, ENOENT, "no pool in `%s'", dir);
	}
	fill_pool_info(&h, info);
	rc = fill_slots(dir_fd, h.size, slot_size, slots, err);
	close(dir_fd);
	return rc;
}
