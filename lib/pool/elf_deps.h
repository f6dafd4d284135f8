/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RG_ELF_DEPS_H
#define RG_ELF_DEPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RG_ELF_MAX_NEEDED 32

/* What the dynamic loader reads for one ELF object, as written in it. */
struct rg_elf_deps {
	uint16_t machine; /* e_machine */
	bool is64;
	char interp[PATH_MAX]; /* PT_INTERP; "" for none (static) */
	char search[PATH_MAX]; /* DT_RUNPATH or DT_RPATH; "" for none */
	char needed[RG_ELF_MAX_NEEDED][NAME_MAX + 1]; /* DT_NEEDED */
	size_t count;
};

/*
 * Of the ELF file open at fd (an untrusted one: every offset is checked):
 * 0 with *d filled (no interp and no needed for a static program), -1 if
 * it is no ELF file of this machine's byte order.
 */
int rg_elf_deps_read(int fd, struct rg_elf_deps *d);

#endif
