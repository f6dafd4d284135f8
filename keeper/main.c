/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runguard-keeper: a pool slot's resident process (lib/pool/keeper.h). */
#include "pool/pool.h"

int main(int argc, char **argv)
{
	return rg_keeper_main(argc, argv);
}

/*
 * Under AddressSanitizer (the sanitizer test build) a freed block waits in
 * a quarantine of up to 256 MiB before reuse: a keeper that lives for
 * thousands of runs would grow in its slot's memory cgroup with each, and
 * the slot would be recycled for it. Read only by the sanitizer runtime.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=0";
}
