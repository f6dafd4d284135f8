/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compare TESTIN TESTANS FEEDBACKDIR [ARGS...]: a DOMjudge-style output
 * validator.  Reads the team output from stdin and compares it byte for byte
 * with TESTANS.  Exits 42 (correct) or 43 (wrong answer) and writes
 * FEEDBACKDIR/judgemessage.txt.  Any other problem exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	for (;;) {
		size_t r;

		if (n == cap) {
			char *nb;

			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	char *team, *ans, path[4096];
	size_t team_len, ans_len;
	FILE *f;
	int ok;

	if (argc < 4) {
		fprintf(stderr, "usage: %s TESTIN TESTANS FEEDBACKDIR\n",
			argv[0]);
		return 1;
	}
	f = fopen(argv[2], "r");
	if (!f) {
		perror("compare: open answer");
		return 1;
	}
	ans = slurp(f, &ans_len);
	fclose(f);
	team = slurp(stdin, &team_len);
	if (!ans || !team)
		return 1;
	ok = team_len == ans_len && memcmp(team, ans, ans_len) == 0;

	snprintf(path, sizeof(path), "%s/judgemessage.txt", argv[3]);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", ok ? "correct" : "wrong answer");
		fclose(f);
	} else {
		perror("compare: judgemessage");
	}
	printf("compared %zu bytes of team output\n", team_len);
	return ok ? 42 : 43;
}
