/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/keeper_image.h"

#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* the largest mapping rg_keeper_image_map() walks */
#define MAP_WALK_MAX ((size_t)4 << 20)

/*
 * Each page of [lo, hi) that is in memory: read, and written back. Not
 * for the address sanitizer: a page may hold its redzones.
 */
__attribute__((no_sanitize("address"))) static void
touch_resident(uintptr_t lo, uintptr_t hi, bool write, size_t page,
	       unsigned char *vec)
{
	if (mincore((void *)lo, hi - lo, vec) < 0)
		return;
	for (uintptr_t p = lo; p < hi; p += page) {
		volatile unsigned char *b = (volatile unsigned char *)p;

		if (!(vec[(p - lo) / page] & 1))
			continue;
		if (write)
			*b = *b;
		else
			(void)*b;
	}
}

/* A line of /proc/self/maps: its private, readable pages touched. */
static void map_line(const char *line, size_t page, unsigned char *vec)
{
	unsigned long lo, hi;
	char perms[8];

	if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
	    strlen(perms) != 4 || perms[0] != 'r' || perms[3] != 'p' ||
	    hi <= lo || hi - lo > MAP_WALK_MAX || strstr(line, "[v"))
		return; /* [vvar], [vsyscall]: the kernel's */
	touch_resident(lo, hi, perms[1] == 'w', page, vec);
}

/* The stack below ours, written: as deep as the call goes. */
static void __attribute__((noinline)) map_stack(size_t margin)
{
	volatile char *deep = alloca(margin);

	for (size_t i = 0; i < margin; i += 1024)
		deep[i] = 0;
}

void rg_keeper_image_map(size_t stack_margin)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(MAP_WALK_MAX / page);
	char line[512];
	FILE *maps;

	map_stack(stack_margin);
	maps = vec ? fopen("/proc/self/maps", "re") : NULL;
	if (maps) {
		while (fgets(line, sizeof(line), maps)) {
			int c = 0;

			map_line(line, page, vec);
			/* the rest of a line too long: a path, no mapping */
			while (!strchr(line, '\n') && c != '\n' && c != EOF)
				c = fgetc(maps);
		}
		fclose(maps);
	}
	free(vec);
}
