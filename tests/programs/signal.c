/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * signal SIG: raise SIG (a number or a name such as SEGV / SIGSEGV) with the
 * default disposition restored, so that the process dies of it.
 */
#include <signal.h>
#include <unistd.h>

#include "common.h"

static int parse_signal(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {
		{ "HUP", SIGHUP },   { "INT", SIGINT },	  { "QUIT", SIGQUIT },
		{ "ILL", SIGILL },   { "ABRT", SIGABRT }, { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "SEGV", SIGSEGV }, { "PIPE", SIGPIPE },
		{ "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 }, { "BUS", SIGBUS },	  { "XCPU", SIGXCPU },
		{ "XFSZ", SIGXFSZ }, { "SYS", SIGSYS },	  { "TRAP", SIGTRAP },
	};
	size_t i;

	if (s[0] >= '0' && s[0] <= '9')
		return (int)parse_long(s);
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].sig;
	fprintf(stderr, "unknown signal: %s\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;

	if (argc != 2)
		die_usage(argv[0], "SIGNAL");
	sig = parse_signal(argv[1]);

	/* Make sure the signal is deliverable and fatal. */
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);

	printf("raising signal %d\n", sig);
	fflush(stdout);
	raise(sig);
	/* SIGSTOP/SIGTSTP and friends come back here. */
	pause();
	return 1;
}
