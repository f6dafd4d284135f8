/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests that work in a temporary directory: paths inside it. */
#ifndef RG_TEST_TMP_PATH_H
#define RG_TEST_TMP_PATH_H

#include <limits.h>
#include <stdio.h>

/* dir/name; two at a time (symlink takes two) */
static inline const char *tmp_path(const char *dir, const char *name)
{
	static char path[2][PATH_MAX];
	static int next;
	char *p = path[next++ % 2];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

#endif
