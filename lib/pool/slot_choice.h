/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a slot lease decides from data alone (slot_choice.c): which slot to
 * try first, which settings a slot's cgroup must be given, whether a run
 * goes to a keeper and whether the slot's keeper can stay, and how the
 * slot record changes when a run takes the slot or gives it back. No file,
 * cgroup or process is touched here: the lease's files (lease.h) read what
 * these functions need, and do what they say. Apart, they are tested
 * without root (tests/unit/test_slot_choice.c).
 */
#ifndef RG_SLOT_CHOICE_H
#define RG_SLOT_CHOICE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/base.h"
#include "pool/pool.h"

/* how long one wait for a free slot sleeps at most (rg_slot_next_wait_ms) */
#define RG_SLOT_WAIT_MAX_MS 20

/*
 * Below this memory limit a run is not given to a keeper: the keeper's own
 * pages (about 40 KiB) and the fork of the run's child count towards the
 * slot's limit, and a limit that small (-m 1) would OOM-kill the keeper
 * instead of the run. Such a run is pooled as without keepers.
 */
#define RG_KEEPER_MIN_MEMORY_LIMIT (4u << 20)

/*
 * What a slot with a keeper must hold below a memory limit written over
 * the keeper: closer, the write would reclaim, fail with EBUSY (v1) or
 * OOM-kill the keeper (v2).
 */
#define RG_KEEPER_LIMIT_HEADROOM (1u << 20)

/* The record's CPUs and cfg's -P as CPU sets (none without -P). */
bool rg_slot_same_cpus(const struct slot_record *rec,
		       const struct rg_config *cfg);
/* The settings in force (known) are cfg's memory limit and CPUs. */
bool rg_slot_settings_match(const struct slot_record *rec,
			    const struct rg_config *cfg);
/* Lower is better: 0 clean and matching, 1 clean, 2 dirty or unknown. */
int rg_slot_preference(const struct slot_record *rec,
		       const struct rg_config *cfg);

/*
 * A walk over n slots in order of preference: all of preference 0, then
 * 1, then 2, each pass from slot start on (a pid-dependent start spreads
 * equal judges out). recs: the slot table, or NULL to take every slot as
 * unknown.
 */
struct rg_slot_walk {
	const struct slot_record *recs;
	unsigned int n;
	unsigned int start;
	int pref;	/* the pass */
	unsigned int k; /* the next slot of the pass, from start */
};

void rg_slot_walk_init(struct rg_slot_walk *w, const struct slot_record *recs,
		       unsigned int n, unsigned int start);
/* The next slot to try in *index; false when every slot was tried. */
bool rg_slot_walk_next(struct rg_slot_walk *w, const struct rg_config *cfg,
		       unsigned int *index);

/* The next wait for a free slot after one of delay_ms, in ms. */
int rg_slot_next_wait_ms(int delay_ms);

/* RG_CG_SET_* of the settings that differ from those in force. */
unsigned int rg_slot_settings_to_write(const struct slot_record *rec,
				       const struct rg_config *cfg);
/*
 * The memory limit written for a run of this limit: with a keeper that
 * stays through it (holding keeper_bytes), plus that.
 */
uint64_t rg_slot_memory_limit(uint64_t limit, bool keeper,
			      uint64_t keeper_bytes);
/* cfg's settings as the record keeps them once written. */
void rg_slot_record_settings(struct slot_record *rec,
			     const struct rg_config *cfg);

/* The run goes to the slot's keeper (one started if it has none). */
bool rg_slot_wants_keeper(const struct rg_config *cfg);

enum rg_keeper_fate {
	RG_KEEPER_GOES,
	RG_KEEPER_STAYS,
	/* if what the slot holds fits below it (rg_slot_keeper_fits) */
	RG_KEEPER_STAYS_IF_ROOM,
};

/* Whether the slot's live keeper can stay through cfg's settings. */
enum rg_keeper_fate rg_slot_keeper_fate(const struct slot_record *rec,
					const struct rg_config *cfg);
/* usage, charged to the slot with its keeper in, fits below limit. */
bool rg_slot_keeper_fits(uint64_t usage, uint64_t limit);
/*
 * The slot's keeper (has_keeper: connected) serves the run as the slot
 * is: nothing to open or write but the record.
 */
bool rg_slot_resident_as_is(const struct slot_record *rec,
			    const struct rg_config *cfg, bool exact_v2_peak,
			    bool has_keeper);

/* How a slot's record says its last holder left it. */
enum rg_slot_found {
	RG_SLOT_FOUND_DIRTY,
	RG_SLOT_FOUND_CLEAN,
	/* reset by its keeper: clean only if that keeper lives */
	RG_SLOT_FOUND_CLEAN_IF_KEEPER,
};

/* read_ok: the record was read (rg_pool_read_record). */
enum rg_slot_found rg_slot_found(const struct slot_record *rec, bool read_ok);
/* The record of a slot holder took, cleaned first if dirty. */
void rg_slot_record_taken(struct slot_record *rec, bool dirty, pid_t holder);
/*
 * The record of a slot reset after a run, at now; keeper_resets: by its
 * keeper (resident), which must live for the slot to count as clean.
 */
void rg_slot_record_reset(struct slot_record *rec, time_t now,
			  bool keeper_resets);

/*
 * A slot's cgroup left charged with pages (on the LRU lists) beyond what a
 * reset may leave and its keeper's own, or that the cgroup layer says must
 * not serve another run (needs_recycle), is replaced by a new one.
 */
bool rg_slot_must_recycle(uint64_t pages, uint64_t keeper_pages,
			  bool needs_recycle);
/*
 * The pool handle (pool, or NULL) keeps slot index's cgroup open for the
 * slot's next run in this process.
 */
bool rg_slot_kept_for_handle(const struct rg_pool *pool, unsigned int index,
			     bool exact_v2_peak);

#endif
