/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process's fd table, grown before another task shares it. Once a
 * task shares it (a thread, or the watchdog's CLONE_FILES), the kernel
 * grows it only after an RCU grace period (expand_fdtable()): 10-30 ms
 * on a 2-vCPU judgehost, paid by whichever call needs the 65th fd, often
 * the clone3() that makes the run's pidfd.
 */
#ifndef RG_FD_TABLE_H
#define RG_FD_TABLE_H

/* Lowest fd the table holds after rg_fd_table_reserve() (256 slots). */
#define RG_FD_TABLE_RESERVED 128

/*
 * Grow the table to hold fd RG_FD_TABLE_RESERVED - 1 now, while nothing
 * shares it, by a copy of open_fd that is closed at once (a no-op when the
 * table is that large already, and when it cannot be: RLIMIT_NOFILE below
 * that, or out of memory; the run then grows it later, as before). Call
 * before creating a task that shares the table.
 */
void rg_fd_table_reserve(int open_fd);

#endif
