/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU list parsing and the -P online check. DOMjudge aborts on some bad
 * lists (an uncaught exception); here every malformed list is an error.
 */
#include "base/cpuset.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/util.h"

/* A non-empty run of decimal digits that fits an unsigned int. */
static int parse_cpu_number(const char *s, size_t len, unsigned int *out)
{
	unsigned long value = 0;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		value = value * 10 + (unsigned long)(s[i] - '0');
		if (value > UINT_MAX)
			return -1;
	}
	*out = (unsigned int)value;
	return 0;
}

static int parse_item(const char *s, size_t len, struct rg_cpu_range *range)
{
	const char *dash = memchr(s, '-', len);

	if (!dash) {
		if (parse_cpu_number(s, len, &range->first) < 0)
			return -1;
		range->last = range->first;
		return 0;
	}
	if (parse_cpu_number(s, (size_t)(dash - s), &range->first) < 0 ||
	    parse_cpu_number(dash + 1, len - (size_t)(dash - s) - 1,
			     &range->last) < 0)
		return -1;
	return range->first <= range->last ? 0 : -1;
}

static int append_range(struct rg_cpu_list *list,
			const struct rg_cpu_range *range)
{
	struct rg_cpu_range *grown;

	grown = realloc(list->ranges, (list->len + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	grown[list->len++] = *range;
	list->ranges = grown;
	return 0;
}

int rg_cpu_list_parse(const char *text, struct rg_cpu_list *list)
{
	const char *item = text;

	list->ranges = NULL;
	list->len = 0;
	for (;;) {
		const char *comma = strchr(item, ',');
		size_t len = comma ? (size_t)(comma - item) : strlen(item);
		struct rg_cpu_range range;

		if (parse_item(item, len, &range) < 0) {
			rg_cpu_list_free(list);
			errno = EINVAL;
			return -1;
		}
		if (append_range(list, &range) < 0) {
			rg_cpu_list_free(list);
			errno = ENOMEM;
			return -1;
		}
		if (!comma)
			return 0;
		item = comma + 1;
	}
}

void rg_cpu_list_free(struct rg_cpu_list *list)
{
	free(list->ranges);
	list->ranges = NULL;
	list->len = 0;
}

static const struct rg_cpu_range *find_range(const struct rg_cpu_list *list,
					     unsigned int cpu)
{
	for (size_t i = 0; i < list->len; i++)
		if (list->ranges[i].first <= cpu && cpu <= list->ranges[i].last)
			return &list->ranges[i];
	return NULL;
}

bool rg_cpu_list_contains(const struct rg_cpu_list *list, unsigned int cpu)
{
	return find_range(list, cpu) != NULL;
}

/*
 * Walk [first, last] by jumping over the ranges of have, so that a huge
 * requested range costs no more than the number of ranges.
 */
static bool range_first_missing(const struct rg_cpu_range *want,
				const struct rg_cpu_list *have,
				unsigned int *cpu)
{
	unsigned int c = want->first;

	for (;;) {
		const struct rg_cpu_range *r = find_range(have, c);

		if (!r) {
			*cpu = c;
			return true;
		}
		if (r->last >= want->last)
			return false;
		c = r->last + 1;
	}
}

bool rg_cpu_list_first_missing(const struct rg_cpu_list *want,
			       const struct rg_cpu_list *have,
			       unsigned int *cpu)
{
	bool found = false;
	unsigned int c;

	/* Report the lowest one, as DOMjudge (which walks a sorted set). */
	for (size_t i = 0; i < want->len; i++) {
		if (range_first_missing(&want->ranges[i], have, &c) &&
		    (!found || c < *cpu)) {
			*cpu = c;
			found = true;
		}
	}
	return found;
}

static int read_online(char *buf, size_t len, struct rg_error *err)
{
	FILE *f = fopen(RG_CPU_ONLINE_PATH, "re");
	size_t n;

	if (!f)
		return rg_fail(err, errno, "opening file `%s'",
			       RG_CPU_ONLINE_PATH);
	if (!fgets(buf, (int)len, f)) {
		int e = ferror(f) ? errno : 0;

		fclose(f);
		return rg_fail(err, e, "reading from file `%s'",
			       RG_CPU_ONLINE_PATH);
	}
	fclose(f);
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static int parse_or_fail(const char *text, struct rg_cpu_list *list,
			 const char *what, struct rg_error *err)
{
	if (rg_cpu_list_parse(text, list) == 0)
		return 0;
	if (errno == ENOMEM)
		return rg_fail(err, ENOMEM, "parsing %s `%s'", what, text);
	return rg_fail(err, 0, "failed to parse %s `%s'", what, text);
}

int rg_cpuset_validate(const char *list, const char *online,
		       struct rg_error *err)
{
	_cleanup_(rg_cpu_list_free) struct rg_cpu_list want = { 0 };
	_cleanup_(rg_cpu_list_free) struct rg_cpu_list have = { 0 };
	char buf[4096];
	unsigned int cpu;

	/* The request is checked first: a syntax error beats an offline CPU. */
	if (parse_or_fail(list, &want, "cpuset", err) < 0)
		return -1;
	if (!online) {
		if (read_online(buf, sizeof(buf), err) < 0)
			return -1;
		online = buf;
	}
	if (parse_or_fail(online, &have, "online CPU list", err) < 0)
		return -1;
	if (rg_cpu_list_first_missing(&want, &have, &cpu))
		return rg_fail(err, 0,
			       "requested pinning on CPU %u which is not online",
			       cpu);
	return 0;
}

int rg_cpuset_to_mask(const char *list, cpu_set_t *mask, struct rg_error *err)
{
	struct rg_cpu_list cpus;

	if (parse_or_fail(list, &cpus, "cpuset", err) < 0)
		return -1;
	CPU_ZERO(mask);
	for (size_t i = 0; i < cpus.len; i++) {
		if (cpus.ranges[i].last >= CPU_SETSIZE) {
			rg_cpu_list_free(&cpus);
			return rg_fail(err, EINVAL,
				       "cpuset `%s': CPU numbers must be below %d",
				       list, CPU_SETSIZE);
		}
		for (unsigned int c = cpus.ranges[i].first;
		     c <= cpus.ranges[i].last; c++)
			CPU_SET(c, mask);
	}
	rg_cpu_list_free(&cpus);
	return 0;
}
