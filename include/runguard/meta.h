/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * DOMjudge meta file ("key: value" lines) for a run result. The keys, their
 * order and formats are DOMjudge's; see docs/meta-file.md.
 */
#ifndef RUNGUARD_META_H
#define RUNGUARD_META_H

#include <runguard/runguard.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rg_meta_options {
	size_t struct_size; /* sizeof(struct rg_meta_options) */
	/* which time the caller's "time-used" key names */
	enum rg_time_type time_used;
	/* a stream limit was given: write "output-truncated" */
	bool stream_limit_given;
	/*
	 * Write runguard's own keys after DOMjudge's: "memory-method" (how
	 * memory-bytes was measured) and "major-faults", only when
	 * result->memory_method is not empty (the statistics were read).
	 */
	bool extra_keys;
	/* new fields go here, at the end */
};

/* clang-format off */
#define RG_META_OPTIONS_INIT { .struct_size = sizeof(struct rg_meta_options) }
/* clang-format on */

/*
 * Write the keys of a run that has a result (every outcome but
 * RG_OUTCOME_ERROR): memory-bytes ... stderr-bytes, then runguard's own
 * keys if options->extra_keys is set. Returns 0, or -1 with errno set when
 * writing failed (EINVAL: a struct_size too small or no result).
 */
RG_EXPORT int rg_meta_write_result(FILE *meta, const struct rg_result *result,
				   const struct rg_meta_options *options);

/* Write "internal-error: <text>". Returns 0 or -1 with errno set. */
RG_EXPORT int rg_meta_write_internal_error(FILE *meta, const char *text);

#ifdef __cplusplus
}
#endif

#endif
