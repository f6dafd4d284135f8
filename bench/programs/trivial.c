/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trivial: exit at once, the floor of what a sandboxed run can cost.
 *   trivial          _exit(0)
 *   trivial block    read stdin until EOF first, so that bench/run can look
 *                    at the namespaces of a live run (churn scenario)
 */
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[64];

	if (argc > 1 && strcmp(argv[1], "block") == 0)
		while (read(0, buf, sizeof(buf)) > 0)
			;
	_exit(0);
}
