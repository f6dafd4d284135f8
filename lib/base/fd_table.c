/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/fd_table.h"

#include <fcntl.h>
#include <unistd.h>

void rg_fd_table_reserve(int open_fd)
{
	int high = fcntl(open_fd, F_DUPFD_CLOEXEC, RG_FD_TABLE_RESERVED - 1);

	if (high >= 0)
		close(high);
}
