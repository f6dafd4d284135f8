/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One positive, finite strtod number spanning exactly [s, end). */
static int parse_seconds(const char *s, const char *end, double *value)
{
	char *stop;

	errno = 0;
	*value = strtod(s, &stop);
	/* ERANGE also rejects underflow, as DOMjudge does. */
	if (errno || stop == s || stop != end)
		return RG_PARSE_INVALID;
	if (!isfinite(*value) || *value <= 0)
		return RG_PARSE_INVALID;
	return RG_PARSE_OK;
}

int rg_parse_time_pair(const char *arg, double *soft, double *hard)
{
	/* ':' cannot occur inside a strtod number, so it splits safely. */
	const char *colon = strchr(arg, ':');
	const char *hard_str;

	if (!colon) {
		if (parse_seconds(arg, arg + strlen(arg), soft))
			return RG_PARSE_INVALID;
		*hard = *soft;
		return RG_PARSE_OK;
	}
	hard_str = colon + 1;
	if (parse_seconds(arg, colon, soft) ||
	    parse_seconds(hard_str, hard_str + strlen(hard_str), hard))
		return RG_PARSE_INVALID;
	if (*hard < *soft)
		return RG_PARSE_HARD_BELOW_SOFT;
	return RG_PARSE_OK;
}

int rg_parse_long(const char *arg, long min, long max, long *value)
{
	char *stop;
	long v;

	errno = 0;
	v = strtol(arg, &stop, 10);
	if (errno || stop == arg || *stop != '\0' || v < min || v > max)
		return RG_PARSE_INVALID;
	*value = v;
	return RG_PARSE_OK;
}

uint64_t rg_kb_to_bytes(long kb, uint64_t on_overflow)
{
	if (kb < 0 || (uint64_t)kb > UINT64_MAX / 1024)
		return on_overflow;
	return (uint64_t)kb * 1024;
}

int rg_parse_kb(const char *arg, long min, uint64_t on_overflow,
		uint64_t *bytes)
{
	long kb;

	if (rg_parse_long(arg, min, LONG_MAX, &kb))
		return RG_PARSE_INVALID;
	*bytes = rg_kb_to_bytes(kb, on_overflow);
	return RG_PARSE_OK;
}

int rg_parse_on_off(const char *arg, bool *value)
{
	if (strcmp(arg, "on") == 0)
		*value = true;
	else if (strcmp(arg, "off") == 0)
		*value = false;
	else
		return RG_PARSE_INVALID;
	return RG_PARSE_OK;
}
