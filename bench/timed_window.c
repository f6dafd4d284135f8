/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timed window versus whole run, side by side in one process.
 *
 * For N runs of a program that only exits, print percentiles of
 *   window: rg_result.wall_time, what runguard reports (release to exit);
 *   call:   the whole rg_run() (cgroup and namespace creation, set-up,
 *           exec, clean-up) - roughly what a clock started before the
 *           child's set-up, as in stock runguard, would include.
 * Usage (root): timed_window USER PROGRAM [RUNS]
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <runguard/runguard.h>

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, double *v, int n)
{
	qsort(v, n, sizeof(*v), compare_doubles);
	printf("%-7s median %8.1f us   p90 %8.1f us   p99 %8.1f us   max %8.1f us\n",
	       name, v[n / 2] * 1e6, v[n * 9 / 10] * 1e6,
	       v[n * 99 / 100] * 1e6, v[n - 1] * 1e6);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rg_error err = { 0 };
	struct rg_config *cfg;
	struct passwd *pw;
	double *window, *call;
	char msg[1200];
	int runs;

	if (argc < 3) {
		fprintf(stderr, "usage: %s USER PROGRAM [RUNS]\n", argv[0]);
		return 2;
	}
	runs = argc > 3 ? atoi(argv[3]) : 500;
	pw = getpwnam(argv[1]);
	cfg = rg_config_new(&err);
	window = calloc(runs, sizeof(*window));
	call = calloc(runs, sizeof(*call));
	if (!pw || !cfg || !window || !call || runs < 1 ||
	    rg_config_set_command(cfg, argv[2], &argv[2], &err) < 0 ||
	    rg_config_set_user(cfg, pw->pw_uid, &err) < 0 ||
	    rg_config_set_memory_limit(cfg, 256u << 20, &err) < 0 ||
	    rg_config_set_wall_limit(cfg, 2, 3, &err) < 0) {
		fprintf(stderr, "set-up failed: %s\n",
			rg_error_format(&err, msg, sizeof(msg)));
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		struct rg_result res = RG_RESULT_INIT;
		double t0 = now();

		if (rg_run(cfg, &res, &err) != RG_OUTCOME_COMPLETED) {
			fprintf(stderr, "run %d: %s\n", i,
				rg_error_format(&err, msg, sizeof(msg)));
			return 1;
		}
		call[i] = now() - t0;
		window[i] = res.wall_time;
	}
	printf("%d runs of %s\n", runs, argv[2]);
	report("window", window, runs);
	report("call", call, runs);
	rg_config_free(cfg);
	free(window);
	free(call);
	return 0;
}
