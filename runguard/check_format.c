/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check_format.h"

#include <string.h>

#include "json.h"

static const char *status_name(enum rg_check_status status)
{
	switch (status) {
	case RG_CHECK_ERROR:
		return "error";
	case RG_CHECK_WARNING:
		return "warning";
	default:
		return "ok";
	}
}

int rg_cli_check_exit_status(const struct rg_check_report *r)
{
	return (int)rg_check_report_status(r);
}

static void count(const struct rg_check_report *r, size_t n[3])
{
	n[0] = n[1] = n[2] = 0;
	for (size_t i = 0; i < rg_check_report_count(r); i++)
		n[rg_check_item_status(r, i)]++;
}

static int name_width(const struct rg_check_report *r)
{
	size_t w = 0;

	for (size_t i = 0; i < rg_check_report_count(r); i++)
		if (strlen(rg_check_item_name(r, i)) > w)
			w = strlen(rg_check_item_name(r, i));
	return (int)w;
}

void rg_cli_check_print_text(FILE *out, const struct rg_check_report *r)
{
	int w = name_width(r);
	size_t n[3];

	for (size_t i = 0; i < rg_check_report_count(r); i++) {
		enum rg_check_status st = rg_check_item_status(r, i);
		const char *fix = rg_check_item_fix(r, i);

		fprintf(out, "%-7s  %-*s  %s\n", status_name(st), w,
			rg_check_item_name(r, i), rg_check_item_message(r, i));
		if (st != RG_CHECK_OK && fix)
			fprintf(out, "%-7s  %-*s  fix: %s\n", "", w, "", fix);
	}
	count(r, n);
	fprintf(out, "%zu ok, %zu warning%s, %zu error%s\n", n[0], n[1],
		n[1] == 1 ? "" : "s", n[2], n[2] == 1 ? "" : "s");
}

static void json_item(FILE *out, const struct rg_check_report *r, size_t i)
{
	enum rg_check_status st = rg_check_item_status(r, i);
	const char *fix = rg_check_item_fix(r, i);

	fputs("    {\"name\": ", out);
	rg_cli_json_string(out, rg_check_item_name(r, i));
	fprintf(out, ", \"status\": \"%s\", \"message\": ", status_name(st));
	rg_cli_json_string(out, rg_check_item_message(r, i));
	fputs(", \"fix\": ", out);
	if (st != RG_CHECK_OK && fix)
		rg_cli_json_string(out, fix);
	else
		fputs("null", out);
	fputc('}', out);
}

void rg_cli_check_print_json(FILE *out, const struct rg_check_report *r)
{
	size_t total = rg_check_report_count(r), n[3];

	count(r, n);
	fprintf(out,
		"{\n  \"status\": \"%s\",\n  \"exit_status\": %d,\n"
		"  \"counts\": {\"ok\": %zu, \"warning\": %zu, \"error\": %zu},\n"
		"  \"items\": [",
		status_name(rg_check_report_status(r)),
		rg_cli_check_exit_status(r), n[0], n[1], n[2]);
	for (size_t i = 0; i < total; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_item(out, r, i);
	}
	fputs(total ? "\n  ]\n}\n" : "]\n}\n", out);
}
