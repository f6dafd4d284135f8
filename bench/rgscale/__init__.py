# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/scale: a contest judgehost under load, measured over time.

The code behind the bench/scale launcher, one topic a module: options,
accounts, problem, judging, worker, sampler, aggregate, setup, report and
main. It needs only the standard library and rgbench.stats, so the kernel
lab's minimal guest can run it (bench/scale-lab gives the guest both
packages).
"""

import os

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_ROOT = os.path.dirname(BENCH_DIR)


class SetupError(Exception):
    """The benchmark cannot start (exit status 2), with a message."""
