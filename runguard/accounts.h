/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * User and group ids by name, as getpwnam()/getgrnam() give them, but
 * read straight from /etc/passwd and /etc/group when nsswitch.conf asks
 * "files" first: the first NSS lookup of a process costs about 0.1 ms
 * (configuration, nscd probes), paid on every runguard call otherwise.
 */
#ifndef RG_ACCOUNTS_H
#define RG_ACCOUNTS_H

#include <sys/types.h>

/* 0 and the id if the account exists, -1 if not. */
int rg_account_uid(const char *name, uid_t *uid);
int rg_account_gid(const char *name, gid_t *gid);

/* Tests: read these files instead of /etc's (NULL: back to /etc). */
void rg_accounts_use_files(const char *nsswitch, const char *passwd,
			   const char *group);

#endif
