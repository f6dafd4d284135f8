/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "run/env.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"

extern char **environ;

struct env_list {
	char **items;
	size_t len, cap;
};

static size_t name_length(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

static void env_remove(struct env_list *list, const char *entry)
{
	size_t n = name_length(entry);

	for (size_t i = 0; i < list->len;) {
		if (name_length(list->items[i]) == n &&
		    !strncmp(list->items[i], entry, n)) {
			free(list->items[i]);
			list->items[i] = list->items[--list->len];
		} else {
			i++;
		}
	}
}

static int env_append(struct env_list *list, const char *entry,
		      struct rg_error *err)
{
	if (list->len + 2 > list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 16;
		char **grown = realloc(list->items, cap * sizeof(*grown));

		if (!grown)
			return rg_fail(err, errno, "building the environment");
		list->items = grown;
		list->cap = cap;
	}
	list->items[list->len] = strdup(entry);
	if (!list->items[list->len])
		return rg_fail(err, errno, "building the environment");
	list->len++;
	list->items[list->len] = NULL;
	return 0;
}

static int env_apply(struct env_list *list, const char *change,
		     struct rg_error *err)
{
	env_remove(list, change);
	if (!strchr(change, '='))
		return 0;
	return env_append(list, change, err);
}

static int env_start(const struct rg_config *cfg, struct env_list *list,
		     struct rg_error *err)
{
	if (cfg->keep_environment) {
		for (char **e = environ; e && *e; e++)
			if (env_apply(list, *e, err) < 0)
				return -1;
		return 0;
	}
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			return env_append(list, *e, err);
	return 0;
}

/*
 * For _cleanup_: the list and its strings, unless handed over (items
 * NULL). items[len] is always there: env_append keeps room for it.
 */
static void env_list_free(struct env_list *list)
{
	if (!list->items)
		return;
	list->items[list->len] = NULL;
	rg_env_free(list->items);
}

int rg_env_build(const struct rg_config *cfg, char ***out, struct rg_error *err)
{
	_cleanup_(env_list_free) struct env_list list = { 0 };

	list.items = calloc(16, sizeof(*list.items));
	if (!list.items)
		return rg_fail(err, errno, "building the environment");
	list.cap = 16;
	if (env_start(cfg, &list, err) < 0)
		return -1;
	for (size_t i = 0; i < cfg->env_changes_len; i++)
		if (env_apply(&list, cfg->env_changes[i], err) < 0)
			return -1;
	list.items[list.len] = NULL;
	*out = list.items;
	list.items = NULL;
	return 0;
}

void rg_env_free(char **env)
{
	if (!env)
		return;
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
}
