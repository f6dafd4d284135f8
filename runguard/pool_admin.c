/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pool_admin.h"

#include <inttypes.h>

#include <runguard/pool.h>

#include "base/base.h"
#include "pool_show.h"
#include "rg-build-config.h"

static int create(const struct rg_cli_settings *s, struct rg_error *err)
{
	struct rg_pool_options o = {
		.struct_size = sizeof(o),
		.dir = s->pool_dir,
		.size = s->pool_size,
		.cgroup_parent = RG_CGROUP_PARENT,
		/* keepers attach once per slot, not per run (docs/pool.md) */
		.favordynmods = s->favordynmods && !s->keeper,
		.keepers = s->keeper,
	};

	if (s->pool_size == 0)
		return rg_fail(err, 0,
			       "no pool size: give --pool-size, "
			       "RUNGUARD_POOL_SIZE or pool-size in the "
			       "configuration file");
	return rg_pool_create(&o, err);
}

static int prewarm(const struct rg_cli_options *o, FILE *out,
		   struct rg_error *err)
{
	struct rg_prewarm_stats stats = RG_PREWARM_STATS_INIT;

	if (o->command_argc == 0)
		return rg_fail(err, 0,
			       "--pool-prewarm needs at least one path");
	if (rg_pool_prewarm((const char *const *)o->command,
			    (size_t)o->command_argc, &stats, err) < 0)
		return -1;
	fprintf(out, "prewarmed %" PRIu64 " files, %" PRIu64 " bytes\n",
		stats.files, stats.bytes);
	return 0;
}

int rg_cli_pool_admin(const struct rg_cli_options *o,
		      const struct rg_cli_settings *s, const char *progname,
		      FILE *out, FILE *errors)
{
	struct rg_error err = { 0 };
	char text[sizeof(err.message) + 256];
	int rc;

	switch (o->pool_command) {
	case RG_CLI_POOL_CREATE:
		rc = create(s, &err);
		break;
	case RG_CLI_POOL_SHOW:
		rc = rg_cli_pool_show(s->pool_dir, o->json, out, &err);
		break;
	case RG_CLI_POOL_DESTROY:
	case RG_CLI_POOL_DESTROY_FORCE:
		rc = rg_pool_destroy(s->pool_dir,
				     o->pool_command ==
					     RG_CLI_POOL_DESTROY_FORCE,
				     &err);
		break;
	case RG_CLI_POOL_DESTROY_WAIT:
		/* no limit of ours: the service manager's stop timeout is */
		rc = rg_pool_destroy_when_idle(s->pool_dir, -1, &err);
		break;
	case RG_CLI_POOL_PREWARM:
		rc = prewarm(o, out, &err);
		break;
	default:
		rc = 0;
	}
	if (rc == 0)
		return 0;
	fprintf(errors, "%s: %s\n", progname,
		rg_error_format(&err, text, sizeof(text)));
	return 1;
}
