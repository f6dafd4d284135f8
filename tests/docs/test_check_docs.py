#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check_docs.py finds each kind of stale reference in a small tree."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_docs  # noqa: E402

TREE = {
    'lib/pool/lease.c': 'int rg_lease_take(void);\n',
    'include/runguard/runguard.h': '#define RG_UNLIMITED 1\n',
    'docs/pool.md': '# The pool\n\n## Files\n',
}


def run(readme, files=TREE):
    with tempfile.TemporaryDirectory() as d:
        for path, text in dict(files, **{'README.md': readme}).items():
            full = os.path.join(d, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w') as f:
                f.write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check_docs.main(['check_docs.py', d])
        return rc, out.getvalue()


class CheckDocsTest(unittest.TestCase):
    def test_existing_names_pass(self):
        rc, out = run('See `lib/pool/lease.c`, `rg_lease_take()`, '
                      '`RG_UNLIMITED` and [files](docs/pool.md#files).\n')
        self.assertEqual(rc, 0, out)

    def test_missing_path_is_reported_with_its_line(self):
        rc, out = run('# x\n\nSee `lib/pool/gone.c`.\n')
        self.assertEqual(rc, 1)
        self.assertIn('README.md:3', out)
        self.assertIn('lib/pool/gone.c', out)

    def test_missing_identifier_is_reported(self):
        rc, out = run('Call `rg_lease_give()`.\n')
        self.assertEqual(rc, 1)
        self.assertIn('rg_lease_give', out)

    def test_missing_function_is_reported(self):
        rc, out = run('`take_slot()` picks it.\n')
        self.assertEqual(rc, 1)
        self.assertIn('take_slot()', out)

    def test_a_function_or_system_call_in_the_source_passes(self):
        files = dict(TREE, **{'lib/run/x.c': 'static int take_slot(void);\n'
                              'syscall(SYS_close_range, 3, ~0U, 0);\n'})
        rc, out = run('`take_slot()`, `close_range(3, ~0, 0)`\n', files)
        self.assertEqual(rc, 0, out)

    def test_missing_anchor_is_reported(self):
        rc, out = run('[layout](docs/pool.md#layout)\n')
        self.assertEqual(rc, 1)
        self.assertIn('layout', out)

    def test_host_paths_and_placeholders_are_not_checked(self):
        rc, out = run('`/proc/self/stat`, `slot-K.lock`, `build/x.c`, '
                      '`<dir>/pool.state`\n')
        self.assertEqual(rc, 0, out)

    def test_the_real_docs_pass(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            '..', '..')
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check_docs.main(['check_docs.py', root])
        self.assertEqual(rc, 0, out.getvalue())


if __name__ == '__main__':
    unittest.main(verbosity=2)
