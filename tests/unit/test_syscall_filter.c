/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The syscall filter embedded at build time is the one libseccomp compiles
 * now: same length, same instructions. A stale or truncated header would
 * otherwise go unnoticed until a run escaped it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "syscall_filter.h"

static void test_embedded_matches_libseccomp(void **state)
{
	const struct sock_fprog *embedded;
	struct sock_fprog built;
	struct rg_error err;

	(void)state;
	assert_int_equal(rg_seccomp_program(&embedded, &err), 0);
	assert_int_equal(rg_seccomp_build(&built, &err), 0);
	assert_true(built.len > 0);
	assert_int_equal(embedded->len, built.len);
	assert_memory_equal(embedded->filter, built.filter,
			    built.len * sizeof(*built.filter));
	free(built.filter);
}

/* The filter must end in a return and start by checking the arch. */
static void test_program_shape(void **state)
{
	const struct sock_fprog *prog;
	struct rg_error err;

	(void)state;
	assert_int_equal(rg_seccomp_program(&prog, &err), 0);
	assert_int_equal(prog->filter[0].code, BPF_LD | BPF_W | BPF_ABS);
	assert_int_equal(prog->filter[prog->len - 1].code, BPF_RET | BPF_K);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_matches_libseccomp),
		cmocka_unit_test(test_program_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
