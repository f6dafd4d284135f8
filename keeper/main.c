/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runguard-keeper: a pool slot's resident process (lib/pool/keeper.h). */
#include "keeper_server.h"

int main(int argc, char **argv)
{
	return rg_keeper_main(argc, argv);
}
