/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pressure stall information (PSI, kernel 4.20+): the kernel's totals, in
 * microseconds, of the time during which at least one task ("some") was
 * runnable but waited for a CPU, waited for I/O, or stalled on memory
 * (reclaim, refaults, compaction, swap-in). A cgroup's totals count only
 * its own tasks (cgroup v2, or the unified hierarchy of a hybrid v1
 * host); /proc/pressure counts the host's. A run's waits are the growth
 * of its cgroup's totals over its timed window (docs/meta-file.md).
 */
#ifndef RG_PSI_H
#define RG_PSI_H

#include <stdbool.h>
#include <stdint.h>

enum rg_psi_kind { RG_PSI_CPU, RG_PSI_IO, RG_PSI_MEMORY, RG_PSI_NR };

/* The pressure files of one cgroup or of the host, open; -1 if absent. */
struct rg_psi {
	int fd[RG_PSI_NR];
	int64_t base_us[RG_PSI_NR]; /* at rg_psi_start(); -1 unknown */
	int64_t end_us[RG_PSI_NR];  /* at rg_psi_stop(); -1 not yet */
};

void rg_psi_init(struct rg_psi *psi);

/*
 * Open dir_fd's cpu.pressure, io.pressure and memory.pressure (host:
 * /proc/pressure's cpu, io and memory). Missing ones stay -1: a kernel
 * without PSI, or booted with psi=0, has none. Never an error.
 */
void rg_psi_open(struct rg_psi *psi, int dir_fd, bool host);

/* Whether any file is open. */
bool rg_psi_any(const struct rg_psi *psi);

/* The "some" totals now, as the base of rg_psi_delta(). */
void rg_psi_start(struct rg_psi *psi);

/* The totals as the run ends, for rg_psi_delta() (else: when asked). */
void rg_psi_stop(struct rg_psi *psi);

/*
 * Each total's growth from rg_psi_start() to rg_psi_stop() (or now), in
 * ns; -1 where unknown.
 */
void rg_psi_delta(const struct rg_psi *psi, int64_t delta_ns[RG_PSI_NR]);

/* No run's totals any more (the fds stay open). */
void rg_psi_forget(struct rg_psi *psi);

void rg_psi_close(struct rg_psi *psi);

/* The "some" line's total= of a pressure file's text; -1 if malformed. */
int64_t rg_psi_parse_some(const char *text);

#endif
