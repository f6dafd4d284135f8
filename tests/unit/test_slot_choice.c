/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A slot lease's decisions from data alone (lib/pool/slot_choice.c): the
 * order slots are tried in, the settings written to a slot's cgroup and
 * the limit with a keeper in it, whether a run goes to a keeper and
 * whether the slot's keeper stays, and the slot record as a run takes the
 * slot and gives it back. No pool, cgroup or root needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup/cgroup.h"
#include "pool/slot_choice.h"

#define MIB (1ull << 20)
/* the records' layout before cpus was added ("RGS1") */
#define OLD_SLOT_MAGIC 0x31534752u

/* CPUs by bit: 0x5 is CPUs 0 and 2 */
static cpu_set_t cpus_of(unsigned int bits)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < 32; i++)
		if (bits & (1u << i))
			CPU_SET(i, &set);
	return set;
}

/* A run's settings: -m limit, -P list (NULL: none) of the CPUs in bits. */
static struct rg_config run(uint64_t limit, const char *list, unsigned int bits)
{
	struct rg_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.memory_limit = limit;
	cfg.cpuset = (char *)list;
	cfg.cpuset_mask = cpus_of(bits);
	cfg.cancel_fd = -1;
	return cfg;
}

static struct rg_config keeper_run(uint64_t limit, const char *list,
				   unsigned int bits)
{
	struct rg_config cfg = run(limit, list, bits);

	cfg.pool_keeper = true;
	return cfg;
}

/* A slot record as the pool writes it. */
static struct slot_record record(uint32_t state, uint32_t flags,
				 uint64_t limit, unsigned int bits)
{
	struct slot_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.magic = RG_SLOT_MAGIC;
	rec.state = state;
	rec.flags = flags;
	rec.memory_limit = limit;
	rec.cpus = cpus_of(bits);
	return rec;
}

static struct slot_record clean_known(uint64_t limit, unsigned int bits)
{
	return record(SLOT_CLEAN, SLOT_SETTINGS_KNOWN | SLOT_USED, limit, bits);
}

static void test_same_cpus_compares_sets_not_text(void **state)
{
	struct slot_record rec = clean_known(MIB, 0x3);
	struct slot_record none = clean_known(MIB, 0);
	struct rg_config cfg;

	(void)state;
	strcpy(rec.cpuset, "0,1");
	cfg = run(MIB, "0-1", 0x3);
	assert_true(rg_slot_same_cpus(&rec, &cfg));
	cfg = run(MIB, "1,0,1", 0x3);
	assert_true(rg_slot_same_cpus(&rec, &cfg));
	cfg = run(MIB, "0-2", 0x7);
	assert_false(rg_slot_same_cpus(&rec, &cfg));
	cfg = run(MIB, "1", 0x2);
	assert_false(rg_slot_same_cpus(&rec, &cfg));
	/* without -P: no CPUs, whatever the mask holds */
	cfg = run(MIB, NULL, 0);
	assert_true(rg_slot_same_cpus(&none, &cfg));
	assert_false(rg_slot_same_cpus(&rec, &cfg));
	cfg = run(MIB, NULL, 0x3);
	assert_true(rg_slot_same_cpus(&none, &cfg));
	assert_false(rg_slot_same_cpus(&rec, &cfg));
	/* a slot pinned nowhere does not fit a pinned run */
	cfg = run(MIB, "0", 0x1);
	assert_false(rg_slot_same_cpus(&none, &cfg));
}

static void test_settings_match_only_when_known(void **state)
{
	struct slot_record rec = clean_known(64 * MIB, 0x1);
	struct rg_config cfg = run(64 * MIB, "0", 0x1);

	(void)state;
	assert_true(rg_slot_settings_match(&rec, &cfg));
	cfg.memory_limit = 65 * MIB;
	assert_false(rg_slot_settings_match(&rec, &cfg));
	cfg = run(64 * MIB, "1", 0x2);
	assert_false(rg_slot_settings_match(&rec, &cfg));
	/* the same values, not known to be in force */
	cfg = run(64 * MIB, "0", 0x1);
	rec.flags &= ~SLOT_SETTINGS_KNOWN;
	assert_false(rg_slot_settings_match(&rec, &cfg));
	/* no limit on either side matches */
	rec = clean_known(RG_UNLIMITED, 0);
	cfg = run(RG_UNLIMITED, NULL, 0);
	assert_true(rg_slot_settings_match(&rec, &cfg));
	cfg.memory_limit = 0;
	assert_false(rg_slot_settings_match(&rec, &cfg));
}

static void test_preference_order(void **state)
{
	struct rg_config cfg = run(64 * MIB, NULL, 0);
	struct slot_record rec;

	(void)state;
	rec = clean_known(64 * MIB, 0);
	assert_int_equal(rg_slot_preference(&rec, &cfg), 0);
	rec = clean_known(128 * MIB, 0);
	assert_int_equal(rg_slot_preference(&rec, &cfg), 1);
	rec = clean_known(64 * MIB, 0x1);
	assert_int_equal(rg_slot_preference(&rec, &cfg), 1);
	/* clean, its settings unknown */
	rec = record(SLOT_CLEAN, SLOT_USED, 64 * MIB, 0);
	assert_int_equal(rg_slot_preference(&rec, &cfg), 1);
	/* held, or its holder died */
	rec = clean_known(64 * MIB, 0);
	rec.state = SLOT_IN_USE;
	assert_int_equal(rg_slot_preference(&rec, &cfg), 2);
	/* an old layout's record, or none written yet */
	rec = clean_known(64 * MIB, 0);
	rec.magic = OLD_SLOT_MAGIC;
	assert_int_equal(rg_slot_preference(&rec, &cfg), 2);
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(rg_slot_preference(&rec, &cfg), 2);
}

/* The walk's slots in order, into got; how many. */
static unsigned int walk_all(const struct slot_record *recs, unsigned int n,
			     unsigned int start, const struct rg_config *cfg,
			     unsigned int *got, unsigned int max)
{
	struct rg_slot_walk walk;
	unsigned int count = 0, i;

	rg_slot_walk_init(&walk, recs, n, start);
	while (rg_slot_walk_next(&walk, cfg, &i)) {
		assert_true(count < max);
		got[count++] = i;
	}
	/* and it stays done */
	assert_false(rg_slot_walk_next(&walk, cfg, &i));
	return count;
}

static void expect_walk(const struct slot_record *recs, unsigned int n,
			unsigned int start, const struct rg_config *cfg,
			const unsigned int *want, unsigned int want_n)
{
	unsigned int got[16];

	assert_int_equal(walk_all(recs, n, start, cfg, got, 16), want_n);
	for (unsigned int k = 0; k < want_n; k++)
		assert_int_equal(got[k], want[k]);
}

static void test_walk_matching_then_clean_then_dirty(void **state)
{
	struct rg_config cfg = run(64 * MIB, "0-1", 0x3);
	struct slot_record recs[5];

	(void)state;
	recs[0] = record(SLOT_IN_USE, 0, 0, 0);
	recs[1] = clean_known(64 * MIB, 0x3);
	recs[2] = clean_known(32 * MIB, 0x3);
	recs[3] = record(SLOT_IN_USE, SLOT_SETTINGS_KNOWN, 64 * MIB, 0x3);
	recs[4] = clean_known(64 * MIB, 0x3);
	/* each pass from slot 3 on, wrapping */
	expect_walk(recs, 5, 3, &cfg, (unsigned int[]){ 4, 1, 2, 3, 0 }, 5);
	expect_walk(recs, 5, 0, &cfg, (unsigned int[]){ 1, 4, 2, 0, 3 }, 5);
}

static void test_walk_without_a_clean_slot(void **state)
{
	struct rg_config cfg = run(64 * MIB, NULL, 0);
	struct slot_record recs[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		recs[i] = record(SLOT_IN_USE, 0, 64 * MIB, 0);
	expect_walk(recs, 4, 2, &cfg, (unsigned int[]){ 2, 3, 0, 1 }, 4);
	/* clean, but none of the run's settings: before the dirty ones */
	recs[0] = record(SLOT_CLEAN, 0, 0, 0);
	expect_walk(recs, 4, 2, &cfg, (unsigned int[]){ 0, 2, 3, 1 }, 4);
}

static void test_walk_without_the_table(void **state)
{
	struct rg_config cfg = run(64 * MIB, NULL, 0);

	(void)state;
	/* every slot unknown: all tried once, from start */
	expect_walk(NULL, 3, 1, &cfg, (unsigned int[]){ 1, 2, 0 }, 3);
	expect_walk(NULL, 1, 0, &cfg, (unsigned int[]){ 0 }, 1);
}

static void test_walk_resumes_where_it_was(void **state)
{
	struct rg_config cfg = run(64 * MIB, NULL, 0);
	struct slot_record recs[3] = {
		clean_known(64 * MIB, 0),
		clean_known(64 * MIB, 0),
		record(SLOT_IN_USE, 0, 0, 0),
	};
	struct rg_slot_walk walk;
	unsigned int i = 99;

	(void)state;
	/* a busy slot is passed over: the next call gives the next one */
	rg_slot_walk_init(&walk, recs, 3, 1);
	assert_true(rg_slot_walk_next(&walk, &cfg, &i));
	assert_int_equal(i, 1);
	assert_true(rg_slot_walk_next(&walk, &cfg, &i));
	assert_int_equal(i, 0);
	assert_true(rg_slot_walk_next(&walk, &cfg, &i));
	assert_int_equal(i, 2);
	i = 99;
	assert_false(rg_slot_walk_next(&walk, &cfg, &i));
	assert_int_equal(i, 99);
}

static void test_wait_doubles_up_to_the_maximum(void **state)
{
	static const int waits[] = { 1, 2, 4, 8, 16, 32, 32, 32 };

	(void)state;
	for (size_t k = 0; k + 1 < sizeof(waits) / sizeof(*waits); k++)
		assert_int_equal(rg_slot_next_wait_ms(waits[k]), waits[k + 1]);
	/* the doubling stops once at or past the maximum, not at it */
	assert_int_equal(rg_slot_next_wait_ms(RG_SLOT_WAIT_MAX_MS),
			 RG_SLOT_WAIT_MAX_MS);
	assert_int_equal(rg_slot_next_wait_ms(RG_SLOT_WAIT_MAX_MS - 1),
			 2 * (RG_SLOT_WAIT_MAX_MS - 1));
}

static void test_settings_to_write(void **state)
{
	struct slot_record rec = clean_known(64 * MIB, 0x3);
	struct rg_config cfg = run(64 * MIB, "0-1", 0x3);
	const unsigned int both = RG_CG_SET_MEMORY | RG_CG_SET_CPUSET;

	(void)state;
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg), 0);
	/* the same CPUs, written otherwise */
	cfg = run(64 * MIB, "1,0", 0x3);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg), 0);
	cfg = run(32 * MIB, "0-1", 0x3);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg),
			 RG_CG_SET_MEMORY);
	cfg = run(RG_UNLIMITED, "0-1", 0x3);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg),
			 RG_CG_SET_MEMORY);
	cfg = run(64 * MIB, "0", 0x1);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg),
			 RG_CG_SET_CPUSET);
	/* -P dropped: the parent's CPUs back */
	cfg = run(64 * MIB, NULL, 0);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg),
			 RG_CG_SET_CPUSET);
	cfg = run(1, NULL, 0);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg), both);
	/* nothing known is in force: all written, even if equal */
	rec.flags &= ~SLOT_SETTINGS_KNOWN;
	cfg = run(64 * MIB, "0-1", 0x3);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg), both);
	memset(&rec, 0, sizeof(rec));
	cfg = run(0, NULL, 0);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg), both);
}

static void test_memory_limit_with_a_keeper(void **state)
{
	uint64_t batch = 64 * (uint64_t)sysconf(_SC_PAGESIZE);

	(void)state;
	assert_int_equal(rg_slot_memory_limit(64 * MIB, false, 0), 64 * MIB);
	/* what a keeper that is gone held does not count */
	assert_int_equal(rg_slot_memory_limit(64 * MIB, false, 5 * MIB),
			 64 * MIB);
	assert_int_equal(rg_slot_memory_limit(64 * MIB, true, 0), 64 * MIB);
	/* rounded up to whole charge batches */
	assert_int_equal(rg_slot_memory_limit(64 * MIB, true, 1),
			 64 * MIB + batch);
	assert_int_equal(rg_slot_memory_limit(64 * MIB, true, batch),
			 64 * MIB + batch);
	assert_int_equal(rg_slot_memory_limit(64 * MIB, true, batch + 1),
			 64 * MIB + 2 * batch);
	assert_int_equal(rg_slot_memory_limit(0, false, 0), 0);
	assert_int_equal(rg_slot_memory_limit(0, true, 40 << 10), batch);
	/* no limit stays none, keeper or not */
	assert_int_equal(rg_slot_memory_limit(RG_UNLIMITED, true, 5 * MIB),
			 RG_UNLIMITED);
	assert_int_equal(rg_slot_memory_limit(RG_UNLIMITED, false, 0),
			 RG_UNLIMITED);
}

static void test_record_settings(void **state)
{
	struct slot_record rec = record(SLOT_IN_USE, SLOT_KEEPER_RESETS, 0,
					0x8);
	struct rg_config cfg = run(64 * MIB, "0-1", 0x3);
	cpu_set_t want = cpus_of(0x3);

	(void)state;
	rg_slot_record_settings(&rec, &cfg);
	assert_int_equal(rec.memory_limit, 64 * MIB);
	assert_string_equal(rec.cpuset, "0-1");
	assert_true(CPU_EQUAL(&rec.cpus, &want));
	assert_int_equal(rec.flags,
			 SLOT_KEEPER_RESETS | SLOT_SETTINGS_KNOWN | SLOT_USED);
	assert_int_equal(rec.state, SLOT_IN_USE);
	/* as it then matches, with nothing to write */
	rec.state = SLOT_CLEAN;
	assert_int_equal(rg_slot_preference(&rec, &cfg), 0);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg), 0);
	/* without -P: no CPUs and no list, whatever the mask held */
	cfg = run(RG_UNLIMITED, NULL, 0x3);
	rg_slot_record_settings(&rec, &cfg);
	CPU_ZERO(&want);
	assert_true(CPU_EQUAL(&rec.cpus, &want));
	assert_string_equal(rec.cpuset, "");
	assert_int_equal(rec.memory_limit, RG_UNLIMITED);
	assert_int_equal(rg_slot_settings_to_write(&rec, &cfg), 0);
}

static void test_record_settings_cuts_a_long_list(void **state)
{
	char list[200], want[sizeof(((struct slot_record *)0)->cpuset)];
	size_t max = sizeof(want) - 1;
	struct slot_record rec;
	struct rg_config cfg;

	(void)state;
	/* "0,1,2,...": longer than the record holds */
	list[0] = '\0';
	for (int i = 0; strlen(list) < 150; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%d", i ? "," : "", i);
	cfg = run(MIB, list, 0x1);
	memset(&rec, 0, sizeof(rec));
	rg_slot_record_settings(&rec, &cfg);
	assert_int_equal(strlen(rec.cpuset), max);
	memcpy(want, list, max - 3);
	memcpy(want + max - 3, "...", 4);
	assert_string_equal(rec.cpuset, want);
	/* exactly as long as it holds: kept whole */
	list[max] = '\0';
	cfg = run(MIB, list, 0x1);
	rg_slot_record_settings(&rec, &cfg);
	assert_string_equal(rec.cpuset, list);
	/* one longer: cut */
	list[max] = ',';
	list[max + 1] = '\0';
	cfg = run(MIB, list, 0x1);
	rg_slot_record_settings(&rec, &cfg);
	assert_int_equal(strlen(rec.cpuset), max);
	assert_string_equal(rec.cpuset + max - 3, "...");
}

static void test_wants_keeper(void **state)
{
	struct rg_config cfg = keeper_run(RG_KEEPER_MIN_MEMORY_LIMIT, NULL, 0);

	(void)state;
	assert_int_equal(RG_KEEPER_MIN_MEMORY_LIMIT, 4 * MIB);
	assert_true(rg_slot_wants_keeper(&cfg));
	cfg.memory_limit = RG_UNLIMITED;
	assert_true(rg_slot_wants_keeper(&cfg));
	/* a limit that small would OOM-kill the keeper */
	cfg.memory_limit = RG_KEEPER_MIN_MEMORY_LIMIT - 1;
	assert_false(rg_slot_wants_keeper(&cfg));
	cfg.memory_limit = 0;
	assert_false(rg_slot_wants_keeper(&cfg));
	/* a pool without keepers */
	cfg = run(RG_UNLIMITED, NULL, 0);
	assert_false(rg_slot_wants_keeper(&cfg));
}

static void test_keeper_fate(void **state)
{
	struct slot_record rec = clean_known(64 * MIB, 0x3);
	struct rg_config cfg = keeper_run(64 * MIB, "0-1", 0x3);

	(void)state;
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_STAYS);
	/* the same CPUs, written otherwise */
	cfg = keeper_run(64 * MIB, "1,0", 0x3);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_STAYS);
	/* a new limit: written over the keeper if there is room */
	cfg = keeper_run(256 * MIB, "0-1", 0x3);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg),
			 RG_KEEPER_STAYS_IF_ROOM);
	cfg = keeper_run(RG_UNLIMITED, "0-1", 0x3);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_STAYS);
	/* new CPUs: written with the slot empty */
	cfg = keeper_run(64 * MIB, "0", 0x1);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_GOES);
	cfg = keeper_run(64 * MIB, NULL, 0);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_GOES);
	/* unknown settings: the cpuset is written too */
	rec.flags &= ~SLOT_SETTINGS_KNOWN;
	cfg = keeper_run(64 * MIB, "0-1", 0x3);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_GOES);
	/* a run that wants none */
	rec = clean_known(64 * MIB, 0x3);
	cfg = keeper_run(MIB, "0-1", 0x3);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_GOES);
	cfg = run(64 * MIB, "0-1", 0x3);
	assert_int_equal(rg_slot_keeper_fate(&rec, &cfg), RG_KEEPER_GOES);
}

static void test_keeper_fits_below_the_limit(void **state)
{
	(void)state;
	assert_int_equal(RG_KEEPER_LIMIT_HEADROOM, MIB);
	assert_true(rg_slot_keeper_fits(0, MIB));
	assert_true(rg_slot_keeper_fits(3 * MIB, 4 * MIB));
	assert_false(rg_slot_keeper_fits(3 * MIB + 1, 4 * MIB));
	assert_false(rg_slot_keeper_fits(0, MIB - 1));
	assert_false(rg_slot_keeper_fits(0, 0));
}

static void test_resident_as_is(void **state)
{
	struct slot_record rec = clean_known(64 * MIB, 0);
	struct rg_config cfg = keeper_run(64 * MIB, NULL, 0);

	(void)state;
	assert_true(rg_slot_resident_as_is(&rec, &cfg, false, true));
	assert_false(rg_slot_resident_as_is(&rec, &cfg, true, true));
	assert_false(rg_slot_resident_as_is(&rec, &cfg, false, false));
	cfg.memory_limit = 128 * MIB;
	assert_false(rg_slot_resident_as_is(&rec, &cfg, false, true));
	cfg = keeper_run(64 * MIB, "0", 0x1);
	assert_false(rg_slot_resident_as_is(&rec, &cfg, false, true));
	cfg = run(64 * MIB, NULL, 0);
	assert_false(rg_slot_resident_as_is(&rec, &cfg, false, true));
	/* the settings of a slot cleaned first are not known */
	cfg = keeper_run(64 * MIB, NULL, 0);
	rg_slot_record_taken(&rec, true, 42);
	assert_false(rg_slot_resident_as_is(&rec, &cfg, false, true));
}

static void test_found(void **state)
{
	struct slot_record rec = clean_known(MIB, 0);

	(void)state;
	assert_int_equal(rg_slot_found(&rec, true), RG_SLOT_FOUND_CLEAN);
	assert_int_equal(rg_slot_found(&rec, false), RG_SLOT_FOUND_DIRTY);
	rec.flags |= SLOT_KEEPER_RESETS;
	assert_int_equal(rg_slot_found(&rec, true),
			 RG_SLOT_FOUND_CLEAN_IF_KEEPER);
	assert_int_equal(rg_slot_found(&rec, false), RG_SLOT_FOUND_DIRTY);
	/* its holder died */
	rec.state = SLOT_IN_USE;
	assert_int_equal(rg_slot_found(&rec, true), RG_SLOT_FOUND_DIRTY);
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(rg_slot_found(&rec, true), RG_SLOT_FOUND_DIRTY);
}

static void test_record_taken(void **state)
{
	const uint32_t flags = SLOT_SETTINGS_KNOWN | SLOT_USED |
			       SLOT_KEEPER_RESETS;
	struct slot_record rec = record(SLOT_CLEAN, flags, MIB, 0);
	struct rg_config cfg = run(MIB, NULL, 0);

	(void)state;
	rec.runs = 7;
	rg_slot_record_taken(&rec, false, 1234);
	assert_int_equal(rec.magic, RG_SLOT_MAGIC);
	assert_int_equal(rec.state, SLOT_IN_USE);
	assert_int_equal(rec.holder, 1234);
	assert_int_equal(rec.flags, SLOT_SETTINGS_KNOWN | SLOT_USED);
	assert_int_equal(rec.runs, 7);
	/* what others see now */
	assert_int_equal(rg_slot_preference(&rec, &cfg), 2);
	/* a dirty one, or one of no record at all */
	rec = record(SLOT_IN_USE, flags, MIB, 0);
	rg_slot_record_taken(&rec, true, 99);
	assert_int_equal(rec.flags, SLOT_USED);
	assert_int_equal(rec.holder, 99);
	memset(&rec, 0, sizeof(rec));
	rg_slot_record_taken(&rec, true, 5);
	assert_int_equal(rec.magic, RG_SLOT_MAGIC);
	assert_int_equal(rec.state, SLOT_IN_USE);
	assert_int_equal(rec.flags, 0);
}

static void test_record_reset(void **state)
{
	struct slot_record rec = record(SLOT_IN_USE,
					SLOT_SETTINGS_KNOWN | SLOT_USED,
					64 * MIB, 0);
	struct rg_config cfg = run(64 * MIB, NULL, 0);

	(void)state;
	rec.holder = 1234;
	rec.runs = 7;
	rg_slot_record_reset(&rec, 1700000000, false);
	assert_int_equal(rec.state, SLOT_CLEAN);
	assert_int_equal(rec.holder, 0);
	assert_int_equal(rec.runs, 8);
	assert_int_equal(rec.last_reset, 1700000000);
	assert_int_equal(rec.flags, SLOT_SETTINGS_KNOWN | SLOT_USED);
	assert_int_equal(rg_slot_found(&rec, true), RG_SLOT_FOUND_CLEAN);
	assert_int_equal(rg_slot_preference(&rec, &cfg), 0);
	/* reset by its keeper: clean while the keeper lives */
	rg_slot_record_taken(&rec, false, 1235);
	rg_slot_record_reset(&rec, 1700000001, true);
	assert_int_equal(rec.runs, 9);
	assert_int_equal(rec.flags,
			 SLOT_SETTINGS_KNOWN | SLOT_USED | SLOT_KEEPER_RESETS);
	assert_int_equal(rg_slot_found(&rec, true),
			 RG_SLOT_FOUND_CLEAN_IF_KEEPER);
	assert_int_equal(rg_slot_preference(&rec, &cfg), 0);
}

static void test_must_recycle(void **state)
{
	(void)state;
	assert_int_equal(RG_RECYCLE_ABOVE_BYTES, MIB);
	assert_false(rg_slot_must_recycle(0, 0, false));
	assert_false(rg_slot_must_recycle(MIB, 0, false));
	assert_true(rg_slot_must_recycle(MIB + 1, 0, false));
	/* a keeper's own pages are no run's */
	assert_false(rg_slot_must_recycle(MIB + 40960, 40960, false));
	assert_true(rg_slot_must_recycle(MIB + 40961, 40960, false));
	/* tmpfs pages or a poisoned cgroup: whatever is charged */
	assert_true(rg_slot_must_recycle(0, 0, true));
	assert_true(rg_slot_must_recycle(0, MIB, true));
}

static void test_kept_for_handle(void **state)
{
	struct rg_pool pool;

	(void)state;
	memset(&pool, 0, sizeof(pool));
	pool.size = 4;
	assert_true(rg_slot_kept_for_handle(&pool, 0, false));
	assert_true(rg_slot_kept_for_handle(&pool, 3, false));
	assert_false(rg_slot_kept_for_handle(&pool, 4, false));
	assert_false(rg_slot_kept_for_handle(&pool, 0, true));
	assert_false(rg_slot_kept_for_handle(NULL, 0, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_cpus_compares_sets_not_text),
		cmocka_unit_test(test_settings_match_only_when_known),
		cmocka_unit_test(test_preference_order),
		cmocka_unit_test(test_walk_matching_then_clean_then_dirty),
		cmocka_unit_test(test_walk_without_a_clean_slot),
		cmocka_unit_test(test_walk_without_the_table),
		cmocka_unit_test(test_walk_resumes_where_it_was),
		cmocka_unit_test(test_wait_doubles_up_to_the_maximum),
		cmocka_unit_test(test_settings_to_write),
		cmocka_unit_test(test_memory_limit_with_a_keeper),
		cmocka_unit_test(test_record_settings),
		cmocka_unit_test(test_record_settings_cuts_a_long_list),
		cmocka_unit_test(test_wants_keeper),
		cmocka_unit_test(test_keeper_fate),
		cmocka_unit_test(test_keeper_fits_below_the_limit),
		cmocka_unit_test(test_resident_as_is),
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_record_taken),
		cmocka_unit_test(test_record_reset),
		cmocka_unit_test(test_must_recycle),
		cmocka_unit_test(test_kept_for_handle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
