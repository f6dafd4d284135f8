/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The syscall filter, compiled with libseccomp: allow by default, deny with
 * EPERM what no contest program needs and what widens the kernel's attack
 * surface or leads out of the sandbox. EPERM (not a kill) so that runtimes
 * probing for features keep working. clone3 gets ENOSYS because its flags
 * live in memory the filter cannot read; libc then falls back to clone,
 * whose flags we can check.
 *
 * Pooled runs get a second variant that also refuses sockets of every
 * family but AF_UNIX and AF_NETLINK (see add_pooled_rules).
 *
 * The build runs this once (gen_syscall_filter.c) and embeds the programs,
 * so that a run does not pay for compiling it; at run time it is only used
 * when the build could not run the generator (cross builds).
 */
#include "run/syscall_filter.h"

#include <errno.h>
#include <linux/net.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

/* The tables keep several entries to a line. */
/* clang-format off */
static const char *const denied_syscalls[] = {
	/* kernel keyrings */
	"keyctl", "add_key", "request_key",
	/* large kernel attack surface, not needed for judging */
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"lookup_dcookie", "fanotify_init", "open_by_handle_at",
	"name_to_handle_at", "uselib", "nfsservctl", "iopl", "ioperm",
	/* mounts and namespaces: the way out of a chroot */
	"mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns",
	/* the host itself */
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "swapon", "swapoff", "reboot", "acct", "quotactl",
	"quotactl_fd", "syslog", "vhangup",
	/* other processes of the same user (e.g. a concurrent run) */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
};

/* clone() flags that would create namespaces. */
static const unsigned long denied_clone_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

/* Same rules for 32-bit code, so a switch of ABI is no way around them. */
static const uint32_t extra_arches[] = { SCMP_ARCH_X86, SCMP_ARCH_X32 };

static int add_rules(scmp_filter_ctx ctx, struct rg_error *err)
{
	int rc, nr;

	for (size_t i = 0; i < sizeof(denied_syscalls) / sizeof(*denied_syscalls); i++) {
		nr = seccomp_syscall_resolve_name(denied_syscalls[i]);
		if (nr == __NR_SCMP_ERROR)
			continue; /* unknown to this libseccomp */
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (rc < 0 && rc != -EDOM)
			return rg_fail(err, -rc, "seccomp rule for %s",
				       denied_syscalls[i]);
	}
	for (size_t i = 0; i < sizeof(denied_clone_flags) / sizeof(*denied_clone_flags); i++) {
		unsigned long f = denied_clone_flags[i];

		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				      SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, f, f));
		if (rc < 0)
			return rg_fail(err, -rc, "seccomp rule for clone");
	}
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
			      seccomp_syscall_resolve_name("clone3"), 0);
	if (rc < 0 && rc != -EDOM)
		return rg_fail(err, -rc, "seccomp rule for clone3");
	return 0;
}

/*
 * socket() domains a pooled run may not use: everything but AF_UNIX (1)
 * and AF_NETLINK (16), upper bits included. One comparison per rule (a
 * libseccomp rule may compare an argument once), so ranges are masks.
 */
static const struct scmp_arg_cmp denied_domains[] = {
	{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = AF_UNSPEC },
	/* 2-3, 4-7, 8-15: datum_a masks, datum_b is the value */
	{ .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = ~1ULL, .datum_b = 2 },
	{ .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = ~3ULL, .datum_b = 4 },
	{ .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = ~7ULL, .datum_b = 8 },
	{ .arg = 0, .op = SCMP_CMP_GT, .datum_a = AF_NETLINK },
};
/* clang-format on */

static int add_rule(scmp_filter_ctx ctx, int errnum, const char *name,
		    struct scmp_arg_cmp cmp, struct rg_error *err)
{
	int nr = seccomp_syscall_resolve_name(name), rc;

	if (nr == __NR_SCMP_ERROR)
		return 0; /* unknown to this libseccomp */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), nr, 1, cmp);
	/* -EDOM: no such call on an arch of the filter (socketcall) */
	if (rc < 0 && rc != -EDOM)
		return rg_fail(err, -rc, "seccomp rule for %s", name);
	return 0;
}

/*
 * A pooled run shares its slot's network namespace with the runs before
 * and after it, and the namespace's counters (/proc/net/snmp, netstat,
 * the loopback's drops in /proc/net/dev) cannot be reset: a datagram to
 * 127.0.0.1 (down) would be a message to the next run. Sockets of other
 * families than AF_UNIX and AF_NETLINK fail with EAFNOSUPPORT, as on a
 * kernel built without them; an unprivileged process changes no counter
 * of its namespace with those two (docs/security.md). socketpair() makes
 * two sockets too (AF_TIPC has it); 32-bit code calls both through
 * socketcall(), whose arguments the filter cannot read: refused there
 * whatever the family. io_uring (IORING_OP_SOCKET) is denied anyway.
 */
static int add_pooled_rules(scmp_filter_ctx ctx, struct rg_error *err)
{
	for (size_t i = 0;
	     i < sizeof(denied_domains) / sizeof(*denied_domains); i++)
		if (add_rule(ctx, EAFNOSUPPORT, "socket", denied_domains[i],
			     err) < 0)
			return -1;
	if (add_rule(ctx, EAFNOSUPPORT, "socketpair",
		     SCMP_A0(SCMP_CMP_NE, AF_UNIX), err) < 0 ||
	    add_rule(ctx, EAFNOSUPPORT, "socketcall",
		     SCMP_A0(SCMP_CMP_EQ, SYS_SOCKET), err) < 0 ||
	    add_rule(ctx, EAFNOSUPPORT, "socketcall",
		     SCMP_A0(SCMP_CMP_EQ, SYS_SOCKETPAIR), err) < 0)
		return -1;
	return 0;
}

static int add_arches(scmp_filter_ctx ctx, struct rg_error *err)
{
	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		return 0;
	for (size_t i = 0; i < sizeof(extra_arches) / sizeof(*extra_arches);
	     i++) {
		int rc = seccomp_arch_add(ctx, extra_arches[i]);

		if (rc < 0 && rc != -EEXIST)
			return rg_fail(err, -rc, "seccomp: adding an arch");
	}
	return 0;
}

/* libseccomp 2.5 exports only to an fd: go through a memfd. */
static int export_program(scmp_filter_ctx ctx, struct sock_fprog *prog,
			  struct rg_error *err)
{
	struct stat st;
	void *buf;
	int fd, rc;

	fd = memfd_create("runguard-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return rg_fail(err, errno, "seccomp: memfd_create");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		close(fd);
		return rg_fail(err, -rc, "seccomp: exporting the filter");
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    st.st_size % sizeof(struct sock_filter)) {
		close(fd);
		return rg_fail(err, EINVAL, "seccomp: bad exported filter");
	}
	buf = malloc(st.st_size);
	if (!buf || pread(fd, buf, st.st_size, 0) != st.st_size) {
		free(buf);
		close(fd);
		return rg_fail(err, EIO, "seccomp: reading the filter");
	}
	close(fd);
	prog->filter = buf;
	prog->len = st.st_size / sizeof(struct sock_filter);
	return 0;
}

int rg_seccomp_build(struct sock_fprog *prog, bool pooled, struct rg_error *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return rg_fail(err, ENOMEM, "seccomp_init");
	/* the child sets no_new_privs itself, before it drops root */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/*
	 * A binary tree of syscall numbers: the kernel evaluates the filter
	 * for every syscall of every arch when it is installed (its
	 * constant-action cache), so a shorter path per syscall makes the
	 * install 2.5 times faster here (177 -> 71 us).
	 */
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		seccomp_release(ctx);
		return rg_fail(err, -rc, "seccomp: attribute");
	}
	rc = add_arches(ctx, err);
	if (!rc)
		rc = add_rules(ctx, err);
	if (!rc && pooled)
		rc = add_pooled_rules(ctx, err);
	if (!rc)
		rc = export_program(ctx, prog, err);
	seccomp_release(ctx);
	return rc;
}
