/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU lists in the kernel's format ("2", "0,2-3"), as -P takes them and as
 * /sys/devices/system/cpu/online shows them.
 */
#ifndef RG_CPUSET_H
#define RG_CPUSET_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include <runguard/runguard.h>

#define RG_CPU_ONLINE_PATH "/sys/devices/system/cpu/online"

struct rg_cpu_range {
	unsigned int first;
	unsigned int last;
};

/* Ranges in the order they were written; they may overlap. */
struct rg_cpu_list {
	struct rg_cpu_range *ranges;
	size_t len;
};

/*
 * Parse "N" / "A-B" items separated by ',' (strictly decimal, A <= B, no
 * empty items). Returns 0, or -1 with errno EINVAL (syntax) or ENOMEM.
 */
int rg_cpu_list_parse(const char *text, struct rg_cpu_list *list);
void rg_cpu_list_free(struct rg_cpu_list *list);
bool rg_cpu_list_contains(const struct rg_cpu_list *list, unsigned int cpu);

/*
 * Smallest CPU of want that is not in have; false when every CPU of want
 * is in have.
 */
bool rg_cpu_list_first_missing(const struct rg_cpu_list *want,
			       const struct rg_cpu_list *have,
			       unsigned int *cpu);

/*
 * Check a -P list: it must parse and every CPU must be online. online is
 * the online list as text, or NULL to read RG_CPU_ONLINE_PATH.
 */
int rg_cpuset_validate(const char *list, const char *online,
		       struct rg_error *err);

/* A -P list as an affinity mask (CPUs below CPU_SETSIZE). */
int rg_cpuset_to_mask(const char *list, cpu_set_t *mask, struct rg_error *err);

#endif
