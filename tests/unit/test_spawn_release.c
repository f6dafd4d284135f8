/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rg_spawn_release() on the barrier: a child the OOM killer took after its
 * READY has closed its end. Releasing it is a set-up failure, reported,
 * never a SIGPIPE that kills runguard before the meta file is written
 * (seen once in a TCG boot: runguard exit -13, the meta file empty).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/config.h"
#include "cgroup/cgroup.h"
#include "run/spawn.h"

/* spawn.c's other calls; these tests make no child */
int rg_cgroup_clone_fd(const struct rg_cgroup *cg)
{
	(void)cg;
	return -1;
}

void rg_log(const struct rg_config *cfg, enum rg_log_level level,
	    const char *fmt, ...)
{
	(void)cfg;
	(void)level;
	(void)fmt;
}

_Noreturn void rg_child_main(const struct rg_child_plan *plan,
			     const struct rg_child_fds *fds)
{
	(void)plan;
	(void)fds;
	_exit(127);
}

static void prepare(struct rg_child *child)
{
	struct rg_error err;

	assert_int_equal(rg_spawn_prepare(child, true, &err), 0);
	/* as rg_spawn() leaves it: the write end is the child's go_fd */
	child->go_fd = child->pipes.go[1];
	child->pipes.go[1] = -1;
}

static void test_release_a_waiting_child(void **state)
{
	struct rg_child child;
	struct rg_error err;
	bool setup_failed = false;
	char got = 0;

	(void)state;
	prepare(&child);
	assert_int_equal(rg_spawn_release(&child, &setup_failed, &err), 0);
	assert_false(setup_failed);
	assert_int_equal(child.go_fd, -1);
	assert_int_equal(read(child.pipes.go[0], &got, 1), 1);
	assert_int_equal(got, 'g');
	rg_child_close(&child);
}

/* SIGPIPE's default would end this test process here. */
static void test_release_a_dead_child(void **state)
{
	struct rg_child child;
	struct rg_error err;
	bool setup_failed = false;

	(void)state;
	prepare(&child);
	close(child.pipes.go[0]);
	child.pipes.go[0] = -1;
	assert_int_equal(rg_spawn_release(&child, &setup_failed, &err), -1);
	assert_true(setup_failed);
	assert_int_equal(err.errnum, EPIPE);
	assert_int_equal(child.go_fd, -1);
	rg_child_close(&child);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release_a_waiting_child),
		cmocka_unit_test(test_release_a_dead_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
