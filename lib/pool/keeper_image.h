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

#endif
