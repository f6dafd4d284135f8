#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The library's folders are modules; this checks it from the sources.

Rules (docs/design.md, "Folders"):
 1. A library header is included by its folder path ("pool/lease.h"),
    from every part of the project; inside lib/ a quoted include names
    such a path or a header the build generates.
 2. A folder of lib/ includes another folder's headers only through that
    folder's public header, named after it ("pool/pool.h"). So do the CLI,
    the keeper, the binding and the benchmarks. Tests may include any
    header: they test the insides.
 3. No cycle between folders: they form layers (printed).
 4. No cycle between files of lib/: a file (x.c with x.h) that includes
    another's header depends on it, and nothing depends back.

Usage: check_includes.py SOURCE_ROOT. Exit 0 when every rule holds, 1 with
one line per violation.
"""
import os
import re
import sys

LIB_FOLDERS = ('base', 'cgroup', 'ns', 'run', 'pool', 'check')
# made by the build, not in the source tree
GENERATED = {'rg-build-config.h', 'syscall_filter_bpf.h'}
OTHER_PARTS = ('runguard', 'keeper', 'python', 'bench', 'examples')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root, top):
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = [x for x in dirs if not x.startswith(('build', '.'))]
        for f in sorted(files):
            if f.endswith(('.c', '.h')):
                yield os.path.relpath(os.path.join(d, f), root)


def includes(root, path):
    with open(os.path.join(root, path), errors='replace') as f:
        return INCLUDE.findall(f.read())


def cycles(graph):
    """Every set of nodes that reach each other (Tarjan's strongly
    connected components of more than one node), sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def layers(graph):
    """Folders in dependency order: each after everything it uses."""
    depth = {}

    def d(n):
        if n not in depth:
            depth[n] = 1 + max((d(m) for m in graph[n]), default=-1)
        return depth[n]
    for n in graph:
        d(n)
    out = {}
    for n, k in depth.items():
        out.setdefault(k, []).append(n)
    return [sorted(out[k]) for k in sorted(out)]


def check(root):
    problems = []
    lib = os.path.join(root, 'lib')
    lib_headers = {}  # basename -> folder path
    for path in sources(root, 'lib'):
        if path.endswith('.h'):
            rel = os.path.relpath(path, 'lib')
            lib_headers.setdefault(os.path.basename(rel), []).append(rel)

    def folder_of(path):
        parts = path.split('/')
        if parts[0] == 'lib' and len(parts) > 2:
            return parts[1]
        return None

    folders = {f: set() for f in LIB_FOLDERS
               if os.path.isdir(os.path.join(lib, f))}
    units = {}
    for top in ('lib', 'tests') + OTHER_PARTS:
        for path in sources(root, top):
            own = folder_of(path)
            if path.startswith('lib/'):
                if len(path.split('/')) == 2:
                    problems.append('%s: a file of lib/ outside any folder'
                                    % path)
                elif own not in LIB_FOLDERS:
                    problems.append('%s: folder lib/%s is not in '
                                    'LIB_FOLDERS' % (path, own))
            here = os.path.dirname(path)
            for inc in includes(root, path):
                is_lib = os.path.isfile(os.path.join(lib, inc))
                base = os.path.basename(inc)
                if not is_lib:
                    if base in lib_headers and not os.path.isfile(
                            os.path.join(root, here, inc)):
                        problems.append('%s: "%s" must be included as "%s"'
                                        % (path, inc,
                                           lib_headers[base][0]))
                    elif own and inc not in GENERATED:
                        problems.append('%s: "%s" is not a library header'
                                        % (path, inc))
                    continue
                target = inc.split('/')[0]
                if own in folders and target != own:
                    folders[own].add(target)
                if (not path.startswith('tests/') and target != own
                        and inc != '%s/%s.h' % (target, target)):
                    problems.append('%s: includes "%s"; from outside lib/%s '
                                    'only "%s/%s.h"' % (path, inc, target,
                                                        target, target))
                if own:
                    unit = os.path.splitext(os.path.relpath(path, 'lib'))[0]
                    dep = os.path.splitext(inc)[0]
                    units.setdefault(unit, set())
                    if dep != unit:
                        units[unit].add(dep)
    for comp in cycles(folders):
        problems.append('folders include each other: ' + ', '.join(comp))
    for comp in cycles(units):
        problems.append('files include each other: ' + ', '.join(comp))
    return problems, (None if cycles(folders) else layers(folders))


def main(argv):
    if len(argv) != 2:
        print('usage: check_includes.py SOURCE_ROOT', file=sys.stderr)
        return 2
    problems, order = check(argv[1])
    if order:
        print('lib/ layers, lowest first: ' +
              ' < '.join(','.join(layer) for layer in order))
    for p in problems:
        print(p)
    print('%d problem(s)' % len(problems))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
