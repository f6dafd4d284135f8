/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper's code kept in memory (lib/pool/keeper_image.c): the preload
 * puts a file that is not cached into the page cache, and the lock holds
 * this test's own executable, as it holds a keeper's. mlock needs no
 * privilege below RLIMIT_MEMLOCK; where that is too small the lock must
 * fail cleanly, which is checked instead. A forked child that maps its
 * image takes no fault writing what its parent wrote, and one that does
 * not takes one a page: the check can fail.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool/keeper_image.h"

#define FILE_PAGES 64

static char path[] = "/tmp/rg-keeper-image-XXXXXX";

/* Pages of fd's file in the page cache (mincore on a mapping). */
static size_t cached_pages(int fd, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	unsigned char vec[FILE_PAGES];
	void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

	assert_true(p != MAP_FAILED);
	assert_int_equal(mincore(p, size, vec), 0);
	for (size_t i = 0; i < size / page; i++)
		n += vec[i] & 1;
	munmap(p, size);
	return n;
}

static void test_preload_reads_the_whole_file(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = FILE_PAGES * page;
	char *data = calloc(1, size);
	int fd = mkstemp(path), opath;

	(void)state;
	assert_non_null(data);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	free(data);
	/* written back, then out of the page cache, as after a boot */
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	if (cached_pages(fd, size) > FILE_PAGES / 2) {
		close(fd);
		unlink(path);
		print_message("%s stays in the page cache (tmpfs?)\n", path);
		skip();
	}
	/* the keeper's executable is opened O_PATH (keeper.c) */
	opath = open(path, O_PATH | O_CLOEXEC);
	assert_true(opath >= 0);
	rg_keeper_image_preload(opath);
	assert_int_equal(cached_pages(fd, size), FILE_PAGES);
	close(opath);
	close(fd);
	unlink(path);
}

static long locked_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void test_lock_holds_the_executable_or_fails_cleanly(void **state)
{
	long before = locked_kib();
	int rc = rg_keeper_image_lock();

	(void)state;
	assert_true(before >= 0);
#ifdef __SANITIZE_ADDRESS__
	/* the sanitizer's mlock interceptor ignores the call: nothing to see */
	print_message("mlock is a no-op under AddressSanitizer\n");
	(void)rc;
	skip();
#endif
	if (rc < 0) {
		/* over RLIMIT_MEMLOCK without CAP_IPC_LOCK: nothing else */
		print_message("mlock refused: %s\n", strerror(-rc));
		assert_true(rc == -ENOMEM || rc == -EPERM || rc == -EAGAIN);
		return;
	}
	/* this function's own page is among them */
	assert_true(locked_kib() > before);
	assert_int_equal(munlockall(), 0);
}

#define DIRTY_PAGES 16

/* written by the parent: shared with a forked child until it writes */
static volatile char dirty[DIRTY_PAGES * 65536];

static long minor_faults(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/* In a forked child: the faults of writing each dirty page, as status. */
static int child_faults(bool map)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pid_t pid = fork();
	long before;
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (map)
			rg_keeper_image_map(64 * 1024);
		before = minor_faults();
		for (size_t i = 0; i < DIRTY_PAGES; i++)
			dirty[i * page] = 2;
		_exit((int)(minor_faults() - before));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_map_takes_the_faults_before_the_call(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int without, with;

	(void)state;
	for (size_t i = 0; i < DIRTY_PAGES; i++)
		dirty[i * page] = 1;
	without = child_faults(false);
	with = child_faults(true);
	print_message("faults writing %d pages after a fork: %d, after "
		      "rg_keeper_image_map: %d\n",
		      DIRTY_PAGES, without, with);
	/* copy on write: one a page (the kernel may map a neighbour too) */
	assert_true(without >= DIRTY_PAGES / 2);
	assert_true(with <= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preload_reads_the_whole_file),
		cmocka_unit_test(
			test_lock_holds_the_executable_or_fails_cleanly),
		cmocka_unit_test(test_map_takes_the_faults_before_the_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
