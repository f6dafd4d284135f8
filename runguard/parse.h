/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pure parsers for option arguments, with DOMjudge's acceptance rules. */
#ifndef RG_CLI_PARSE_H
#define RG_CLI_PARSE_H

#include <stdbool.h>
#include <stdint.h>

enum rg_parse_status {
	RG_PARSE_OK = 0,
	RG_PARSE_INVALID = -1,
	/* both numbers are fine, but HARD < SOFT */
	RG_PARSE_HARD_BELOW_SOFT = -2,
};

/*
 * "SOFT" or "SOFT:HARD" in seconds, each read by strtod (exponents, hex,
 * leading blanks and '+' work), finite, > 0, using the whole part. Without
 * ':' HARD = SOFT; an empty HARD is invalid. Returns an rg_parse_status.
 */
int rg_parse_time_pair(const char *arg, double *soft, double *hard);

/*
 * A whole-string base-10 strtol value in [min, max]. Unlike DOMjudge, an
 * empty string is invalid rather than 0. Returns an rg_parse_status.
 */
int rg_parse_long(const char *arg, long min, long max, long *value);

/*
 * kB to bytes; when kb * 1024 does not fit 64 bits (where DOMjudge's
 * unsigned multiplication overflows), on_overflow instead.
 */
uint64_t rg_kb_to_bytes(long kb, uint64_t on_overflow);

/* rg_parse_long(arg, min, LONG_MAX) then rg_kb_to_bytes(). */
int rg_parse_kb(const char *arg, long min, uint64_t on_overflow,
		uint64_t *bytes);

/* "on" or "off". */
int rg_parse_on_off(const char *arg, bool *value);

#endif
