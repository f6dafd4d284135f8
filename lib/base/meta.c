/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The DOMjudge meta file. Callers split each line at the first ':' and trim
 * the value, so the exact layout matters less than the key order and the
 * value formats, which the judge scripts and the web UI rely on.
 */
#include <runguard/meta.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/abi.h"
#include "base/result.h"

__attribute__((format(printf, 3, 4))) static int
put_key(FILE *meta, const char *key, const char *fmt, ...)
{
	va_list ap;
	int ret;

	if (fprintf(meta, "%s: ", key) < 0)
		return -1;
	va_start(ap, fmt);
	ret = vfprintf(meta, fmt, ap);
	va_end(ap);
	if (ret < 0 || fputc('\n', meta) == EOF)
		return -1;
	return 0;
}

/* Push buffered keys out now, so that a full disk is reported here. */
static int flush_meta(FILE *meta)
{
	errno = 0;
	if (fflush(meta) == 0 && !ferror(meta))
		return 0;
	if (!errno)
		errno = EIO;
	return -1;
}

/*
 * "key: text" on one line: a newline in the text would forge keys, so line
 * breaks become spaces. At most max bytes of text are written.
 */
static int put_line(FILE *meta, const char *key, const char *text, size_t max)
{
	if (fprintf(meta, "%s: ", key) < 0)
		return -1;
	for (size_t i = 0; i < max && text[i]; i++)
		if (fputc(text[i] == '\n' || text[i] == '\r' ? ' ' : text[i],
			  meta) == EOF)
			return -1;
	if (fputc('\n', meta) == EOF)
		return -1;
	return 0;
}

static int put_seconds(FILE *meta, const char *key, double seconds)
{
	return put_key(meta, key, "%.3f", seconds);
}

static const char *truncated_streams(const struct rg_result *result)
{
	bool out = result->stream_truncated[RG_STDOUT];
	bool err = result->stream_truncated[RG_STDERR];

	if (out && err)
		return "stdout,stderr";
	if (out)
		return "stdout";
	return err ? "stderr" : "";
}

static int put_exit(FILE *meta, const struct rg_result *result)
{
	if (put_key(meta, "memory-bytes", "%" PRIu64, result->memory_bytes) ||
	    put_key(meta, "exitcode", "%d", result->exit_code))
		return -1;
	/* Only a signal runguard itself acted on, never the command's. */
	if (result->received_signal != 0 &&
	    put_key(meta, "signal", "%d", result->received_signal))
		return -1;
	return 0;
}

static int put_times(FILE *meta, const struct rg_result *result,
		     enum rg_time_type time_used)
{
	/* -1.000 is DOMjudge's spelling of "no cgroup CPU time". */
	double cpu = result->cpu_time < 0 ? -1.0 : result->cpu_time;

	if (put_seconds(meta, "wall-time", result->wall_time) ||
	    put_seconds(meta, "user-time", result->user_time) ||
	    put_seconds(meta, "sys-time", result->sys_time) ||
	    put_seconds(meta, "cpu-time", cpu))
		return -1;
	if (put_key(meta, "time-used", "%s",
		    time_used == RG_TIME_WALL ? "wall-time" : "cpu-time") ||
	    put_key(meta, "time-result", "%s",
		    rg_time_result(result, time_used)))
		return -1;
	return 0;
}

static int put_streams(FILE *meta, const struct rg_result *result,
		       bool stream_limit_given)
{
	if (stream_limit_given &&
	    put_key(meta, "output-truncated", "%s", truncated_streams(result)))
		return -1;
	if (put_key(meta, "stdin-bytes", "0") ||
	    put_key(meta, "stdout-bytes", "%" PRIu64,
		    result->stream_bytes[RG_STDOUT]) ||
	    put_key(meta, "stderr-bytes", "%" PRIu64,
		    result->stream_bytes[RG_STDERR]))
		return -1;
	return 0;
}

static const char *const wait_key[RG_NR_WAITS] = {
	[RG_WAIT_CPU] = "wait-cpu-time",
	[RG_WAIT_IO] = "wait-io-time",
	[RG_WAIT_MEMORY] = "wait-memory-time",
	[RG_WAIT_THROTTLED] = "wait-throttled-time",
};

static const char *const pressure_name[RG_NR_WAITS] = {
	[RG_WAIT_CPU] = "cpu",
	[RG_WAIT_IO] = "io",
	[RG_WAIT_MEMORY] = "memory",
	[RG_WAIT_THROTTLED] = "throttled",
};

/* "cpu=12.5% io=0.0% memory=0.0%", the known ones only */
static int put_host_pressure(FILE *meta, const struct rg_result *result)
{
	const char *sep = "";

	if (!result->host_known)
		return 0;
	if (fprintf(meta, "host-pressure: ") < 0)
		return -1;
	for (int k = 0; k < RG_NR_WAITS; k++) {
		if (!(result->host_known & (1u << k)))
			continue;
		if (fprintf(meta, "%s%s=%.1f%%", sep, pressure_name[k],
			    result->host_pressure[k]) < 0)
			return -1;
		sep = " ";
	}
	return fputc('\n', meta) == EOF ? -1 : 0;
}

/* Where the wall time went (docs/meta-file.md): absent keys when unknown. */
static int put_waits(FILE *meta, const struct rg_result *result)
{
	for (int k = 0; k < RG_NR_WAITS; k++)
		if ((result->waits_known & (1u << k)) &&
		    put_seconds(meta, wait_key[k], result->wait_time[k]))
			return -1;
	if (put_host_pressure(meta, result))
		return -1;
	if (result->wall_time_cause[0] &&
	    put_line(meta, "wall-time-cause", result->wall_time_cause,
		     sizeof(result->wall_time_cause)))
		return -1;
	if (result->wait_method[0] &&
	    put_line(meta, "wait-method", result->wait_method,
		     sizeof(result->wait_method)))
		return -1;
	return 0;
}

/* runguard's own keys: after DOMjudge's, whose order they never change. */
static int put_extra(FILE *meta, const struct rg_result *result)
{
	/* the method is known whenever the statistics could be read */
	if (!result->memory_method[0])
		return 0;
	if (put_line(meta, "memory-method", result->memory_method,
		     sizeof(result->memory_method)) ||
	    put_key(meta, "major-faults", "%" PRIu64, result->major_faults) ||
	    put_waits(meta, result))
		return -1;
	if (result->pooled &&
	    put_key(meta, "pool-slot", "%u", result->pool_slot))
		return -1;
	return 0;
}

int rg_meta_write_result(FILE *meta, const struct rg_result *result,
			 const struct rg_meta_options *options)
{
	struct rg_meta_options o;
	struct rg_result r;

	if (!options ||
	    rg_abi_struct_size(options) <
		    RG_SIZE_THROUGH(struct rg_meta_options, extra_keys) ||
	    rg_result_copy_in(&r, result) < 0) {
		errno = EINVAL;
		return -1;
	}
	rg_abi_copy_in(&o, sizeof(o), options);
	errno = 0;
	if (put_exit(meta, &r) || put_times(meta, &r, o.time_used) ||
	    put_streams(meta, &r, o.stream_limit_given) ||
	    (o.extra_keys && put_extra(meta, &r))) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return flush_meta(meta);
}

int rg_meta_write_internal_error(FILE *meta, const char *text)
{
	errno = 0;
	if (put_line(meta, "internal-error", text, SIZE_MAX)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return flush_meta(meta);
}
