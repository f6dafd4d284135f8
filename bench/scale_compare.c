/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scale_compare TESTIN TESTANS FEEDBACKDIR: the output validator of
 * bench/scale. Like DOMjudge's default validator it compares the team
 * output (stdin) with TESTANS token by token, so whitespace differences do
 * not matter. Exits 42 (correct) or 43 (wrong answer, with
 * FEEDBACKDIR/judgemessage.txt); anything else is a judge error (1).
 * Static, so that it runs the same on the host and in the lab.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define TOKEN_MAX 256

/* Next whitespace-separated token of f; 0 at EOF, -1 if it is too long. */
static int next_token(FILE *f, char *buf)
{
	int c, n = 0;

	do
		c = getc(f);
	while (c != EOF && isspace(c));
	if (c == EOF)
		return 0;
	while (c != EOF && !isspace(c)) {
		if (n == TOKEN_MAX - 1)
			return -1;
		buf[n++] = (char)c;
		c = getc(f);
	}
	buf[n] = '\0';
	return 1;
}

static int wrong_answer(const char *feedback, long token, const char *why)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/judgemessage.txt", feedback);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "token %ld: %s\n", token, why);
		fclose(f);
	}
	return 43;
}

static int compare(FILE *team, FILE *ans, const char *feedback)
{
	char want[TOKEN_MAX], got[TOKEN_MAX];
	long token;

	for (token = 1;; token++) {
		int a = next_token(ans, want);
		int t = next_token(team, got);

		if (a < 0)
			return 1;
		if (t < 0)
			return wrong_answer(feedback, token, "token too long");
		if (!a && !t)
			return 42;
		if (!a)
			return wrong_answer(feedback, token, "extra output");
		if (!t)
			return wrong_answer(feedback, token,
					    "output ends early");
		if (strcmp(want, got))
			return wrong_answer(feedback, token, "token differs");
	}
}

int main(int argc, char **argv)
{
	FILE *ans;
	int ret;

	if (argc < 4) {
		fprintf(stderr, "usage: %s TESTIN TESTANS FEEDBACKDIR\n",
			argv[0]);
		return 1;
	}
	ans = fopen(argv[2], "r");
	if (!ans) {
		perror("scale_compare: open answer");
		return 1;
	}
	ret = compare(stdin, ans, argv[3]);
	fclose(ans);
	return ret;
}
