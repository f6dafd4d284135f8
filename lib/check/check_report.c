/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The check report: a growing list of items and its accessors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"
#include "base/base.h"

struct rg_check_report *rg_check_report_new(void)
{
	return calloc(1, sizeof(struct rg_check_report));
}

static bool grow(struct rg_check_report *r)
{
	size_t cap = r->capacity ? r->capacity * 2 : 32;
	struct rg_check_item *items;

	if (r->count < r->capacity)
		return true;
	items = realloc(r->items, cap * sizeof(*items));
	if (!items)
		return false;
	r->items = items;
	r->capacity = cap;
	return true;
}

static int add(struct rg_check_report *r, const char *name,
	       enum rg_check_status status, char *message, const char *fix)
{
	struct rg_check_item *it;

	if (!message || !grow(r)) {
		free(message);
		return -1;
	}
	it = &r->items[r->count];
	it->name = strdup(name);
	it->status = status;
	it->message = message;
	it->fix = fix ? strdup(fix) : NULL;
	if (!it->name || (fix && !it->fix)) {
		free(it->name);
		free(it->fix);
		free(message);
		return -1;
	}
	r->count++;
	return 0;
}

void rg_check_add(struct rg_check_report *r, const char *name,
		  enum rg_check_status status, const char *fix,
		  const char *fmt, ...)
{
	char *message = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&message, fmt, ap) < 0)
		message = NULL;
	va_end(ap);
	if (add(r, name, status, message, fix) < 0)
		r->failed = true;
}

int rg_check_report_add(struct rg_check_report *r, const char *name,
			enum rg_check_status status, const char *message,
			const char *fix, struct rg_error *err)
{
	if (!r || !name || !message || status < RG_CHECK_OK ||
	    status > RG_CHECK_ERROR)
		return rg_fail(err, EINVAL, "invalid check item");
	if (add(r, name, status, strdup(message), fix) < 0)
		return rg_fail(err, ENOMEM, "adding check item `%s'", name);
	return 0;
}

size_t rg_check_report_count(const struct rg_check_report *r)
{
	return r ? r->count : 0;
}

static const struct rg_check_item *item(const struct rg_check_report *r,
					size_t i)
{
	return r && i < r->count ? &r->items[i] : NULL;
}

const char *rg_check_item_name(const struct rg_check_report *r, size_t i)
{
	return item(r, i) ? item(r, i)->name : NULL;
}

enum rg_check_status rg_check_item_status(const struct rg_check_report *r,
					  size_t i)
{
	return item(r, i) ? item(r, i)->status : RG_CHECK_OK;
}

const char *rg_check_item_message(const struct rg_check_report *r, size_t i)
{
	return item(r, i) ? item(r, i)->message : NULL;
}

const char *rg_check_item_fix(const struct rg_check_report *r, size_t i)
{
	return item(r, i) ? item(r, i)->fix : NULL;
}

enum rg_check_status rg_check_report_status(const struct rg_check_report *r)
{
	enum rg_check_status worst = RG_CHECK_OK;

	for (size_t i = 0; i < rg_check_report_count(r); i++)
		if (r->items[i].status > worst)
			worst = r->items[i].status;
	return worst;
}

void rg_check_report_free(struct rg_check_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->count; i++) {
		free(r->items[i].name);
		free(r->items[i].message);
		free(r->items[i].fix);
	}
	free(r->items);
	free(r);
}
