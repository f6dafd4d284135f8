/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_image.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* not on the stack: a library caller's thread may have a small one */
#define PRELOAD_CHUNK (64 * 1024)

void rg_keeper_image_preload(int exe_fd)
{
	char path[64], *buf = malloc(PRELOAD_CHUNK);
	off_t off = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", exe_fd);
	fd = buf ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0) {
		free(buf);
		return;
	}
	/*
	 * Read, not only advised: read-ahead may be capped or dropped, and
	 * the keeper would read the rest in its slot. Pages cached already
	 * stay charged where they are.
	 */
	while ((n = pread(fd, buf, PRELOAD_CHUNK, off)) > 0 ||
	       (n < 0 && errno == EINTR))
		off += n > 0 ? n : 0;
	close(fd);
	free(buf);
}

/* The first object dl_iterate_phdr reports is the executable itself. */
static int lock_executable(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int *rc = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start, end;

		/*
		 * Not a writable segment: locking it would copy its pages
		 * (charged to the slot, for nothing).
		 */
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) &
		      ~(page - 1);
		if (mlock((void *)start, end - start) < 0 && !*rc)
			*rc = -errno;
	}
	return 1;
}

int rg_keeper_image_lock(void)
{
	int rc = 0;

	dl_iterate_phdr(lock_executable, &rc);
	return rc;
}
