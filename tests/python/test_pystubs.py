# SPDX-License-Identifier: LGPL-2.1-or-later
"""The typed stubs match the module: runguard/_runguard.pyi against the C
extension (names, parameters), with mypy's stubtest when mypy is
installed (Debian: python3-mypy), and the package and the example judge
type-check with mypy --strict."""

import ast
import importlib.util
import inspect
import os
import subprocess
import sys
import unittest

import pyrgtest
import runguard
from runguard import _runguard

STUB = os.path.join(os.path.dirname(runguard.__file__), '_runguard.pyi')
HAVE_MYPY = importlib.util.find_spec('mypy') is not None


def stub_tree():
    with open(STUB) as f:
        return ast.parse(f.read())


def params(args):
    """[(name, kind)] of an ast.arguments, as inspect names the kinds."""
    P = inspect.Parameter
    out = [(a.arg, P.POSITIONAL_ONLY) for a in args.posonlyargs]
    out += [(a.arg, P.POSITIONAL_OR_KEYWORD) for a in args.args]
    out += [(a.arg, P.KEYWORD_ONLY) for a in args.kwonlyargs]
    return out


def runtime_params(obj):
    return [(p.name, p.kind) for p in inspect.signature(obj).parameters.values()]


class StubTest(unittest.TestCase):

    def test_module_names(self):
        stub = set()
        for node in stub_tree().body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                stub.add(node.name)
            elif isinstance(node, ast.AnnAssign):
                stub.add(node.target.id)
        runtime = {n for n in dir(_runguard) if not n.startswith('_')}
        self.assertEqual(stub, runtime)
        self.assertTrue(set(runguard.__all__) <= set(dir(runguard)))

    def test_function_signatures(self):
        for node in stub_tree().body:
            if isinstance(node, ast.FunctionDef):
                with self.subTest(node.name):
                    self.assertEqual(params(node.args),
                                     runtime_params(getattr(_runguard,
                                                            node.name)))

    def test_class_members(self):
        for node in stub_tree().body:
            if not isinstance(node, ast.ClassDef):
                continue
            cls = getattr(_runguard, node.name)
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                with self.subTest('%s.%s' % (node.name, item.name)):
                    self.assertTrue(hasattr(cls, item.name))
                    member = getattr(cls, item.name)
                    if item.name == '__init__':
                        stub = params(item.args)[1:]
                        self.assertEqual(stub, runtime_params(cls))
                    elif callable(member):
                        stub = params(item.args)
                        rt = runtime_params(member)
                        self.assertEqual(stub[1:], rt[1:])
            public = {n for n in vars(cls) if not n.startswith('_')}
            stubbed = {i.name for i in node.body
                       if isinstance(i, ast.FunctionDef)}
            if node.name in ('Result', 'Pool'):
                self.assertEqual(public - stubbed, set(), node.name)

    @unittest.skipUnless(HAVE_MYPY, 'mypy is not installed (Debian: '
                         'python3-mypy)')
    def test_stubtest(self):
        proc = subprocess.run([sys.executable, '-m', 'mypy.stubtest',
                               'runguard._runguard'],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    @unittest.skipUnless(HAVE_MYPY, 'mypy is not installed (Debian: '
                         'python3-mypy)')
    def test_mypy_strict(self):
        package = os.path.dirname(os.path.dirname(runguard.__file__))
        env = dict(os.environ, MYPYPATH=package)
        targets = [['-p', 'runguard']]
        if pyrgtest.PYJUDGE:
            targets.append([pyrgtest.PYJUDGE])
        for target in targets:
            proc = subprocess.run([sys.executable, '-m', 'mypy', '--strict',
                                   '--no-incremental', '--cache-dir',
                                   os.devnull] + target, env=env,
                                  capture_output=True, text=True,
                                  timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)


if __name__ == '__main__':
    unittest.main()
