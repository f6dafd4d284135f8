/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Public structs that grow (docs/abi.md): each begins with struct_size, the
 * size of the caller's copy. The library works on a full copy of its own
 * and moves only the bytes both sides know.
 */
#ifndef RG_ABI_H
#define RG_ABI_H

#include <stddef.h>

#include <runguard/runguard.h>

/* Bytes of type up to and including member: a version's minimal size. */
#define RG_SIZE_THROUGH(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))

/* The caller's struct_size (the first member of every such struct). */
size_t rg_abi_struct_size(const void *caller_struct);

/* EINVAL unless the caller's struct_size is at least min_size. */
int rg_abi_check(const void *caller_struct, size_t min_size, const char *type,
		 struct rg_error *err);

/*
 * Fill *own (own_size bytes, struct_size own_size) from the caller's struct:
 * fields the caller does not know are zero.
 */
void rg_abi_copy_in(void *own, size_t own_size, const void *caller_struct);

/* Copy *own out, as far as the caller's struct reaches. */
void rg_abi_copy_out(void *caller_struct, const void *own, size_t own_size);

#endif
