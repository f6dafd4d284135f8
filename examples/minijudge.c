/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A minimal judge on top of librunguard: run a program on an input file
 * with limits, compare its output with the expected output, print a
 * verdict. Build against an installed librunguard with
 *
 *   cc minijudge.c $(pkg-config --cflags --libs librunguard)
 *
 * Usage (as root): minijudge USER PROGRAM INPUT EXPECTED [MEMORY-MIB]
 * (memory limit: 256 MiB unless given)
 */
#include <errno.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <runguard/runguard.h>

static int files_equal(const char *a, const char *b)
{
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	int ca, cb, equal = fa && fb;

	while (equal) {
		ca = fgetc(fa);
		cb = fgetc(fb);
		if (ca != cb)
			equal = 0;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return equal;
}

static const char *verdict(const struct rg_result *r, const char *out,
			   const char *expected)
{
	/*
	 * An OOM kill is a kernel fact; the time overrun of a program that
	 * fills its memory can be a consequence of reclaim near the limit.
	 */
	if (r->outcome == RG_OUTCOME_EXEC_FAILED)
		return "RUN-ERROR"; /* not a program this host can start */
	if (r->oom_killed)
		return "MEMORY-LIMIT";
	if (r->wall_limit & RG_LIMIT_HARD || r->cpu_limit)
		return "TIMELIMIT";
	if (r->exit_code != 0)
		return "RUN-ERROR";
	if (r->stream_truncated[RG_STDOUT])
		return "OUTPUT-LIMIT";
	return files_equal(out, expected) ? "CORRECT" : "WRONG-ANSWER";
}

static int configure(struct rg_config *cfg, char **argv, uint64_t memory,
		     struct rg_error *err)
{
	char *cmd[] = { argv[2], NULL };
	struct passwd *pw = getpwnam(argv[1]);

	if (!pw) {
		err->errnum = errno;
		snprintf(err->message, sizeof(err->message), "unknown user %s",
			 argv[1]);
		return -1;
	}
	if (rg_config_set_command(cfg, argv[2], cmd, err) < 0 ||
	    rg_config_set_user(cfg, pw->pw_uid, err) < 0 ||
	    rg_config_set_group(cfg, pw->pw_gid, err) < 0 ||
	    rg_config_set_wall_limit(cfg, 2.0, 3.0, err) < 0 ||
	    rg_config_set_cpu_limit(cfg, 1.0, 1.5, err) < 0 ||
	    rg_config_set_memory_limit(cfg, memory, err) < 0 ||
	    rg_config_set_process_limit(cfg, 64, err) < 0 ||
	    rg_config_set_input_file(cfg, argv[3], err) < 0 ||
	    rg_config_set_output_file(cfg, RG_STDOUT, "minijudge.out", err) < 0)
		return -1;
	rg_config_set_stream_limit(cfg, 64u << 20);
	return 0;
}

int main(int argc, char **argv)
{
	struct rg_error err = { 0 };
	struct rg_result res = RG_RESULT_INIT;
	enum rg_outcome outcome;
	struct rg_config *cfg;
	uint64_t memory = 256u << 20;
	char msg[1200], *end;

	if (argc != 5 && argc != 6) {
		fprintf(stderr,
			"usage: %s USER PROGRAM INPUT EXPECTED "
			"[MEMORY-MIB]\n",
			argv[0]);
		return 2;
	}
	if (argc == 6) {
		memory = strtoull(argv[5], &end, 10) << 20;
		if (*end || memory == 0) {
			fprintf(stderr,
				"minijudge: bad memory limit `%s' "
				"(MiB)\n",
				argv[5]);
			return 2;
		}
	}
	cfg = rg_config_new(&err);
	if (!cfg || configure(cfg, argv, memory, &err) < 0) {
		fprintf(stderr, "minijudge: %s\n",
			rg_error_format(&err, msg, sizeof(msg)));
		rg_config_free(cfg);
		return 2;
	}
	outcome = rg_run(cfg, &res, &err);
	rg_config_free(cfg);
	/* the judge's or the host's fault: no verdict for the submission */
	if (outcome != RG_OUTCOME_COMPLETED &&
	    outcome != RG_OUTCOME_EXEC_FAILED) {
		fprintf(stderr, "minijudge: %s: %s\n", rg_outcome_name(outcome),
			rg_error_format(&err, msg, sizeof(msg)));
		return 2;
	}
	printf("%s cpu=%.3fs wall=%.3fs memory=%llu bytes exit=%d\n",
	       verdict(&res, "minijudge.out", argv[4]), res.cpu_time,
	       res.wall_time, (unsigned long long)res.memory_bytes,
	       res.exit_code);
	return 0;
}
