/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rg_elf_deps_read() on real and crafted ELF files: what the dynamic
 * loader would read, and hostile files (the submission is the input)
 * read without going out of bounds or trusting a size.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "pool/elf_deps.h"

#define VBASE 0x400000u
#define IMAGE_SIZE 4096

/* Offsets in the crafted 64-bit image: header, 3 phdrs, then these. */
#define INTERP_OFF 512
#define DYN_OFF 768
#define STR_OFF 1024

static const char strtab[] = "\0liba.so\0libb.so\0$ORIGIN/lib:/opt/x";
#define STR_LIBA 1
#define STR_LIBB 9
#define STR_RUNPATH 17

struct image {
	unsigned char b[IMAGE_SIZE];
	size_t len;
};

static int image_fd(const struct image *im)
{
	int fd = memfd_create("elf", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, im->b, im->len), (ssize_t)im->len);
	return fd;
}

static int read_image(const struct image *im, struct rg_elf_deps *d)
{
	int fd = image_fd(im), rc = rg_elf_deps_read(fd, d);

	close(fd);
	return rc;
}

static void put_dyn64(struct image *im, int i, int64_t tag, uint64_t val)
{
	Elf64_Dyn d = { .d_tag = tag, .d_un.d_val = val };

	memcpy(im->b + DYN_OFF + i * sizeof(d), &d, sizeof(d));
}

/* A dynamic 64-bit program needing liba.so and libb.so. */
static void craft64(struct image *im, bool dynamic)
{
	Elf64_Ehdr *h = (Elf64_Ehdr *)im->b;
	Elf64_Phdr ph[3] = {
		{ .p_type = PT_LOAD,
		  .p_offset = 0,
		  .p_vaddr = VBASE,
		  .p_filesz = IMAGE_SIZE,
		  .p_memsz = IMAGE_SIZE },
		{ .p_type = PT_INTERP,
		  .p_offset = INTERP_OFF,
		  .p_filesz = sizeof("/lib64/ld-test.so.2") },
		{ .p_type = PT_DYNAMIC,
		  .p_offset = DYN_OFF,
		  .p_filesz = 6 * sizeof(Elf64_Dyn) },
	};

	memset(im, 0, sizeof(*im));
	im->len = IMAGE_SIZE;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_machine = EM_X86_64;
	h->e_phoff = sizeof(*h);
	h->e_phentsize = sizeof(Elf64_Phdr);
	h->e_phnum = dynamic ? 3 : 1;
	memcpy(im->b + sizeof(*h), ph, sizeof(ph));
	strcpy((char *)im->b + INTERP_OFF, "/lib64/ld-test.so.2");
	memcpy(im->b + STR_OFF, strtab, sizeof(strtab));
	put_dyn64(im, 0, DT_NEEDED, STR_LIBA);
	put_dyn64(im, 1, DT_NEEDED, STR_LIBB);
	put_dyn64(im, 2, DT_STRTAB, VBASE + STR_OFF);
	put_dyn64(im, 3, DT_STRSZ, sizeof(strtab));
	put_dyn64(im, 4, DT_RUNPATH, STR_RUNPATH);
	put_dyn64(im, 5, DT_NULL, 0);
}

static Elf64_Phdr *phdr64(struct image *im, int i)
{
	return (Elf64_Phdr *)(im->b + sizeof(Elf64_Ehdr)) + i;
}

static void test_crafted_dynamic(void **state)
{
	struct rg_elf_deps d;
	struct image im;

	(void)state;
	craft64(&im, true);
	assert_int_equal(read_image(&im, &d), 0);
	assert_true(d.is64);
	assert_int_equal(d.machine, EM_X86_64);
	assert_string_equal(d.interp, "/lib64/ld-test.so.2");
	assert_int_equal(d.count, 2);
	assert_string_equal(d.needed[0], "liba.so");
	assert_string_equal(d.needed[1], "libb.so");
	assert_string_equal(d.search, "$ORIGIN/lib:/opt/x");
}

static void test_rpath_only_without_runpath(void **state)
{
	struct rg_elf_deps d;
	struct image im;

	(void)state;
	craft64(&im, true);
	put_dyn64(&im, 4, DT_RPATH, STR_LIBB); /* the loader's old search */
	assert_int_equal(read_image(&im, &d), 0);
	assert_string_equal(d.search, "libb.so");
}

static void test_static(void **state)
{
	struct rg_elf_deps d;
	struct image im;

	(void)state;
	craft64(&im, false);
	assert_int_equal(read_image(&im, &d), 0);
	assert_string_equal(d.interp, "");
	assert_int_equal(d.count, 0);
}

static void test_elf32(void **state)
{
	struct rg_elf_deps d;
	struct image im;
	Elf32_Ehdr *h = (Elf32_Ehdr *)im.b;
	Elf32_Phdr ph[2] = {
		{ .p_type = PT_LOAD,
		  .p_offset = 0,
		  .p_vaddr = VBASE,
		  .p_filesz = IMAGE_SIZE },
		{ .p_type = PT_DYNAMIC,
		  .p_offset = DYN_OFF,
		  .p_filesz = 4 * sizeof(Elf32_Dyn) },
	};
	Elf32_Dyn dyn[4] = {
		{ .d_tag = DT_STRTAB, .d_un.d_val = VBASE + STR_OFF },
		{ .d_tag = DT_STRSZ, .d_un.d_val = sizeof(strtab) },
		{ .d_tag = DT_NEEDED, .d_un.d_val = STR_LIBB },
		{ .d_tag = DT_NULL },
	};

	(void)state;
	memset(&im, 0, sizeof(im));
	im.len = IMAGE_SIZE;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS32;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_machine = EM_386;
	h->e_phoff = sizeof(*h);
	h->e_phentsize = sizeof(Elf32_Phdr);
	h->e_phnum = 2;
	memcpy(im.b + sizeof(*h), ph, sizeof(ph));
	memcpy(im.b + DYN_OFF, dyn, sizeof(dyn));
	memcpy(im.b + STR_OFF, strtab, sizeof(strtab));
	assert_int_equal(read_image(&im, &d), 0);
	assert_false(d.is64);
	assert_int_equal(d.machine, EM_386);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.needed[0], "libb.so");
}

/* Headers that point outside the file, or claim too much: refused. */
static void test_bad_headers(void **state)
{
	struct rg_elf_deps d;
	struct image im;

	(void)state;
	craft64(&im, true);
	((Elf64_Ehdr *)im.b)->e_phoff = 1u << 30;
	assert_int_equal(read_image(&im, &d), -1);
	craft64(&im, true);
	((Elf64_Ehdr *)im.b)->e_phnum = 1000;
	assert_int_equal(read_image(&im, &d), -1);
	craft64(&im, true);
	((Elf64_Ehdr *)im.b)->e_phentsize = 12;
	assert_int_equal(read_image(&im, &d), -1);
	craft64(&im, true);
	im.b[EI_DATA] = ELFDATA2MSB; /* not this machine's byte order */
	assert_int_equal(read_image(&im, &d), -1);
	craft64(&im, true);
	im.len = 40; /* cut inside the header */
	assert_int_equal(read_image(&im, &d), -1);
	memset(&im, 0, sizeof(im));
	strcpy((char *)im.b, "#!/bin/sh\necho not ELF\n");
	im.len = strlen((char *)im.b);
	assert_int_equal(read_image(&im, &d), -1);
}

/* Names and sections that do not fit are left out, the rest is read. */
static void test_bad_names(void **state)
{
	struct rg_elf_deps d;
	struct image im;

	(void)state;
	craft64(&im, true);
	put_dyn64(&im, 0, DT_NEEDED, 1u << 20); /* beyond DT_STRSZ */
	assert_int_equal(read_image(&im, &d), 0);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.needed[0], "libb.so");

	craft64(&im, true);
	put_dyn64(&im, 2, DT_STRTAB, 0x10); /* in no PT_LOAD */
	assert_int_equal(read_image(&im, &d), 0);
	assert_int_equal(d.count, 0);
	assert_string_equal(d.search, "");

	craft64(&im, true);
	put_dyn64(&im, 3, DT_STRSZ, UINT64_MAX); /* strings up to the end */
	memset(im.b + STR_OFF + STR_LIBB, 'x', IMAGE_SIZE - STR_OFF - STR_LIBB);
	assert_int_equal(read_image(&im, &d), 0);
	assert_int_equal(d.count, 1); /* libb.so runs into the end: no NUL */
	assert_string_equal(d.needed[0], "liba.so");

	craft64(&im, true);
	phdr64(&im, 1)->p_filesz = 1u << 20; /* PT_INTERP beyond PATH_MAX */
	phdr64(&im, 2)->p_offset = IMAGE_SIZE - 8; /* PT_DYNAMIC cut off */
	assert_int_equal(read_image(&im, &d), 0);
	assert_string_equal(d.interp, "");
	assert_int_equal(d.count, 0);

	craft64(&im, true);
	phdr64(&im, 1)->p_offset = IMAGE_SIZE - 4; /* runs into the end */
	memset(im.b + IMAGE_SIZE - 4, '/', 4);
	assert_int_equal(read_image(&im, &d), 0);
	assert_string_equal(d.interp, "");
	assert_int_equal(d.count, 2);
}

/* This test program itself: linked dynamically against libc. */
static void test_real_program(void **state)
{
	struct rg_elf_deps d;
	bool libc = false;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(rg_elf_deps_read(fd, &d), 0);
	close(fd);
	assert_int_equal(d.interp[0], '/');
	for (size_t i = 0; i < d.count; i++)
		libc |= strcmp(d.needed[i], "libc.so.6") == 0;
	assert_true(libc);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(rg_elf_deps_read(fd, &d), -1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crafted_dynamic),
		cmocka_unit_test(test_rpath_only_without_runpath),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_elf32),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_real_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
