/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Help in the shape of DOMjudge's (usage line, summary, one line per option
 * in DOMjudge's order, notes). No caller parses it.
 */
#include "usage.h"

#include <runguard/pool.h>
#include <runguard/runguard.h>

#include "rg-build-config.h"
#include "settings.h"

static const char options_text[] =
	"  -r, --root=DIR         chroot to DIR (must lie below the CHROOT_PREFIX)\n"
	"  -u, --user=USER        run COMMAND as user name or ID USER\n"
	"  -g, --group=GROUP      run COMMAND with group name or ID GROUP\n"
	"  -d, --chdir=DIR        working directory inside the new root (with -r only)\n"
	"  -t, --walltime=TIME    wall clock time limit; kill COMMAND at the hard limit\n"
	"  -C, --cputime=TIME     CPU time limit (hard limit through RLIMIT_CPU)\n"
	"  -m, --memsize=SIZE     memory limit of all processes together, in kB\n"
	"  -f, --filesize=SIZE    maximum size of a file COMMAND writes, in kB\n"
	"  -p, --nproc=N          maximum number of processes of the user\n"
	"  -P, --cpuset=CPUS      pin COMMAND to these CPUs, e.g. \"2\" or \"0,2-3\"\n"
	"  -c, --no-core          no core dumps (the default; see --allow-core-dumps)\n"
	"  -o, --stdout=FILE      write COMMAND's stdout to FILE\n"
	"  -e, --stderr=FILE      write COMMAND's stderr to FILE\n"
	"  -s, --streamsize=SIZE  pass on at most SIZE kB of stdout and of stderr;\n"
	"                           the rest is read and dropped\n"
	"  -E, --environment      keep the environment (default: only PATH)\n"
	"  -V, --variable=VARS    set variables, VARS is KEY=VALUE[;KEY2=VALUE2...];\n"
	"                           may be given more than once\n"
	"  -M, --outmeta=FILE     write the run's meta data (times, exit code...) to FILE\n"
	"  -U, --runpipepid=PID   send SIGUSR1 to PID when the hard wall time limit\n"
	"                           is reached (for runpipe)\n"
	"  -v, --verbose          print debugging information\n"
	"  -q, --quiet            print no warnings (overrides -v)\n"
	"      --help             print this help and exit\n"
	"      --version          print version information and exit\n"
	"\n"
	"Additions of this implementation:\n"
	"      --seccomp=on|off   filter dangerous system calls (default: on)\n"
	"      --allow-core-dumps let COMMAND dump core (unless -c is given)\n"
	"      --pool-size=N      run in one of a pool of N reusable slots\n"
	"                           (0: a new cgroup and namespaces per run)\n"
	"      --pool-dir=DIR     the pool's directory (default: " RG_POOL_DIR_DEFAULT
	")\n"
	"      --pool-keeper=yes|no\n"
	"                         resident slots: a keeper process per slot forks\n"
	"                           the runs (default: yes)\n"
	"\n"
	"Pool administration (one of these, then exit; no COMMAND):\n"
	"      --pool-create      create the pool, or complete it, with --pool-size\n"
	"      --pool-show        print the pool's slots and their state\n"
	"      --json             with --pool-show or --check: as one JSON object\n"
	"      --pool-destroy[=force|wait]\n"
	"                         remove the pool; refused while a slot is held,\n"
	"                           unless force: then the runs in it are ended,\n"
	"                           or wait: for them to end (no new run starts)\n"
	"      --pool-prewarm PATH...\n"
	"                         read the files below each PATH into the page\n"
	"                           cache, so that no slot is charged for them\n"
	"\n"
	"Host check (then exit; no COMMAND):\n"
	"      --check            check the host as runguard would use it, with\n"
	"                           the pool settings and -u, -g, -P: one line per\n"
	"                           item (ok, warning, error), each failing one with\n"
	"                           the command that fixes it; exit status 0 all ok,\n"
	"                           1 warnings only, 2 errors. Spell it in full.\n";

static const char notes_text[] =
	"\n"
	"The root and user options need root privileges. With a user and no group,\n"
	"the group of the same name is used, so that COMMAND never keeps root's\n"
	"groups. COMMAND is looked up inside the new root and working directory.\n"
	"TIME is seconds as a float, or SOFT:HARD; the hard limit stops COMMAND,\n"
	"the soft one is only reported. The time written as `time-used' in the\n"
	"meta file is that of the last of -t and -C, CPU time if neither is given.\n"
	"Without the user option COMMAND runs as the real user ID of the caller.\n"
	"\n"
	"The pool settings come from the options, else the environment\n"
	"(RUNGUARD_POOL_SIZE, RUNGUARD_POOL_DIR, RUNGUARD_POOL_KEEPER), else the\n"
	"configuration file $RUNGUARD_CONFIG or " RG_CLI_CONFIG_FILE "\n"
	"(pool-size = N, pool-dir = DIR, pool-keeper = yes|no).\n"
	"On cgroup v2 kernels 5.19 to 6.11, whose memory.peak cannot be reset,\n"
	"v2-memory-peak (RUNGUARD_V2_MEMORY_PEAK) is sampled, the default (the slot\n"
	"keeps its cgroup; memory.current is sampled every 5 ms, a lower bound\n"
	"unless the limit was reached), or exact (a memory cgroup per run).\n"
	"sudo strips the environment: as DOMjudge calls runguard (sudo -n\n"
	"runguard ...), " RG_CLI_CONFIG_FILE
	" is the way to configure a pool.\n";

int rg_cli_print_help(FILE *out, const char *progname)
{
	fprintf(out, "Usage: %s [OPTION]... COMMAND...\n", progname);
	fputs("Run COMMAND with restrictions and report what it used.\n\n",
	      out);
	fputs(options_text, out);
	fputs(notes_text, out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

int rg_cli_print_version(FILE *out)
{
	fprintf(out, "runguard %s (librunguard %s)\n", RG_VERSION,
		rg_version());
	fputs("A drop-in replacement for DOMjudge's judgehost runguard;\n"
	      "it is not part of DOMjudge.\n\n",
	      out);
	/* Fixed at build time: an admin (or scripts/sample-judging) reads
	 * here what a packaged binary was built for. */
	fputs("CHROOT_PREFIX: " RG_CHROOT_PREFIX "\n"
	      "VALID_USERS: " RG_VALID_USERS "\n"
	      "cgroup parent: " RG_CGROUP_PARENT "\n\n",
	      out);
	fputs("This is free software, licensed under the GNU Lesser General Public\n"
	      "License version 2.1 or later. There is NO WARRANTY, to the extent\n"
	      "permitted by law.\n",
	      out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

int rg_cli_print_info(FILE *out, const char *progname, bool help, bool version)
{
	if (help)
		return rg_cli_print_help(out, progname);
	if (version)
		return rg_cli_print_version(out);
	return 1;
}
