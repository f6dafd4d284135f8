/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared libraries an ELF program makes the dynamic loader map: its
 * interpreter (PT_INTERP), its DT_NEEDED names and where it says to look
 * for them (DT_RUNPATH, or DT_RPATH without it). The program is the
 * submission, read as root: every size and offset is checked against
 * the file, and what does not fit is ignored.
 */
#include "pool/elf_deps.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PHDRS 256
#define MAX_DYN_BYTES (64 * 1024)

/* What both ELF classes give us, widened. */
struct seg {
	uint32_t type;
	uint64_t offset, vaddr, filesz;
};

struct dyn {
	int64_t tag;
	uint64_t val;
};

struct elf {
	int fd;
	uint64_t size; /* of the file */
	bool is64;
	uint16_t machine;
	struct seg seg[MAX_PHDRS];
	unsigned int nseg;
};

static bool read_at(const struct elf *e, void *buf, uint64_t len, uint64_t off)
{
	ssize_t n;

	if (off > e->size || len > e->size - off)
		return false;
	do {
		n = pread(e->fd, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

static bool native_ident(const unsigned char *id)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const int data = ELFDATA2LSB;
#else
	const int data = ELFDATA2MSB;
#endif
	return memcmp(id, ELFMAG, SELFMAG) == 0 && id[EI_DATA] == data &&
	       (id[EI_CLASS] == ELFCLASS32 || id[EI_CLASS] == ELFCLASS64);
}

static bool read_segments(struct elf *e, uint64_t phoff, unsigned int phnum)
{
	for (unsigned int i = 0; i < phnum; i++) {
		struct seg *s = &e->seg[i];

		if (e->is64) {
			Elf64_Phdr p;

			if (!read_at(e, &p, sizeof(p), phoff + i * sizeof(p)))
				return false;
			*s = (struct seg){ p.p_type, p.p_offset, p.p_vaddr,
					   p.p_filesz };
		} else {
			Elf32_Phdr p;

			if (!read_at(e, &p, sizeof(p), phoff + i * sizeof(p)))
				return false;
			*s = (struct seg){ p.p_type, p.p_offset, p.p_vaddr,
					   p.p_filesz };
		}
	}
	e->nseg = phnum;
	return true;
}

static bool read_header(struct elf *e)
{
	Elf64_Ehdr h64;
	Elf32_Ehdr h32;

	if (!read_at(e, &h64, EI_NIDENT, 0) || !native_ident(h64.e_ident))
		return false;
	e->is64 = h64.e_ident[EI_CLASS] == ELFCLASS64;
	if (e->is64) {
		if (!read_at(e, &h64, sizeof(h64), 0) ||
		    h64.e_phentsize != sizeof(Elf64_Phdr) ||
		    h64.e_phnum > MAX_PHDRS)
			return false;
		e->machine = h64.e_machine;
		return read_segments(e, h64.e_phoff, h64.e_phnum);
	}
	if (!read_at(e, &h32, sizeof(h32), 0) ||
	    h32.e_phentsize != sizeof(Elf32_Phdr) || h32.e_phnum > MAX_PHDRS)
		return false;
	e->machine = h32.e_machine;
	return read_segments(e, h32.e_phoff, h32.e_phnum);
}

/* A NUL-terminated string of at most len - 1 bytes at off, or "". */
static bool read_string(const struct elf *e, uint64_t off, char *buf,
			size_t len)
{
	uint64_t avail = off < e->size ? e->size - off : 0;
	size_t n = avail < len ? (size_t)avail : len;

	if (n > 0 && read_at(e, buf, n, off) && memchr(buf, '\0', n))
		return true;
	buf[0] = '\0';
	return false;
}

/* The file offset of a loaded address (DT_STRTAB is one). */
static bool vaddr_to_offset(const struct elf *e, uint64_t vaddr, uint64_t *off)
{
	for (unsigned int i = 0; i < e->nseg; i++) {
		const struct seg *s = &e->seg[i];

		if (s->type == PT_LOAD && vaddr >= s->vaddr &&
		    vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return true;
		}
	}
	return false;
}

/* The dynamic section, read in small chunks: no big buffer on the stack. */
static unsigned int read_dynamic(const struct elf *e, const struct seg *s,
				 struct dyn *dyn, unsigned int max)
{
	size_t entsize = e->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	uint64_t len = s->filesz < MAX_DYN_BYTES ? s->filesz : MAX_DYN_BYTES;
	unsigned char buf[64 * sizeof(Elf64_Dyn)];
	size_t per_chunk = sizeof(buf) / entsize;
	unsigned int n = 0;

	for (uint64_t at = 0; at + entsize <= len && n < max;) {
		size_t want = (size_t)((len - at) / entsize);

		if (want > per_chunk)
			want = per_chunk;
		if (!read_at(e, buf, want * entsize, s->offset + at))
			return n;
		for (size_t k = 0; k < want && n < max; k++) {
			if (e->is64) {
				Elf64_Dyn d;

				memcpy(&d, buf + k * entsize, sizeof(d));
				dyn[n] = (struct dyn){ d.d_tag, d.d_un.d_val };
			} else {
				Elf32_Dyn d;

				memcpy(&d, buf + k * entsize, sizeof(d));
				dyn[n] = (struct dyn){ d.d_tag, d.d_un.d_val };
			}
			if (dyn[n].tag == DT_NULL)
				return n;
			n++;
		}
		at += want * entsize;
	}
	return n;
}

static void take_names(const struct elf *e, const struct dyn *dyn,
		       unsigned int n, struct rg_elf_deps *d)
{
	uint64_t strtab = 0, strsz = 0, rpath = UINT64_MAX,
		 runpath = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (dyn[i].tag == DT_STRTAB &&
		    !vaddr_to_offset(e, dyn[i].val, &strtab))
			return;
		if (dyn[i].tag == DT_STRSZ)
			strsz = dyn[i].val;
		if (dyn[i].tag == DT_RPATH)
			rpath = dyn[i].val;
		if (dyn[i].tag == DT_RUNPATH)
			runpath = dyn[i].val;
	}
	if (!strsz)
		return;
	/* as the loader: DT_RPATH only when there is no DT_RUNPATH */
	if (runpath == UINT64_MAX)
		runpath = rpath;
	if (runpath < strsz)
		read_string(e, strtab + runpath, d->search, sizeof(d->search));
	for (i = 0; i < n && d->count < RG_ELF_MAX_NEEDED; i++) {
		char *name = d->needed[d->count];

		if (dyn[i].tag == DT_NEEDED && dyn[i].val < strsz &&
		    read_string(e, strtab + dyn[i].val, name,
				sizeof(d->needed[0])))
			d->count++;
	}
}

int rg_elf_deps_read(int fd, struct rg_elf_deps *d)
{
	struct dyn dyn[512];
	struct stat st;
	struct elf e = { .fd = fd };

	memset(d, 0, sizeof(*d));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	e.size = (uint64_t)st.st_size;
	if (!read_header(&e))
		return -1;
	d->machine = e.machine;
	d->is64 = e.is64;
	for (unsigned int i = 0; i < e.nseg; i++) {
		const struct seg *s = &e.seg[i];

		if (s->type == PT_INTERP && s->filesz <= sizeof(d->interp))
			read_string(&e, s->offset, d->interp,
				    (size_t)s->filesz);
		if (s->type == PT_DYNAMIC)
			take_names(&e, dyn,
				   read_dynamic(&e, s, dyn,
						sizeof(dyn) / sizeof(*dyn)),
				   d);
	}
	return 0;
}
