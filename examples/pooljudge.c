/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A judge that runs many test cases through one pool from several threads
 * (rg_pool_open once, rg_pool_run per test case). Each test case runs
 * PROGRAM with its number as the only argument; one line per test case
 * tells how it went and in which slot, with the run's monotonic start and
 * end, so that a caller can check that no slot ran two cases at once.
 * Build against an installed librunguard with
 *
 *   cc pooljudge.c $(pkg-config --cflags --libs librunguard) -pthread
 *
 * Usage (as root): pooljudge POOL-DIR SLOTS THREADS CASES USER PROGRAM [keeper]
 * ("keeper": resident slots, rg_config_set_pool_keeper)
 * Prints: case=N exit=E slot=S start=T end=T (seconds), then "done".
 */
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <runguard/pool.h>
#include <runguard/runguard.h>

struct judge {
	struct rg_pool *pool;
	const char *user;
	const char *program;
	unsigned int cases;
	unsigned int next_case; /* under lock */
	unsigned int failures;	/* under lock */
	bool keeper;
	pthread_mutex_t lock;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int configure(struct rg_config *cfg, const struct judge *j, char *arg,
		     struct rg_error *err)
{
	char *cmd[] = { (char *)j->program, arg, NULL };
	struct passwd *pw = getpwnam(j->user);

	if (!pw) {
		err->errnum = ENOENT;
		snprintf(err->message, sizeof(err->message), "no user %s",
			 j->user);
		return -1;
	}
	/* threads: the judge handles signals, a run never reaps others' */
	rg_config_set_handle_signals(cfg, false);
	rg_config_set_pool_keeper(cfg, j->keeper);
	if (rg_config_set_command(cfg, j->program, cmd, err) < 0 ||
	    rg_config_set_user(cfg, pw->pw_uid, err) < 0 ||
	    rg_config_set_group(cfg, pw->pw_gid, err) < 0 ||
	    rg_config_set_wall_limit(cfg, 10.0, 10.0, err) < 0 ||
	    rg_config_set_memory_limit(cfg, 256u << 20, err) < 0 ||
	    rg_config_set_output_file(cfg, RG_STDOUT, "/dev/null", err) < 0)
		return -1;
	return 0;
}

static void judge_case(struct judge *j, unsigned int number)
{
	enum rg_outcome outcome = RG_OUTCOME_ERROR;
	struct rg_result res = RG_RESULT_INIT;
	struct rg_config *cfg;
	struct rg_error err;
	double start, end;
	char arg[16], msg[1200];

	snprintf(arg, sizeof(arg), "%u", number);
	cfg = rg_config_new(&err);
	start = now();
	if (cfg && configure(cfg, j, arg, &err) == 0)
		outcome = rg_pool_run(j->pool, cfg, &res, &err);
	end = now();
	rg_config_free(cfg);
	pthread_mutex_lock(&j->lock);
	if (outcome != RG_OUTCOME_COMPLETED) {
		j->failures++;
		printf("case=%u %s: %s\n", number, rg_outcome_name(outcome),
		       rg_error_format(&err, msg, sizeof(msg)));
	} else {
		printf("case=%u exit=%d slot=%d start=%.6f end=%.6f\n", number,
		       res.exit_code, res.pooled ? (int)res.pool_slot : -1,
		       start, end);
	}
	fflush(stdout);
	pthread_mutex_unlock(&j->lock);
}

static void *worker(void *arg)
{
	struct judge *j = arg;
	unsigned int number;

	for (;;) {
		pthread_mutex_lock(&j->lock);
		number = j->next_case++;
		pthread_mutex_unlock(&j->lock);
		if (number >= j->cases)
			return NULL;
		judge_case(j, number);
	}
}

int main(int argc, char **argv)
{
	struct rg_pool_options options = RG_POOL_OPTIONS_INIT;
	struct judge j = { .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t threads[64];
	unsigned int nthreads, i;
	struct rg_error err;
	char msg[1200];

	if (argc != 7 && !(argc == 8 && strcmp(argv[7], "keeper") == 0)) {
		fprintf(stderr,
			"usage: %s POOL-DIR SLOTS THREADS CASES USER "
			"PROGRAM [keeper]\n",
			argv[0]);
		return 2;
	}
	j.keeper = argc == 8;
	options.dir = argv[1];
	options.size = (unsigned int)strtoul(argv[2], NULL, 10);
	/* every slot's keeper started now, not by its first test case */
	options.keepers = j.keeper;
	nthreads = (unsigned int)strtoul(argv[3], NULL, 10);
	j.cases = (unsigned int)strtoul(argv[4], NULL, 10);
	j.user = argv[5];
	j.program = argv[6];
	if (nthreads == 0 || nthreads > 64) {
		fprintf(stderr, "THREADS must be 1 to 64\n");
		return 2;
	}
	j.pool = rg_pool_open(&options, &err);
	if (!j.pool) {
		fprintf(stderr, "pooljudge: %s\n",
			rg_error_format(&err, msg, sizeof(msg)));
		return 1;
	}
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&threads[i], NULL, worker, &j) != 0)
			break;
	nthreads = i;
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	rg_pool_close(j.pool);
	printf("done\n");
	return j.failures ? 1 : 0;
}
