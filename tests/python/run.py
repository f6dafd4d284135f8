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
    return pyrgtest.rgtest.exit_status(result)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
