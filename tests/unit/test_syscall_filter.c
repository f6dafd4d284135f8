/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The syscall filter embedded at build time is the one libseccomp compiles
 * now: same length, same instructions. A stale or truncated header would
 * otherwise go unnoticed until a run escaped it. And the pooled variant
 * refuses the socket families it must, installed in a real child.
 */
#include <errno.h>
#include <linux/net.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "run/syscall_filter.h"

static void embedded_matches_libseccomp(bool pooled)
{
	const struct sock_fprog *embedded;
	struct sock_fprog built;
	struct rg_error err;

	assert_int_equal(rg_seccomp_program(&embedded, pooled, &err), 0);
	assert_int_equal(rg_seccomp_build(&built, pooled, &err), 0);
	assert_true(built.len > 0);
	assert_int_equal(embedded->len, built.len);
	assert_memory_equal(embedded->filter, built.filter,
			    built.len * sizeof(*built.filter));
	free(built.filter);
}

static void test_embedded_matches_libseccomp(void **state)
{
	(void)state;
	embedded_matches_libseccomp(false);
	embedded_matches_libseccomp(true);
}

/* The pooled variant is the per-run one plus its socket rules. */
static void test_pooled_variant_differs(void **state)
{
	const struct sock_fprog *run, *pooled;
	struct rg_error err;

	(void)state;
	assert_int_equal(rg_seccomp_program(&run, false, &err), 0);
	assert_int_equal(rg_seccomp_program(&pooled, true, &err), 0);
	assert_true(pooled->len > run->len);
}

/* errno of a socket() (0: it worked), the descriptor closed. */
static int socket_errno(long domain, int type, int proto)
{
	long fd = syscall(SYS_socket, domain, type, proto);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int socketpair_errno(int domain)
{
	int sv[2];

	if (socketpair(domain, SOCK_DGRAM, 0, sv) < 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

#if defined(__x86_64__)
/*
 * The i386 ABI from 64-bit code (int 0x80): socketcall(SYS_SOCKET) and
 * the direct socket call (359). -ENOSYS when the kernel has no 32-bit
 * emulation. args must be addressable with 32 bits.
 */
static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory");
	return ret;
}

static int i386_errno(bool socketcall, uint32_t *args)
{
	long ret = socketcall ? int80(102, SYS_SOCKET, (long)args, 0) :
				int80(359, args[0], args[1], args[2]);

	if (ret >= 0) {
		close((int)ret);
		return 0;
	}
	return (int)-ret;
}
#endif

/*
 * In a child: install the filter, then every call must give what
 * expected[] says (0: success). Returns the index + 1 of the first that
 * did not, 0 if all did.
 */
static int check_in_child(bool pooled, bool has_ia32)
{
	const struct sock_fprog *prog;
	struct rg_error err;
	int inet = pooled ? EAFNOSUPPORT : 0;
	int got[7], want[7] = {
		inet, inet, pooled ? EAFNOSUPPORT : EAFNOSUPPORT,
		0,    0,    pooled ? EAFNOSUPPORT : EAFNOSUPPORT,
		0,
	};
	int i;

	if (rg_seccomp_program(&prog, pooled, &err) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    rg_seccomp_install(prog) < 0)
		return 100;
	got[0] = socket_errno(AF_INET, SOCK_DGRAM, 0);
	got[1] = socket_errno(AF_INET6, SOCK_STREAM, 0);
	/* AF_UNIX with upper bits: the kernel would see AF_UNIX */
	got[2] = pooled ? socket_errno(0x100000000L | AF_UNIX, SOCK_DGRAM, 0) :
			  socket_errno(AF_MAX + 1, SOCK_DGRAM, 0);
	got[3] = socket_errno(AF_UNIX, SOCK_DGRAM, 0);
	got[4] = socket_errno(AF_NETLINK, SOCK_RAW, 0);
	got[5] = pooled ? socketpair_errno(AF_INET) : EAFNOSUPPORT;
	got[6] = socketpair_errno(AF_UNIX);
	for (i = 0; i < 7; i++) {
		if (got[i] == want[i])
			continue;
		fprintf(stderr, "call %d: errno %d, expected %d\n", i, got[i],
			want[i]);
		return i + 1;
	}
#if defined(__x86_64__)
	if (has_ia32) {
		uint32_t *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
				      -1, 0);

		if (args == MAP_FAILED)
			return 101;
		args[0] = AF_INET;
		args[1] = SOCK_DGRAM;
		args[2] = 0;
		if (i386_errno(false, args) != (pooled ? EAFNOSUPPORT : 0))
			return 20;
		if (i386_errno(true, args) != (pooled ? EAFNOSUPPORT : 0))
			return 21;
		args[0] = AF_UNIX;
		if (i386_errno(false, args) != 0)
			return 22;
	}
#endif
	return 0;
}

static void filter_in_child(bool pooled, bool has_ia32)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(check_in_child(pooled, has_ia32));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * Pooled runs may make AF_UNIX and AF_NETLINK sockets only, whatever the
 * ABI; per-run runs any (their net namespace dies with them).
 */
static void test_pooled_socket_families(void **state)
{
	bool has_ia32 = false;
	int status;
	pid_t pid;

	(void)state;
#if defined(__x86_64__)
	/* int 0x80 kills the caller where 32-bit emulation is off */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* cmocka's handler would go on with the tests in the child */
		signal(SIGSEGV, SIG_DFL);
		_exit(int80(20 /* getpid */, 0, 0, 0) == getpid() ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	has_ia32 = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!has_ia32)
		print_message("  no 32-bit emulation: i386 calls not tried\n");
#else
	(void)pid;
	(void)status;
#endif
	filter_in_child(true, has_ia32);
	filter_in_child(false, has_ia32);
}

/* The filter must end in a return and start by checking the arch. */
static void test_program_shape(void **state)
{
	const struct sock_fprog *prog;
	struct rg_error err;

	(void)state;
	for (int pooled = 0; pooled < 2; pooled++) {
		assert_int_equal(rg_seccomp_program(&prog, pooled, &err), 0);
		assert_int_equal(prog->filter[0].code,
				 BPF_LD | BPF_W | BPF_ABS);
		assert_int_equal(prog->filter[prog->len - 1].code,
				 BPF_RET | BPF_K);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_matches_libseccomp),
		cmocka_unit_test(test_pooled_variant_differs),
		cmocka_unit_test(test_pooled_socket_families),
		cmocka_unit_test(test_program_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
