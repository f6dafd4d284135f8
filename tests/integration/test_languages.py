# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real language runtimes run unchanged under runguard (seccomp on)."""

import os
import shutil
import subprocess

from rgtest import RGTestCase, RUN_USER, main

CXX_SOURCE = r'''
#include <iostream>
#include <string>
#include <thread>
#include <vector>

int main()
{
    std::vector<std::thread> ts;
    long r[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&r, i] { for (long k = 0; k < 1000000; k++) r[i] += k % (i + 2); });
    for (auto &t : ts)
        t.join();
    std::string line;
    std::getline(std::cin, line);
    std::cout << "C++ threads " << ts.size() << " input " << line << std::endl;
    return 0;
}
'''

JAVA_SOURCE = r'''
public class Hello {
    public static void main(String[] args) throws Exception {
        final long[] sums = new long[4];
        Thread[] ts = new Thread[4];
        for (int i = 0; i < 4; i++) {
            final int id = i;
            ts[i] = new Thread(() -> {
                long s = 0;
                for (int k = 0; k < 1000000; k++) s += k % (id + 2);
                sums[id] = s;
            });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(System.in));
        String line = in.readLine();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 100000; i++) sb.append((char) ('a' + i % 26));
        System.out.println("Hello from Java threads " + ts.length
            + " input " + line + " len " + sb.length());
    }
}
'''

PYTHON_SOURCE = r'''
import hashlib, subprocess, sys, threading
results = []
def work(i):
    h = hashlib.sha256()
    for k in range(20000):
        h.update(b'%d' % (k * i))
    results.append(h.hexdigest())
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
sub = subprocess.run([sys.executable, '-c', 'print(6 * 7)'],
                     capture_output=True, text=True, check=True).stdout.strip()
line = sys.stdin.readline().strip()
print('python threads', len(results), 'subprocess', sub, 'input', line)
'''


class LanguageTest(RGTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The JVM of the run user creates /tmp/hsperfdata_<user>.
        cls.hsperfdata = '/tmp/hsperfdata_' + RUN_USER
        cls.hsperfdata_existed = os.path.exists(cls.hsperfdata)
        cls.langdir = os.path.join(cls.workdir, 'lang')
        os.mkdir(cls.langdir, 0o755)
        cls.cxx_binary = cls.cxx_static = cls.java_dir = None
        cls.skip_reasons = {}

        gxx = shutil.which('g++')
        if gxx:
            src = os.path.join(cls.langdir, 'hello.cc')
            with open(src, 'w') as f:
                f.write(CXX_SOURCE)
            out = os.path.join(cls.langdir, 'hello_cpp')
            r = subprocess.run([gxx, '-O2', '-pthread', '-o', out, src],
                               capture_output=True, text=True)
            if r.returncode == 0:
                cls.cxx_binary = out
            else:
                cls.skip_reasons['cxx'] = 'g++ failed: ' + r.stderr[-500:]
            out = os.path.join(cls.langdir, 'hello_cpp_static')
            r = subprocess.run([gxx, '-O2', '-static', '-pthread', '-o', out,
                                src], capture_output=True, text=True)
            if r.returncode == 0:
                cls.cxx_static = out
            else:
                cls.skip_reasons['cxx-static'] = ('static C++ link failed: '
                                                  + r.stderr[-500:])
        else:
            cls.skip_reasons['cxx'] = 'g++ not installed'
            cls.skip_reasons['cxx-static'] = 'g++ not installed'

        javac, java = shutil.which('javac'), shutil.which('java')
        if javac and java:
            cls.java = java
            jdir = os.path.join(cls.langdir, 'java')
            os.mkdir(jdir, 0o755)
            with open(os.path.join(jdir, 'Hello.java'), 'w') as f:
                f.write(JAVA_SOURCE)
            r = subprocess.run([javac, '-d', jdir,
                                os.path.join(jdir, 'Hello.java')],
                               capture_output=True, text=True)
            if r.returncode == 0:
                for name in os.listdir(jdir):
                    os.chmod(os.path.join(jdir, name), 0o644)
                cls.java_dir = jdir
            else:
                cls.skip_reasons['java'] = 'javac failed: ' + r.stderr[-500:]
        else:
            cls.skip_reasons['java'] = 'java/javac not installed'

    @classmethod
    def tearDownClass(cls):
        if not cls.hsperfdata_existed and os.path.isdir(cls.hsperfdata):
            shutil.rmtree(cls.hsperfdata, ignore_errors=True)
        super().tearDownClass()

    def need(self, what):
        if what in self.skip_reasons:
            print('\n  skipping: %s' % self.skip_reasons[what])
            self.skipTest(self.skip_reasons[what])

    def input_file(self, text):
        path = self.path('input')
        with open(path, 'w') as f:
            f.write(text)
        return open(path, 'rb')

    def test_c(self):
        res = self.rg('-t', '5:6', '-C', '5:6', '-m', '262144', '-p', '16',
                      self.prog('hello'))
        self.assertRun(res)
        self.assertEqual(res.stdout, 'hello stdout\n')

    def test_cxx(self):
        self.need('cxx')
        with self.input_file('17\n') as stdin:
            res = self.rg('-t', '10:12', '-C', '5:6', '-m', '524288',
                          '-p', '32', self.cxx_binary, stdin=stdin)
        self.assertRun(res)
        self.assertEqual(res.stdout, 'C++ threads 4 input 17\n')

    def test_cxx_static_in_chroot(self):
        self.need('cxx-static')
        dst = os.path.join(self.chroot, 'work', 'hello_cpp')
        shutil.copy(self.cxx_static, dst)
        os.chmod(dst, 0o755)
        self.addCleanup(os.unlink, dst)
        with self.input_file('18\n') as stdin:
            res = self.rg('-r', self.chroot, '-d', '/work', '-t', '10:12',
                          '-C', '5:6', '-m', '524288', '-p', '32',
                          './hello_cpp', stdin=stdin)
        self.assertRun(res)
        self.assertEqual(res.stdout, 'C++ threads 4 input 18\n')

    def test_python3(self):
        py = '/usr/bin/python3'
        if not os.access(py, os.X_OK):
            self.skipTest('/usr/bin/python3 missing')
        with self.input_file('19\n') as stdin:
            res = self.rg('-t', '20:25', '-C', '10:12', '-m', '1048576',
                          '-p', '64', py, '-c', PYTHON_SOURCE, stdin=stdin)
        self.assertRun(res)
        self.assertEqual(res.stdout,
                         'python threads 4 subprocess 42 input 19\n')

    def test_java(self):
        self.need('java')
        with self.input_file('20\n') as stdin:
            res = self.rg('-t', '30:40', '-C', '20:25', '-m', '2000000',
                          '-p', '256', self.java, '-Xmx256m', '-cp',
                          self.java_dir, 'Hello', stdin=stdin, timeout=120)
        self.assertRun(res)
        self.assertEqual(res.stdout,
                         'Hello from Java threads 4 input 20 len 100000\n')


if __name__ == '__main__':
    main()
