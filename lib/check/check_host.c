/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Items privileges.* and the accounts: what the calling process may do
 * (capabilities, the rlimits it hands to runs: sudo sets its own), the
 * run users and the chroot prefix.
 */
#include <fnmatch.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/check_internal.h"
#include "base/base.h"

#define LIST_LEN 512

/* -- capabilities ---------------------------------------------------- */

static const struct {
	cap_value_t cap;
	const char *name;
} needed_caps[] = {
	{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" }, /* namespaces, mounts */
	{ CAP_SETUID, "CAP_SETUID" },	    /* the run user */
	{ CAP_SETGID, "CAP_SETGID" },
	{ CAP_SYS_CHROOT, "CAP_SYS_CHROOT" }, /* -r */
	{ CAP_KILL, "CAP_KILL" },	      /* the run user's processes */
	{ CAP_SETPCAP, "CAP_SETPCAP" },	      /* dropping the bounding set */
};

static bool has_cap(cap_t caps, cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;

	return caps && cap_get_flag(caps, cap, CAP_EFFECTIVE, &v) == 0 &&
	       v == CAP_SET;
}

static void check_caps(struct rg_check_ctx *c)
{
	char missing[LIST_LEN] = "";
	cap_t caps = cap_get_proc();

	for (size_t i = 0; i < sizeof(needed_caps) / sizeof(*needed_caps); i++)
		if (!has_cap(caps, needed_caps[i].cap))
			snprintf(missing + strlen(missing),
				 sizeof(missing) - strlen(missing), "%s%s",
				 *missing ? ", " : "", needed_caps[i].name);
	c->cap_sys_resource = has_cap(caps, CAP_SYS_RESOURCE);
	if (caps)
		cap_free(caps);
	if (geteuid() != 0 || *missing)
		rg_check_add(c->report, "privileges.capabilities",
			     RG_CHECK_ERROR,
			     "run it as root with full capabilities (DOMjudge: through sudo; a container: --privileged)",
			     "%s%s%s", geteuid() ? "not root; " : "",
			     *missing ? "missing " : "", missing);
	else if (!c->cap_sys_resource)
		rg_check_add(c->report, "privileges.capabilities",
			     RG_CHECK_WARNING,
			     "give runguard CAP_SYS_RESOURCE (a container: --cap-add SYS_RESOURCE)",
			     "root without CAP_SYS_RESOURCE: runs work, but get no limit above the hard rlimits runguard starts with (kept, with a warning), core dumps 0/0 where the hard RLIMIT_CORE is 0, and slot keepers stay candidates of the OOM killer");
	else
		rg_check_add(c->report, "privileges.capabilities", RG_CHECK_OK,
			     NULL, "root with the capabilities runguard uses");
}

/* -- rlimits --------------------------------------------------------- */

static const struct {
	int resource;
	const char *name;
	bool raised; /* runguard raises it to unlimited for a run */
} shown_limits[] = {
	{ RLIMIT_CORE, "core", false },	  { RLIMIT_AS, "as", true },
	{ RLIMIT_DATA, "data", true },	  { RLIMIT_STACK, "stack", true },
	{ RLIMIT_FSIZE, "fsize", false }, { RLIMIT_CPU, "cpu", false },
	{ RLIMIT_NPROC, "nproc", false }, { RLIMIT_NOFILE, "nofile", false },
};

static void format_rlim(rlim_t v, char *buf, size_t len)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static bool core_pattern_pipes(void)
{
	char pattern[8] = "";
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "re");

	if (!f)
		return false;
	if (!fgets(pattern, sizeof(pattern), f))
		pattern[0] = '\0';
	fclose(f);
	return pattern[0] == '|';
}

/* "core 0/0, as inf/inf, ..." into list; names of capped raised ones. */
static void list_limits(char *list, size_t len, char *capped, size_t clen)
{
	char soft[24], hard[24];
	struct rlimit r;

	for (size_t i = 0; i < sizeof(shown_limits) / sizeof(*shown_limits);
	     i++) {
		if (getrlimit(shown_limits[i].resource, &r) < 0)
			continue;
		format_rlim(r.rlim_cur, soft, sizeof(soft));
		format_rlim(r.rlim_max, hard, sizeof(hard));
		snprintf(list + strlen(list), len - strlen(list), "%s%s %s/%s",
			 *list ? ", " : "", shown_limits[i].name, soft, hard);
		if (shown_limits[i].raised && r.rlim_max != RLIM_INFINITY)
			snprintf(capped + strlen(capped),
				 clen - strlen(capped), "%s%s",
				 *capped ? ", " : "", shown_limits[i].name);
	}
}

static void check_rlimits(struct rg_check_ctx *c)
{
	char list[LIST_LEN] = "", capped[64] = "";
	bool core_zero, pipe = core_pattern_pipes();
	struct rlimit core;

	list_limits(list, sizeof(list), capped, sizeof(capped));
	core_zero = getrlimit(RLIMIT_CORE, &core) == 0 && core.rlim_max == 0;
	if (!c->cap_sys_resource && *capped)
		rg_check_add(c->report, "privileges.rlimits", RG_CHECK_WARNING,
			     "raise the hard limits of the process that starts runguard (ulimit -H; /etc/security/limits.conf) or give it CAP_SYS_RESOURCE",
			     "%s (this process's): hard %s below unlimited and no CAP_SYS_RESOURCE: runs are held at it",
			     list, capped);
	else if (!c->cap_sys_resource && core_zero && pipe)
		rg_check_add(c->report, "privileges.rlimits", RG_CHECK_WARNING,
			     "give runguard CAP_SYS_RESOURCE, or a kernel.core_pattern without a pipe",
			     "%s (this process's): hard core 0 (sudo's default on Debian) and no CAP_SYS_RESOURCE: runs get core 0/0, and the pipe in kernel.core_pattern still starts its helper when a run crashes",
			     list);
	else
		rg_check_add(c->report, "privileges.rlimits", RG_CHECK_OK, NULL,
			     "%s (this process's; sudo hands over its own: check through sudo as the judgehost runs it)%s",
			     list,
			     core_zero && !c->cap_sys_resource ?
				     "; hard core 0: runs get 0/0, and kernel.core_pattern has no pipe" :
				     "");
}

void rg_check_privileges(struct rg_check_ctx *c)
{
	check_caps(c);
	check_rlimits(c);
}

/* -- chroot prefix and run users ------------------------------------- */

static void check_chroot_prefix(struct rg_check_ctx *c)
{
	const char *p = c->o.chroot_prefix;
	char fix[PATH_MAX + 16];
	struct stat st;

	if (!p)
		return;
	snprintf(fix, sizeof(fix), "mkdir -p %s", p);
	if (stat(p, &st) < 0)
		rg_check_add(c->report, "chroot-prefix", RG_CHECK_ERROR, fix,
			     "%s: %s: -r refuses every directory", p,
			     strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rg_check_add(c->report, "chroot-prefix", RG_CHECK_ERROR, fix,
			     "%s is not a directory", p);
	else
		rg_check_add(c->report, "chroot-prefix", RG_CHECK_OK, NULL,
			     "%s exists; -r must lie below it", p);
}

static bool is_pattern(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/*
 * Accounts a pattern matches: how many, and the first few names in names
 * (NULL: only count).
 */
static unsigned int match_accounts(const char *pattern, char *names, size_t len)
{
	struct passwd *pw;
	unsigned int n = 0;

	setpwent();
	while ((pw = getpwent())) {
		if (fnmatch(pattern, pw->pw_name, 0))
			continue;
		if (n++ < 8 && names)
			snprintf(names + strlen(names), len - strlen(names),
				 "%s%s", *names ? " " : "", pw->pw_name);
	}
	endpwent();
	return n;
}

static void check_pattern(struct rg_check_ctx *c, const char *item,
			  const char *pattern)
{
	char names[LIST_LEN] = "";
	unsigned int n = match_accounts(pattern, names, sizeof(names));

	rg_check_add(c->report, item, RG_CHECK_OK, NULL,
		     "pattern %s matches %u account%s%s%s%s", pattern, n,
		     n == 1 ? "" : "s", n ? " (" : "", names,
		     n > 8 ? " ...)" :
		     n	   ? ")" :
			     "");
}

/*
 * A run user that does not exist is an error when it is the only one; next
 * to others that do (DOMjudge's RUNUSER next to RUNUSER-* of judgedaemons
 * started with -n), only the runs as it fail.
 */
static void missing_user(struct rg_check_ctx *c, const char *item,
			 const char *name, bool others_exist)
{
	char fix[LIST_LEN];

	snprintf(fix, sizeof(fix),
		 "useradd -d /nonexistent -U -M -s /bin/false %s", name);
	if (others_exist)
		rg_check_add(c->report, item, RG_CHECK_WARNING, fix,
			     "user %s does not exist: runs as it fail (a "
			     "judgedaemon started without -n uses it), runs "
			     "as the other run users work",
			     name);
	else
		rg_check_add(c->report, item, RG_CHECK_ERROR, fix,
			     "user %s does not exist, nor does any other run "
			     "user: every run fails",
			     name);
}

static void check_user(struct rg_check_ctx *c, const char *item,
		       const char *name, bool others_exist)
{
	char fix[LIST_LEN];
	struct passwd *pw = getpwnam(name);
	struct group *gr;
	uid_t uid;

	if (!pw) {
		missing_user(c, item, name, others_exist);
		return;
	}
	uid = pw->pw_uid;
	if (uid == 0) {
		rg_check_add(c->report, item, RG_CHECK_ERROR,
			     "use an unprivileged run user",
			     "%s is uid 0: runguard refuses to run as root",
			     name);
		return;
	}
	gr = getgrnam(name);
	if (!gr) {
		/* DOMjudge always passes -g RUNGROUP: only bare -u needs it */
		snprintf(fix, sizeof(fix), "groupadd %s", name);
		rg_check_add(c->report, item, RG_CHECK_WARNING, fix,
			     "uid %u, but no group %s: runs with -u %s need -g "
			     "(DOMjudge passes it)",
			     (unsigned int)uid, name, name);
		return;
	}
	rg_check_add(c->report, item, RG_CHECK_OK, NULL,
		     "uid %u, group %s (gid %u)", (unsigned int)uid, name,
		     (unsigned int)gr->gr_gid);
}

static bool entry_exists(const char *entry)
{
	return is_pattern(entry) ? match_accounts(entry, NULL, 0) > 0 :
				   getpwnam(entry) != NULL;
}

/* Accounts behind entries of the list other than the one at skip. */
static bool others_exist(const char *list, const char *skip)
{
	char copy[LIST_LEN], *tok, *save = NULL;

	snprintf(copy, sizeof(copy), "%s", list);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, skip) && entry_exists(tok))
			return true;
	return false;
}

static void check_run_users(struct rg_check_ctx *c)
{
	char copy[LIST_LEN], item[LIST_LEN], *tok, *save = NULL;

	if (!c->o.run_users)
		return;
	snprintf(copy, sizeof(copy), "%s", c->o.run_users);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		snprintf(item, sizeof(item), "user.%s", tok);
		if (is_pattern(tok))
			check_pattern(c, item, tok);
		else
			check_user(c, item, tok,
				   others_exist(c->o.run_users, tok));
	}
}

void rg_check_accounts(struct rg_check_ctx *c)
{
	check_run_users(c);
	check_chroot_prefix(c);
}
