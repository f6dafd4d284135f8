#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run test modules of the Python binding; meson-friendly exit codes.

usage: run.py MODULE|MODULE.Class|MODULE.Class.test ...

Exit status: 0 passed, 1 failures, 77 every test was skipped (not root,
no cgroups...), which is a failure with RUNGUARD_REQUIRE_PRIVILEGED=1.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pyrgtest  # noqa: E402


def main(argv):
    suite = unittest.defaultTestLoader.loadTestsFromNames(argv[1:])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(
        suite)
    if not result.wasSuccessful():
        return 1
    # a class that cannot run is one skip and no test run
    if result.skipped and len(result.skipped) >= result.testsRun:
        if pyrgtest.REQUIRE_PRIVILEGED:
            print('every test was skipped; RUNGUARD_REQUIRE_PRIVILEGED=1',
                  file=sys.stderr)
            return 1
        return 77
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
