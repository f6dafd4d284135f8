/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Moving growable public structs between caller and library. */
#include <errno.h>
#include <string.h>

#include "base/abi.h"
#include "base/error.h"

size_t rg_abi_struct_size(const void *caller_struct)
{
	size_t size;

	memcpy(&size, caller_struct, sizeof(size));
	return size;
}

int rg_abi_check(const void *caller_struct, size_t min_size, const char *type,
		 struct rg_error *err)
{
	size_t size = rg_abi_struct_size(caller_struct);

	if (size >= min_size)
		return 0;
	return rg_fail(err, EINVAL,
		       "struct %s: struct_size is %zu, at least %zu expected "
		       "(set it to sizeof(struct %s))",
		       type, size, min_size, type);
}

static size_t smaller(size_t a, size_t b)
{
	return a < b ? a : b;
}

void rg_abi_copy_in(void *own, size_t own_size, const void *caller_struct)
{
	size_t n = smaller(rg_abi_struct_size(caller_struct), own_size);

	memset(own, 0, own_size);
	memcpy(own, caller_struct, n);
	memcpy(own, &own_size, sizeof(own_size));
}

void rg_abi_copy_out(void *caller_struct, const void *own, size_t own_size)
{
	size_t size = rg_abi_struct_size(caller_struct);

	memcpy(caller_struct, own, smaller(size, own_size));
	memcpy(caller_struct, &size, sizeof(size));
}
