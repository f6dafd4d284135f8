/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Items pool.*: where the pool is configured and from which source, and
 * the pool on disk as rg_pool_show() reads it (no lock is taken, nothing
 * is made): whether it fits the host and the parent, each slot's state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <runguard/pool.h>

#include "check/check_internal.h"
#include "base/base.h"
#include "pool/pool.h"
#define TEXT_LEN 1100

struct pool_view {
	const char *dir;
	char destroy[PATH_MAX + 64];
	struct rg_pool_info info;
	struct rg_pool_slot_info *slots;
};

/* The pool was made for another host setup: it must be made again. */
static bool check_fit(struct rg_check_ctx *c, struct pool_view *v)
{
	char want[256];
	int mode = c->mode == RG_CGROUP_V2 ? 2 : 1;

	if (c->mode_known && v->info.cgroup_version != mode) {
		rg_check_add(c->report, "pool", RG_CHECK_ERROR, v->destroy,
			     "%s was made for cgroup v%d, the host is v%d",
			     v->dir, v->info.cgroup_version, mode);
		return false;
	}
	if (rg_pool_cgroup_path(v->dir, c->parent, want, sizeof(want), NULL) ==
		    0 &&
	    strcmp(want, v->info.cgroup_path)) {
		rg_check_add(c->report, "pool", RG_CHECK_WARNING, v->destroy,
			     "%s keeps its cgroups in %s, not below the configured parent (%s)",
			     v->dir, v->info.cgroup_path, want);
		return false;
	}
	return true;
}

static void describe(struct rg_check_ctx *c, const struct pool_view *v)
{
	char grow[64] = "";

	if (v->info.size < c->o.pool_size)
		snprintf(grow, sizeof(grow), ", grows to %u at the next run",
			 c->o.pool_size);
	rg_check_add(c->report, "pool", RG_CHECK_OK, NULL,
		     "%u slots in %s (%s)%s, cgroups in %s (v%d)%s",
		     v->info.size, v->dir,
		     c->o.pool_source ? c->o.pool_source : "set by the caller",
		     grow, v->info.cgroup_path, v->info.cgroup_version,
		     v->info.favordynmods ? ", favordynmods" : "");
}

static void check_slots(struct rg_check_ctx *c, const struct pool_view *v)
{
	unsigned int nr[3] = { 0 }, keepers = 0;
	char held[512] = "";
	pid_t keeper;

	for (unsigned int i = 0; i < v->info.size; i++) {
		const struct rg_pool_slot_info *s = &v->slots[i];
		char item[32];

		nr[s->state]++;
		if (rg_pool_slot_keeper(v->dir, i, &keeper, NULL) == 0 && keeper)
			keepers++;
		if (s->state == RG_POOL_SLOT_HELD)
			snprintf(held + strlen(held),
				 sizeof(held) - strlen(held), " %u:%d", i,
				 (int)s->holder);
		if (s->state != RG_POOL_SLOT_DIRTY)
			continue;
		snprintf(item, sizeof(item), "pool.slot-%u", i);
		rg_check_add(c->report, item, RG_CHECK_WARNING, v->destroy,
			     "dirty: its holder (pid %d) died during a run; the next run that takes it cleans it",
			     (int)s->holder);
	}
	rg_check_add(c->report, "pool.slots", RG_CHECK_OK, NULL,
		     "%u free, %u held%s%s%s, %u dirty; %u with a keeper",
		     nr[RG_POOL_SLOT_FREE], nr[RG_POOL_SLOT_HELD],
		     *held ? " (slot:pid" : "", held, *held ? ")" : "",
		     nr[RG_POOL_SLOT_DIRTY], keepers);
}

/* Every file of the pool root's and writable by nobody else. */
static void check_files(struct rg_check_ctx *c, const struct pool_view *v)
{
	struct rg_error err = { 0 };
	char text[TEXT_LEN];

	if (rg_pool_audit(v->dir, &err) == 0) {
		rg_check_add(c->report, "pool.files", RG_CHECK_OK, NULL,
			     "root's, writable by nobody else");
		return;
	}
	/* runs refuse such a pool: made again, its files are right */
	rg_check_add(c->report, "pool.files", RG_CHECK_ERROR, v->destroy, "%s",
		     rg_error_format(&err, text, sizeof(text)));
}

/*
 * Resident slots need the keeper executable: without it every run is
 * pooled without a keeper, and says so in a warning.
 */
static void check_keeper_exe(struct rg_check_ctx *c)
{
	struct rg_error err = { 0 };
	char path[PATH_MAX], text[TEXT_LEN];
	int fd;

	if (!c->o.pool_keepers)
		return;
	fd = rg_keeper_open_exe(path, sizeof(path), &err);
	if (fd >= 0) {
		close(fd);
		rg_check_add(c->report, "pool.keeper", RG_CHECK_OK, NULL, "%s",
			     path);
		return;
	}
	rg_check_add(c->report, "pool.keeper", RG_CHECK_WARNING,
		     "install -m 755 -o root -g root build/keeper/runguard-keeper next to runguard (or meson install)",
		     "%s: runs are pooled without keepers",
		     rg_error_format(&err, text, sizeof(text)));
}

void rg_check_pool(struct rg_check_ctx *c)
{
	struct pool_view v = {
		.dir = c->o.pool_dir ? c->o.pool_dir : RG_POOL_DIR_DEFAULT,
		.info = RG_POOL_INFO_INIT,
	};
	const char *src = c->o.pool_source ? c->o.pool_source :
					     "set by the caller";
	struct rg_error err = { 0 };
	char text[TEXT_LEN];

	if (!c->o.pool_size) {
		rg_check_add(c->report, "pool", RG_CHECK_OK, NULL,
			     "none (%s): each run makes its cgroups and namespaces",
			     src);
		return;
	}
	check_keeper_exe(c);
	snprintf(v.destroy, sizeof(v.destroy),
		 "runguard --pool-dir=%s --pool-destroy=force", v.dir);
	if (rg_pool_show(v.dir, &v.info, &v.slots, sizeof(*v.slots), &err) < 0) {
		if (err.errnum == ENOENT)
			rg_check_add(c->report, "pool", RG_CHECK_OK, NULL,
				     "%u slots in %s (%s): not made yet, the first run makes it",
				     c->o.pool_size, v.dir, src);
		else
			rg_check_add(c->report, "pool", RG_CHECK_ERROR,
				     v.destroy, "%s",
				     rg_error_format(&err, text, sizeof(text)));
		return;
	}
	if (check_fit(c, &v)) {
		describe(c, &v);
		check_files(c, &v);
		check_slots(c, &v);
	}
	free(v.slots);
}
