# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared set-up of the Python binding's tests.

Environment (tests/python/meson.build): PYTHONPATH holds the package as
built (build/python/runguard), RG_INTEGRATION_DIR the integration tests
whose rgtest.py provides the run user, the chroot and the leftover checks
(cgroups below RG_CGROUP_PARENT, processes of the run user), and the
variables rgtest reads (RG_PROGRAMS, RG_CGROUP_PARENT, ...).
"""

import os
import shutil
import sys
import tempfile

sys.path.append(os.environ.get(
    'RG_INTEGRATION_DIR',
    os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                 'integration')))

import rgtest  # noqa: E402
import runguard  # noqa: E402

REQUIRE_PRIVILEGED = rgtest.REQUIRE_PRIVILEGED
CGROUP_PARENT = rgtest.CGROUP_PARENT
PYJUDGE = os.environ.get('RG_PYJUDGE', '')


class PrivilegedCase(rgtest.RGTestCase):
    """Real runs: root, cgroups, the run user; leftovers fail the test."""

    def config(self, program, *args, **kw):
        """A Config running test program `program` as the run user."""
        kw.setdefault('user', rgtest.RUN_USER)
        kw.setdefault('group', rgtest.RUN_GROUP)
        kw.setdefault('cgroup_parent', CGROUP_PARENT)
        kw.setdefault('wall_limit', 20)
        kw.setdefault('stdout', os.devnull)
        kw.setdefault('stderr', os.devnull)
        return runguard.Config([self.prog(program)] + [str(a) for a in args],
                               **kw)


class PoolDirCase(PrivilegedCase):
    """A pool directory of its own (self.pool_dir, not made yet), and the
    pool in it destroyed after the test whatever happened."""

    def setUp(self):
        super().setUp()
        self.pool_parent = tempfile.mkdtemp(prefix='rgpy-pool-')
        self.pool_dir = os.path.join(self.pool_parent, 'pool')

    def tearDown(self):
        try:
            if os.path.exists(self.pool_dir):
                runguard.pool_destroy(self.pool_dir, force=True)
            shutil.rmtree(self.pool_parent, ignore_errors=True)
        finally:
            super().tearDown()
