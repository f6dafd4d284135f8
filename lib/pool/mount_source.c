/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool/mount_source.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' &&
		    s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') << 6 |
				      (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
			i += 3;
			continue;
		}
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

/* The next space-separated field of *s: its start and length. */
static bool next_field(const char **s, const char **start, size_t *len)
{
	const char *p = *s;

	while (*p == ' ')
		p++;
	*start = p;
	while (*p && *p != ' ' && *p != '\n')
		p++;
	*len = (size_t)(p - *start);
	*s = p;
	return *len > 0;
}

int rg_mount_entry_parse(const char *line, struct rg_mount_entry *e)
{
	const char *s = line, *f[5];
	size_t n[5];
	char *end;

	*e = (struct rg_mount_entry){ 0 };
	/* mount id, parent id, major:minor, root, mount point */
	for (int i = 0; i < 5; i++)
		if (!next_field(&s, &f[i], &n[i]))
			return -1;
	e->major = (unsigned int)strtoul(f[2], &end, 10);
	if (end == f[2] || *end != ':')
		return -1;
	e->minor = (unsigned int)strtoul(end + 1, &end, 10);
	if (end != f[2] + n[2] || f[3][0] != '/' || f[4][0] != '/')
		return -1;
	e->root = unescape(f[3], n[3]);
	e->point = unescape(f[4], n[4]);
	if (!e->root || !e->point) {
		rg_mount_entry_free(e);
		return -1;
	}
	return 0;
}

void rg_mount_entry_free(struct rg_mount_entry *e)
{
	free(e->root);
	free(e->point);
	e->root = e->point = NULL;
}

int rg_mount_table_read(FILE *mountinfo, struct rg_mount_table *t)
{
	char *line = NULL;
	size_t cap = 0, alloc = 0;

	*t = (struct rg_mount_table){ 0 };
	while (getline(&line, &cap, mountinfo) > 0) {
		struct rg_mount_entry e;

		if (rg_mount_entry_parse(line, &e) < 0)
			continue;
		if (t->count == alloc) {
			size_t more = alloc ? 2 * alloc : 64;
			void *p = realloc(t->entries,
					  more * sizeof(*t->entries));

			if (!p) {
				rg_mount_entry_free(&e);
				free(line);
				rg_mount_table_free(t);
				return -1;
			}
			t->entries = p;
			alloc = more;
		}
		t->entries[t->count++] = e;
	}
	free(line);
	return 0;
}

void rg_mount_table_free(struct rg_mount_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		rg_mount_entry_free(&t->entries[i]);
	free(t->entries);
	*t = (struct rg_mount_table){ 0 };
}

bool rg_path_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (n == 1 && top[0] == '/')
		return path[0] == '/';
	return strncmp(path, top, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* What follows top in path ("" or "/..."); path is below top. */
static const char *rest_after(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 0 && top[n - 1] == '/')
		n--;
	return path + n;
}

/* base + rest, without a doubled slash; false if it does not fit. */
static bool join(char *out, size_t len, const char *base, const char *rest)
{
	size_t n = strlen(base);
	int w;

	while (n > 0 && base[n - 1] == '/')
		n--;
	if (n == 0 && rest[0] == '\0')
		w = snprintf(out, len, "/");
	else
		w = snprintf(out, len, "%.*s%s", (int)n, base, rest);
	return w > 0 && (size_t)w < len;
}

/* The mount that holds path: the longest point, the last one stacked. */
static const struct rg_mount_entry *
holding_mount(const struct rg_mount_table *t, const char *path)
{
	const struct rg_mount_entry *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < t->count; i++) {
		const struct rg_mount_entry *e = &t->entries[i];
		size_t len = strlen(e->point);

		if (rg_path_below(path, e->point) &&
		    (!best || len >= best_len)) {
			best = e;
			best_len = len;
		}
	}
	return best;
}

bool rg_mount_candidates(const struct rg_mount_table *t, const char *path,
			 bool (*accept)(const char *candidate, void *data),
			 void *data)
{
	const struct rg_mount_entry *m = holding_mount(t, path);
	char fs_path[PATH_MAX], cand[PATH_MAX];

	if (!m || !join(fs_path, sizeof(fs_path), m->root,
			rest_after(path, m->point)))
		return false;
	for (size_t i = 0; i < t->count; i++) {
		const struct rg_mount_entry *e = &t->entries[i];

		if (e->major != m->major || e->minor != m->minor ||
		    !rg_path_below(fs_path, e->root))
			continue;
		if (join(cand, sizeof(cand), e->point,
			 rest_after(fs_path, e->root)) &&
		    accept(cand, data))
			return true;
	}
	return false;
}

struct source_search {
	const char *const *exclude;
	size_t nexclude;
	struct stat want;
	char *out;
	size_t len;
};

static bool excluded(const struct source_search *s, const char *path)
{
	for (size_t i = 0; i < s->nexclude; i++)
		if (s->exclude[i] && rg_path_below(path, s->exclude[i]))
			return true;
	return false;
}

/* Outside every excluded path, also once resolved, and the same dir. */
static bool accept_source(const char *candidate, void *data)
{
	struct source_search *s = data;
	char real[PATH_MAX];
	struct stat st;

	if (excluded(s, candidate) || !realpath(candidate, real) ||
	    excluded(s, real) || stat(real, &st) < 0 ||
	    st.st_dev != s->want.st_dev || st.st_ino != s->want.st_ino)
		return false;
	return (size_t)snprintf(s->out, s->len, "%s", real) < s->len;
}

bool rg_mount_source(const struct rg_mount_table *t, const char *dir,
		     const char *const exclude[], size_t nexclude, char *out,
		     size_t len)
{
	struct source_search s = { exclude, nexclude, { 0 }, out, len };
	char real[PATH_MAX];

	if (!realpath(dir, real) || stat(real, &s.want) < 0 ||
	    !S_ISDIR(s.want.st_mode))
		return false;
	return rg_mount_candidates(t, real, accept_source, &s);
}
