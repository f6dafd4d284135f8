/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keeper's side of keeper.h: the body of the runguard-keeper
 * executable (keeper/main.c). It serves its slot until it is killed.
 */
#ifndef RG_KEEPER_SERVER_H
#define RG_KEEPER_SERVER_H

/*
 * argv: runguard-keeper POOL-DIR SLOT (what ps shows; SLOT names the
 * slot, the pool is the directory on fd 4).
 */
int rg_keeper_main(int argc, char **argv);

#endif
