#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check_includes.py finds each kind of violation in a small tree."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_includes  # noqa: E402


class Tree:
    def __init__(self, files):
        self.dir = tempfile.TemporaryDirectory()
        for path, text in files.items():
            full = os.path.join(self.dir.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w') as f:
                f.write(text)

    def problems(self):
        return check_includes.check(self.dir.name)[0]


CLEAN = {
    'lib/base/base.h': '#include "base/error.h"\n',
    'lib/base/error.h': '',
    'lib/base/error.c': '#include "base/error.h"\n',
    'lib/run/run.h': '#include "base/base.h"\n#include "run/slot.h"\n',
    'lib/run/slot.h': '',
    'lib/run/slot.c': '#include "run/slot.h"\n#include "base/base.h"\n',
    'lib/run/run.c': '#include "run/run.h"\n#include "rg-build-config.h"\n',
    'lib/pool/pool.h': '#include "run/run.h"\n',
    'runguard/main.c': '#include "options.h"\n#include "base/base.h"\n',
    'runguard/options.h': '',
    'tests/unit/test_slot.c': '#include "run/slot.h"\n',
}


class CheckIncludesTest(unittest.TestCase):
    def test_clean_tree_passes_and_layers_are_printed(self):
        t = Tree(CLEAN)
        problems, order = check_includes.check(t.dir.name)
        self.assertEqual(problems, [])
        self.assertEqual(order[:3], [['base'], ['run'], ['pool']])

    def test_bare_library_header_is_refused(self):
        t = Tree(dict(CLEAN, **{'lib/run/run.c': '#include "error.h"\n'}))
        self.assertTrue(any('"error.h" must be included as "base/error.h"'
                            in p for p in t.problems()), t.problems())

    def test_bare_name_in_the_cli_is_refused(self):
        t = Tree(dict(CLEAN, **{'runguard/main.c': '#include "slot.h"\n'}))
        self.assertTrue(any('runguard/main.c' in p and 'run/slot.h' in p
                            for p in t.problems()), t.problems())

    def test_another_folders_inner_header_is_refused(self):
        t = Tree(dict(CLEAN, **{'lib/pool/pool.c': '#include "run/slot.h"\n'}))
        self.assertTrue(any('only "run/run.h"' in p for p in t.problems()),
                        t.problems())

    def test_tests_may_include_inner_headers(self):
        t = Tree(dict(CLEAN, **{'tests/unit/t.c': '#include "base/error.h"\n'}))
        self.assertEqual(t.problems(), [])

    def test_folder_cycle_is_found(self):
        t = Tree(dict(CLEAN, **{'lib/run/slot.c': '#include "pool/pool.h"\n'}))
        self.assertIn('folders include each other: pool, run', t.problems())

    def test_file_cycle_is_found(self):
        t = Tree(dict(CLEAN, **{'lib/run/slot.c': '#include "run/run.h"\n'}))
        self.assertIn('files include each other: run/run, run/slot',
                      t.problems())

    def test_file_outside_any_folder_is_refused(self):
        t = Tree(dict(CLEAN, **{'lib/loose.c': ''}))
        self.assertTrue(any('outside any folder' in p for p in t.problems()))

    def test_unknown_quoted_include_in_lib_is_refused(self):
        t = Tree(dict(CLEAN, **{'lib/run/run.c': '#include "nowhere.h"\n'}))
        self.assertTrue(any('"nowhere.h" is not a library header' in p
                            for p in t.problems()), t.problems())

    def test_the_real_tree_passes(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            '..', '..')
        self.assertEqual(check_includes.check(root)[0], [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
