/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper's own executable in memory: neither a slot's charge nor a
 * slot's to reclaim. A page of the page cache is charged to the memory
 * cgroup of the process that read it first. A keeper that read its code
 * in its slot (the first start after a boot) had a reset reclaim that code
 * with the runs' leftovers after every run (more than the reset leaves),
 * and the next runner read it again in the slot: 170 pages a run, and a
 * reclaim after each, on v1 and v2 alike. docs/pool.md, "The keeper's
 * code".
 */
#ifndef RG_KEEPER_IMAGE_H
#define RG_KEEPER_IMAGE_H

#include <stddef.h>

/*
 * Before the keeper joins its slot: the executable exe_fd (O_PATH is
 * enough) read into the page cache by the caller, so that a page not
 * cached yet is charged to the caller's memory cgroup. Best effort.
 */
void rg_keeper_image_preload(int exe_fd);

/*
 * In the keeper, after its exec: its executable's read-only segments
 * locked in memory (mlock), so that no reclaim, the slot's or the host's,
 * takes them for a runner to read again. 0, or -errno where locking is
 * not allowed (without CAP_IPC_LOCK over RLIMIT_MEMLOCK): the keeper then
 * serves as well, with only the preload above.
 */
int rg_keeper_image_lock(void);

/*
 * In a runner, forked from the keeper, before its call: the pages it will
 * touch made its own now, not in the call. A fork copies no page table
 * entry of a file mapping (each code page faults in again) and leaves
 * written pages shared until the next write (each copied on a fault):
 * 19 faults in a trivial run's call here, all but one gone after this.
 * So: every cached page of our private mappings touched, the writable
 * ones written (the same byte back), and stack_margin bytes of stack
 * below ours. Pages not in memory are left alone (mincore: a page past
 * the end of a file would be SIGBUS, and untouched memory is not made
 * ours), as are mappings over 4 MiB (a sanitizer's shadow). What is
 * written is charged to the slot before the run, with the runner's.
 */
void rg_keeper_image_map(size_t stack_margin);

#endif
