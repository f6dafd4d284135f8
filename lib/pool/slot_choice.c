/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot lease's decisions, from the slot record and the run's settings
 * only (slot_choice.h): kept apart from the files, cgroups and keepers
 * they are about, so that each can be tested without root.
 */
#include "pool/slot_choice.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "cgroup/cgroup.h"

/* Compared as CPU sets: any -P list that is valid unpooled fits. */
bool rg_slot_same_cpus(const struct slot_record *rec,
		       const struct rg_config *cfg)
{
	cpu_set_t none;

	CPU_ZERO(&none);
	return CPU_EQUAL(&rec->cpus, cfg->cpuset ? &cfg->cpuset_mask : &none);
}

bool rg_slot_settings_match(const struct slot_record *rec,
			    const struct rg_config *cfg)
{
	return (rec->flags & SLOT_SETTINGS_KNOWN) &&
	       rec->memory_limit == cfg->memory_limit &&
	       rg_slot_same_cpus(rec, cfg);
}

/* Lower is better: clean and matching, clean, then dirty or unknown. */
int rg_slot_preference(const struct slot_record *rec,
		       const struct rg_config *cfg)
{
	if (rec->magic != RG_SLOT_MAGIC || rec->state != SLOT_CLEAN)
		return 2;
	return rg_slot_settings_match(rec, cfg) ? 0 : 1;
}

void rg_slot_walk_init(struct rg_slot_walk *w, const struct slot_record *recs,
		       unsigned int n, unsigned int start)
{
	memset(w, 0, sizeof(*w));
	w->recs = recs;
	w->n = n;
	w->start = start;
}

bool rg_slot_walk_next(struct rg_slot_walk *w, const struct rg_config *cfg,
		       unsigned int *index)
{
	static const struct slot_record unknown = { 0 };

	for (; w->pref <= 2; w->pref++, w->k = 0) {
		while (w->k < w->n) {
			unsigned int i = (w->start + w->k++) % w->n;
			const struct slot_record *rec = w->recs ? &w->recs[i] :
								  &unknown;

			if (rg_slot_preference(rec, cfg) == w->pref) {
				*index = i;
				return true;
			}
		}
	}
	return false;
}

/*
 * Doubled while below RG_SLOT_WAIT_MAX_MS, so the last doubling may pass
 * it: from 1 ms, the waits are 1, 2, 4, 8, 16, then 32 ms each.
 */
int rg_slot_next_wait_ms(int delay_ms)
{
	return delay_ms < RG_SLOT_WAIT_MAX_MS ? delay_ms * 2 : delay_ms;
}

unsigned int rg_slot_settings_to_write(const struct slot_record *rec,
				       const struct rg_config *cfg)
{
	bool known = rec->flags & SLOT_SETTINGS_KNOWN;
	unsigned int set = 0;

	if (!known || rec->memory_limit != cfg->memory_limit)
		set |= RG_CG_SET_MEMORY;
	if (!known || !rg_slot_same_cpus(rec, cfg))
		set |= RG_CG_SET_CPUSET;
	return set;
}

/*
 * The limit written for a run: its own, plus what a keeper that stays
 * through it holds (rounded up to whole charge batches), so that the run
 * gets all of its limit (docs/pool.md). The record keeps the run's own.
 */
uint64_t rg_slot_memory_limit(uint64_t limit, bool keeper,
			      uint64_t keeper_bytes)
{
	if (limit == RG_UNLIMITED || !keeper)
		return limit;
	return limit + rg_charge_batches(keeper_bytes);
}

/* -P as given, for --pool-show, cut with "..." when too long for it. */
static void record_cpuset(struct slot_record *rec, const struct rg_config *cfg)
{
	const char *list = cfg->cpuset ? cfg->cpuset : "";
	size_t max = sizeof(rec->cpuset) - 1;

	CPU_ZERO(&rec->cpus);
	if (cfg->cpuset)
		rec->cpus = cfg->cpuset_mask;
	snprintf(rec->cpuset, sizeof(rec->cpuset), "%s", list);
	if (strlen(list) > max)
		memcpy(rec->cpuset + max - 3, "...", 3);
}

void rg_slot_record_settings(struct slot_record *rec,
			     const struct rg_config *cfg)
{
	rec->memory_limit = cfg->memory_limit;
	record_cpuset(rec, cfg);
	rec->flags |= SLOT_SETTINGS_KNOWN | SLOT_USED;
}

bool rg_slot_wants_keeper(const struct rg_config *cfg)
{
	return cfg->pool_keeper &&
	       cfg->memory_limit >= RG_KEEPER_MIN_MEMORY_LIMIT;
}

/*
 * A new memory limit is written over a keeper when the slot holds well
 * below the limit: DOMjudge's compile, run and compare calls alternate two
 * limits, and a keeper restarted for each would attach to a cgroup every
 * call. A new or unknown cpuset is written with the slot empty (v2
 * refuses to empty the cpuset of a populated cgroup).
 */
enum rg_keeper_fate rg_slot_keeper_fate(const struct slot_record *rec,
					const struct rg_config *cfg)
{
	unsigned int set = rg_slot_settings_to_write(rec, cfg);

	if (!rg_slot_wants_keeper(cfg) || (set & RG_CG_SET_CPUSET))
		return RG_KEEPER_GOES;
	if (!(set & RG_CG_SET_MEMORY) || cfg->memory_limit == RG_UNLIMITED)
		return RG_KEEPER_STAYS;
	return RG_KEEPER_STAYS_IF_ROOM;
}

bool rg_slot_keeper_fits(uint64_t usage, uint64_t limit)
{
	return usage + RG_KEEPER_LIMIT_HEADROOM <= limit;
}

/*
 * The common call: its keeper serves the slot with this run's settings in
 * force, and resets it itself. Not with the exact v2 peak, which needs
 * the slot's cgroup opened (a new one per run where the peak cannot be
 * reset).
 */
bool rg_slot_resident_as_is(const struct slot_record *rec,
			    const struct rg_config *cfg, bool exact_v2_peak,
			    bool has_keeper)
{
	return rg_slot_wants_keeper(cfg) && !exact_v2_peak && has_keeper &&
	       rg_slot_settings_match(rec, cfg);
}

/*
 * A record that cannot be read is of no holder that finished: dirty, as
 * one still in use (its holder died).
 */
enum rg_slot_found rg_slot_found(const struct slot_record *rec, bool read_ok)
{
	if (!read_ok || rec->state != SLOT_CLEAN)
		return RG_SLOT_FOUND_DIRTY;
	if (rec->flags & SLOT_KEEPER_RESETS)
		return RG_SLOT_FOUND_CLEAN_IF_KEEPER;
	return RG_SLOT_FOUND_CLEAN;
}

/*
 * From here until release, a crash leaves the slot marked dirty. A slot
 * cleaned first gets every setting written again.
 */
void rg_slot_record_taken(struct slot_record *rec, bool dirty, pid_t holder)
{
	rec->flags &= ~SLOT_KEEPER_RESETS;
	rec->magic = RG_SLOT_MAGIC;
	rec->state = SLOT_IN_USE;
	rec->holder = holder;
	if (dirty)
		rec->flags &= ~SLOT_SETTINGS_KNOWN;
}

void rg_slot_record_reset(struct slot_record *rec, time_t now,
			  bool keeper_resets)
{
	rec->state = SLOT_CLEAN;
	rec->holder = 0;
	rec->runs++;
	rec->last_reset = now;
	if (keeper_resets)
		rec->flags |= SLOT_KEEPER_RESETS;
}

/*
 * Pages a run left (on the LRU lists: not the kernel's own objects, whose
 * charge swings by a MiB with slab pages and per-CPU batches whatever the
 * run did, and which the next run's numbers do not count as its pages).
 * A keeper's own pages are no run's (more under a sanitizer).
 */
bool rg_slot_must_recycle(uint64_t pages, uint64_t keeper_pages,
			  bool needs_recycle)
{
	return pages > RG_RECYCLE_ABOVE_BYTES + keeper_pages || needs_recycle;
}

/*
 * Runs through a pool handle keep their slot's cgroup for the next. Not
 * with the exact v2 peak: on 5.19-6.11 a run that samples closes the
 * cgroup's memory.peak, and such a run's cgroup must not serve one that
 * asked for the exact peak (which gets a new cgroup per run there anyway).
 */
bool rg_slot_kept_for_handle(const struct rg_pool *pool, unsigned int index,
			     bool exact_v2_peak)
{
	return pool && index < pool->size && !exact_v2_peak;
}
