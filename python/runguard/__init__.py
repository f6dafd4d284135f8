# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard: run untrusted programs for an online judge in a sandbox
(librunguard: cgroups, namespaces, chroot, rlimits, seccomp) and report
exactly what they used.

    import runguard
    cfg = runguard.Config(['./a.out'], user='domjudge-run',
                          wall_limit=(2, 2.5), memory_limit=256 << 20,
                          stdin='1.in', stdout='1.out')
    res = runguard.run(cfg)
    print(res.exit_code, res.cpu_time, res.time_result())

Many runs: open a Pool once and call Pool.run() from many threads (the
GIL is released while a run waits).  See docs/python.md.
"""

from ._types import (Cancelled, CleanupError, ConfigError, Error, Limit,
                     LogCallback, LogLevel, Outcome, RunError, SetupError,
                     SlotState, log_to_logger)
from ._runguard import (POOL_DIR_DEFAULT, POOL_SIZE_MAX, Pool, PoolInfo,
                        PrewarmStats, Result, SlotInfo, cancel_all,
                        pool_create, pool_destroy, pool_prewarm, pool_show,
                        pool_slot_keeper, run, set_log, version)
from .config import Config

__all__ = [
    'Cancelled', 'CleanupError', 'Config', 'ConfigError', 'Error', 'Limit',
    'LogCallback', 'LogLevel', 'Outcome', 'POOL_DIR_DEFAULT', 'POOL_SIZE_MAX', 'Pool', 'PoolInfo',
    'PrewarmStats', 'Result', 'RunError', 'SetupError', 'SlotInfo',
    'SlotState', 'cancel_all', 'pool_create', 'pool_destroy',
    'pool_prewarm', 'pool_show', 'pool_slot_keeper', 'run', 'set_log',
    'log_to_logger', 'version',
]
