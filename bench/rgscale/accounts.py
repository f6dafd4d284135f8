# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run users: one per worker, as judgedaemon -n W uses RUNUSER-W.

Not rgtest.ensure_account (tests/integration): the lab's guest has neither
useradd nor that package, so without the tools the files are written
directly.
"""

import grp
import pwd
import shutil
import subprocess


def _exists(lookup, name):
    try:
        lookup(name)
        return True
    except KeyError:
        return False


def _append_line(path, line):
    with open(path, 'a') as f:
        f.write(line + '\n')


def _free_id(used, start=2100):
    i = start
    while i in used:
        i += 1
    return i


def ensure_group(name):
    if _exists(grp.getgrnam, name):
        return
    if shutil.which('groupadd'):
        subprocess.run(['groupadd', name], check=True)
    else:   # the lab's guest: busybox only
        gid = _free_id({g.gr_gid for g in grp.getgrall()})
        _append_line('/etc/group', '%s:x:%d:' % (name, gid))


def ensure_user(name, group):
    if _exists(pwd.getpwnam, name):
        return
    if shutil.which('useradd'):
        subprocess.run(['useradd', '-d', '/nonexistent', '-g', group, '-M',
                        '-s', '/bin/false', name], check=True)
    else:   # the lab's guest: busybox only
        uid = _free_id({u.pw_uid for u in pwd.getpwall()})
        gid = grp.getgrnam(group).gr_gid
        _append_line('/etc/passwd', '%s:x:%d:%d::/nonexistent:/bin/false'
                     % (name, uid, gid))


def ensure_run_users(runuser, rungroup, workers):
    """RUNGROUP and RUNUSER-0 .. RUNUSER-(workers-1)."""
    ensure_group(rungroup)
    for w in range(workers):
        ensure_user('%s-%d' % (runuser, w), rungroup)
