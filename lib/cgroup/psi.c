/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pressure stall totals of a cgroup or of the host (psi.h). */
#include "cgroup/psi.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

static const char *const cgroup_file[RG_PSI_NR] = {
	[RG_PSI_CPU] = "cpu.pressure",
	[RG_PSI_IO] = "io.pressure",
	[RG_PSI_MEMORY] = "memory.pressure",
};

static const char *const host_file[RG_PSI_NR] = {
	[RG_PSI_CPU] = "cpu",
	[RG_PSI_IO] = "io",
	[RG_PSI_MEMORY] = "memory",
};

void rg_psi_forget(struct rg_psi *psi)
{
	for (int k = 0; k < RG_PSI_NR; k++)
		psi->base_us[k] = psi->end_us[k] = -1;
}

void rg_psi_init(struct rg_psi *psi)
{
	for (int k = 0; k < RG_PSI_NR; k++)
		psi->fd[k] = -1;
	rg_psi_forget(psi);
}

void rg_psi_open(struct rg_psi *psi, int dir_fd, bool host)
{
	const char *const *names = host ? host_file : cgroup_file;

	for (int k = 0; k < RG_PSI_NR; k++)
		if (psi->fd[k] < 0)
			psi->fd[k] = openat(dir_fd, names[k],
					    O_RDONLY | O_CLOEXEC);
}

bool rg_psi_any(const struct rg_psi *psi)
{
	for (int k = 0; k < RG_PSI_NR; k++)
		if (psi->fd[k] >= 0)
			return true;
	return false;
}

int64_t rg_psi_parse_some(const char *text)
{
	const char *total;
	char *end;
	uint64_t v;

	/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=123\nfull ..." */
	if (strncmp(text, "some ", 5))
		return -1;
	total = strstr(text, " total=");
	if (!total || memchr(text, '\n', (size_t)(total - text)))
		return -1;
	total += strlen(" total=");
	if (*total < '0' || *total > '9')
		return -1;
	v = strtoull(total, &end, 10);
	if (*end != '\n' && *end != '\0')
		return -1;
	return v > INT64_MAX ? -1 : (int64_t)v;
}

/* A file that cannot be read (psi=0: EOPNOTSUPP) is unknown, -1. */
static int64_t read_some(int fd)
{
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return rg_psi_parse_some(buf);
}

void rg_psi_start(struct rg_psi *psi)
{
	for (int k = 0; k < RG_PSI_NR; k++) {
		psi->base_us[k] = read_some(psi->fd[k]);
		psi->end_us[k] = -1;
	}
}

void rg_psi_stop(struct rg_psi *psi)
{
	for (int k = 0; k < RG_PSI_NR; k++)
		if (psi->base_us[k] >= 0)
			psi->end_us[k] = read_some(psi->fd[k]);
}

void rg_psi_delta(const struct rg_psi *psi, int64_t delta_ns[RG_PSI_NR])
{
	int64_t now;

	for (int k = 0; k < RG_PSI_NR; k++) {
		now = psi->base_us[k] < 0 ? -1 :
		      psi->end_us[k] >= 0 ? psi->end_us[k] :
					    read_some(psi->fd[k]);
		delta_ns[k] = now < psi->base_us[k] ?
				      -1 :
				      (now - psi->base_us[k]) * 1000;
	}
}

void rg_psi_close(struct rg_psi *psi)
{
	for (int k = 0; k < RG_PSI_NR; k++)
		rg_close_fd(&psi->fd[k]);
}
