/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every other folder of the library takes from base/: the error idiom
 * (error.h), small helpers (util.h), the configuration behind struct
 * rg_config (config.h) and its log sink (log_sink.h), results and the
 * growable structs' rules (result.h, abi.h), and work that outlives a call
 * (detach.h) and the fd table grown before it is shared (fd_table.h).
 * Other folders include this header, never base's others.
 */
#ifndef RG_BASE_H
#define RG_BASE_H

#include "base/abi.h"
#include "base/config.h"
#include "base/detach.h"
#include "base/error.h"
#include "base/fd_table.h"
#include "base/log_sink.h"
#include "base/result.h"
#include "base/util.h"

#endif
