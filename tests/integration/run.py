#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run runguard integration test modules; meson-friendly exit codes.

usage: run.py [MODULE|MODULE.Class|MODULE.Class.test ...]   (default: all)

Exit status: 0 all passed, 1 failures, 77 nothing could run (skipped: not
root, no cgroups, ...).  With RUNGUARD_REQUIRE_PRIVILEGED=1 a skip of the
whole suite is a failure (exit 1) instead.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import rgtest  # noqa: E402

ALL_MODULES = ['test_cli', 'test_meta_limits', 'test_streams',
               'test_privileges', 'test_cleanup', 'test_domjudge',
               'test_languages']


def main(argv):
    names = argv[1:] or ALL_MODULES
    reason = rgtest.unmet_precondition()
    if reason:
        print('runguard integration tests cannot run: %s' % reason,
              file=sys.stderr)
        if rgtest.REQUIRE_PRIVILEGED:
            print('RUNGUARD_REQUIRE_PRIVILEGED=1: failing instead of skipping',
                  file=sys.stderr)
            return 1
        print('SKIP', file=sys.stderr)
        return 77

    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                     buffer=False).run(suite)
    return rgtest.exit_status(result)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
