/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accounts.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_MAX 4294967294UL /* (uid_t)-1 is never an id */

static struct {
	const char *nsswitch, *passwd, *group;
} files = { "/etc/nsswitch.conf", "/etc/passwd", "/etc/group" };

/* -1 unknown, else whether "files" comes first (asked once per process). */
static int passwd_files_first = -1, group_files_first = -1;

void rg_accounts_use_files(const char *nsswitch, const char *passwd,
			   const char *group)
{
	files.nsswitch = nsswitch ? nsswitch : "/etc/nsswitch.conf";
	files.passwd = passwd ? passwd : "/etc/passwd";
	files.group = group ? group : "/etc/group";
	passwd_files_first = group_files_first = -1;
}

/* The "db:" line names "files" as its first source. */
static bool line_files_first(const char *line, const char *db)
{
	size_t len = strlen(db);

	if (strncmp(line, db, len) || line[len] != ':')
		return false;
	line += len + 1;
	line += strspn(line, " \t");
	return !strncmp(line, "files", 5) &&
	       strchr(" \t\n[", line[5] ? line[5] : '\n');
}

/* Both databases' answers from one read: a run looks up both. */
static void read_nsswitch(void)
{
	char *line = NULL;
	size_t size = 0;
	FILE *f = fopen(files.nsswitch, "re");

	passwd_files_first = group_files_first = 0;
	/* without the file, glibc's defaults differ: leave it to NSS */
	if (!f)
		return;
	while (getline(&line, &size, f) > 0) {
		if (line_files_first(line, "passwd"))
			passwd_files_first = 1;
		if (line_files_first(line, "group"))
			group_files_first = 1;
	}
	free(line);
	fclose(f);
}

/* The third field of name's line ("name:password:id:..."), if any. */
static bool id_of_line(const char *line, const char *name, unsigned long *id)
{
	size_t len = strlen(name);
	const char *field;
	char *end;

	if (strncmp(line, name, len) || line[len] != ':')
		return false;
	field = strchr(line + len + 1, ':');
	if (!field || field[1] < '0' || field[1] > '9')
		return false;
	errno = 0;
	*id = strtoul(field + 1, &end, 10);
	return !errno && *end == ':' && *id <= ID_MAX;
}

static bool scan_file(const char *path, const char *name, unsigned long *id)
{
	char *line = NULL;
	size_t size = 0;
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && getline(&line, &size, f) > 0) {
		/* NIS compat entries (+name, -name): NSS must decide */
		if (line[0] == '+' || line[0] == '-')
			break;
		found = id_of_line(line, name, id);
	}
	free(line);
	fclose(f);
	return found;
}

static bool fast_path(const int *cached)
{
	if (*cached < 0)
		read_nsswitch();
	return *cached;
}

int rg_account_uid(const char *name, uid_t *uid)
{
	struct passwd *pw;
	unsigned long id;

	if (fast_path(&passwd_files_first) &&
	    scan_file(files.passwd, name, &id)) {
		*uid = (uid_t)id;
		return 0;
	}
	errno = 0;
	pw = getpwnam(name);
	if (!pw)
		return -1;
	*uid = pw->pw_uid;
	return 0;
}

int rg_account_gid(const char *name, gid_t *gid)
{
	struct group *gr;
	unsigned long id;

	if (fast_path(&group_files_first) && scan_file(files.group, name, &id)) {
		*gid = (gid_t)id;
		return 0;
	}
	errno = 0;
	gr = getgrnam(name);
	if (!gr)
		return -1;
	*gid = gr->gr_gid;
	return 0;
}
