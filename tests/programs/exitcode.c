/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exitcode N: exit with status N.
 */
#include "common.h"

int main(int argc, char **argv)
{
	if (argc != 2)
		die_usage(argv[0], "N");
	return (int)(parse_long(argv[1]) & 0xff);
}
