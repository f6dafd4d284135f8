# SPDX-License-Identifier: LGPL-2.1-or-later
"""One worker: a judgedaemon judging submission after submission."""

import os
import shutil
import threading
import time

from .judging import read_meta, run_verdict, tail
from .problem import submission_source

# A record of Bench.submissions, in this order (the JSON names its columns).
SUB_COLUMNS = ('t_end', 'worker', 'index', 'variant', 'duration_s', 'ok',
               'verdict')
# runguard's warning when a slot has no keeper and the run goes on pooled
# (lib/pool/lease_keeper.c)
NO_KEEPER = ': no keeper ('


def _make_dirs(top, *subdirs):
    """top/sub for each (sub, mode), each with its mode whatever the umask:
    the run user writes some of them."""
    for sub, mode in subdirs:
        path = os.path.join(top, sub)
        os.makedirs(path)
        os.chmod(path, mode)


class Worker(threading.Thread):
    def __init__(self, bench, index, variants, cases):
        super().__init__(name='worker-%d' % index, daemon=True)
        self.b = bench
        self.w = index
        self.user = '%s-%d' % (bench.runuser, index)
        self.variants = variants
        self.cases = cases
        self.judging = os.path.join(bench.base, 'w%d' % index)
        self.error = None

    def run(self):
        try:
            while not self.b.stop.is_set() and \
                    time.monotonic() < self.b.deadline:
                self.submission()
        except Exception as e:   # reported by main, ends this worker only
            self.error = '%s: %s' % (type(e).__name__, e)
            self.b.fail('worker', self.w, 'exception', {'error': self.error})

    def fresh_judging_dir(self):
        if os.path.exists(self.judging):
            shutil.rmtree(self.judging)
        os.makedirs(self.judging)
        os.chmod(self.judging, 0o755)
        _make_dirs(self.judging, ('compile', 0o777))

    def submission(self):
        """Compile, then judge every test case; one row of SUB_COLUMNS.
        --workload trivial: the test-case runs only (trivial_runs)."""
        b = self.b
        index = b.next_index()
        start = time.monotonic()
        self.fresh_judging_dir()
        if b.opts.workload == 'trivial':
            name, verdict = 'trivial', self.trivial_runs()
        else:
            name, text = self.variants[index % len(self.variants)]
            verdict = 'COMPILER-ERROR'
            if self.compile(submission_source(text, index)):
                verdict = self.judge()
        b.submissions.append((round(b.now(), 3), self.w, index, name,
                              round(time.monotonic() - start, 3),
                              verdict == 'CORRECT', verdict))

    def judge(self):
        """The verdict of the first test case that is not CORRECT, as
        DOMjudge reports it (but every test case is run)."""
        b = self.b
        verdict = 'CORRECT'
        for rank, case in enumerate(self.cases, 1):
            if b.stop.is_set():
                return 'ABORTED'
            v = self.testcase(rank, case)
            with b.lock:
                b.verdicts[v] += 1
            if v != 'CORRECT' and verdict == 'CORRECT':
                verdict = v
        return verdict

    def trivial_runs(self):
        """--tests test-case calls of a static program that exits at once,
        with DOMjudge's options and directories, and no compile or compare
        step: what is left is runguard's own cost per call."""
        b = self.b
        program = os.path.join(self.judging, 'compile', 'program')
        shutil.copyfile(b.trivial, program)
        os.chmod(program, 0o755)
        verdict = 'CORRECT'
        for rank in range(1, b.opts.tests + 1):
            if b.stop.is_set():
                return 'ABORTED'
            rel = 'testcase%05d/1' % rank
            tdir = os.path.join(self.judging, rel)
            self.prepare_testcase(tdir, None)
            meta = self.run_program(tdir, rel)
            v = run_verdict(meta, {}, 42)   # nothing to compare
            with b.lock:
                b.verdicts[v] += 1
            if v != 'CORRECT':
                b.fail('testcase', self.w, v, {
                    'rank': rank, 'run_meta': meta, 'runguard_err':
                    tail(os.path.join(tdir, 'runguard.err'))})
                if verdict == 'CORRECT':
                    verdict = v
        return verdict

    def compile(self, source):
        b = self.b
        cdir = os.path.join(self.judging, 'compile')
        with open(os.path.join(cdir, 'source.cpp'), 'w') as f:
            f.write(source)
        args = ['-u', self.user, '-g', b.rungroup, '-m', '2097152',
                '-t', b.limit(30), '--nproc=64', '--no-core', '-f', '65536',
                '-s', '65536', '-M', '../compile.meta', '-o', 'compile.out',
                '--'] + b.compiler_cmd
        status, elapsed = b.call(self.w, 'compile', args, cdir,
                                 stdout=os.path.join(cdir, 'runguard.out'),
                                 stderr=os.path.join(cdir, 'runguard.err'))
        meta = read_meta(os.path.join(self.judging, 'compile.meta'))
        ok = status == 0 and os.path.exists(os.path.join(cdir, 'program'))
        st = 'ok' if ok else ('internal-error' if 'internal-error' in meta
                              else 'exit-%d' % status)
        b.record('compile', self.w, elapsed, meta, ok, st)
        if not ok:
            b.fail('compile', self.w, st, {
                'meta': meta,
                'compile_out': tail(os.path.join(cdir, 'compile.out')),
                'runguard_err': tail(os.path.join(cdir, 'runguard.err'))})
        return ok

    def prepare_testcase(self, tdir, case):
        """The directories, program and data of sample-judging's run;
        an empty input without a case (--workload trivial)."""
        _make_dirs(tdir, ('execdir', 0o755), ('feedback', 0o777))
        os.chmod(os.path.dirname(tdir), 0o755)
        os.chmod(tdir, 0o755)
        os.link(os.path.join(self.judging, 'compile', 'program'),
                os.path.join(tdir, 'execdir', 'program'))
        if case is None:
            open(os.path.join(tdir, 'testdata.in'), 'w').close()
            return
        inp, ans, _ = case
        shutil.copyfile(inp, os.path.join(tdir, 'testdata.in'))
        shutil.copyfile(ans, os.path.join(tdir, 'testdata.out'))

    def testcase(self, rank, case):
        rel = 'testcase%05d/1' % rank
        tdir = os.path.join(self.judging, rel)
        self.prepare_testcase(tdir, case)
        run_meta = self.run_program(tdir, rel)
        cmp_meta, cmp_status = self.compare_output(tdir)
        verdict = run_verdict(run_meta, cmp_meta, cmp_status)
        if verdict != 'CORRECT':
            self.b.fail('testcase', self.w, verdict, {
                'rank': rank, 'run_meta': run_meta, 'compare_meta': cmp_meta,
                'compare_status': cmp_status,
                'runguard_err': tail(os.path.join(tdir, 'runguard.err')),
                'program_err': tail(os.path.join(tdir, 'program.err')),
                'judgemessage': tail(os.path.join(tdir, 'feedback',
                                                  'judgemessage.txt'))})
        return verdict

    def run_program(self, tdir, rel):
        b = self.b
        args = ['-r', self.judging, '--nproc=64', '--no-core',
                '--streamsize=8192', '--user=' + self.user,
                '--group=' + b.rungroup,
                '--walltime=%s:%s' % (b.limit(2), b.limit(3)),
                '--cputime=%s:%s' % (b.limit(1), b.limit(1.5)),
                '--memsize=262144', '--filesize=8192',
                '--stderr=program.err', '--outmeta=program.meta', '--',
                '/%s/execdir/program' % rel]
        status, elapsed = b.call(self.w, 'run', args, tdir,
                                 stdin=os.path.join(tdir, 'testdata.in'),
                                 stdout=os.path.join(tdir, 'program.out'),
                                 stderr=os.path.join(tdir, 'runguard.err'))
        meta = read_meta(os.path.join(tdir, 'program.meta'))
        if 'internal-error' in meta:
            st = 'internal-error'
        elif 'timelimit' in meta.get('time-result', ''):
            st = 'timelimit'
        else:
            st = 'exit-%s' % meta.get('exitcode', 'none')
        err = tail(os.path.join(tdir, 'runguard.err'))
        if b.opts.mode == 'resident' and NO_KEEPER in err:
            # measured a pooled run, not the mode asked for
            st = 'not-resident'
            b.fail('run', self.w, st, {'runguard_err': err})
        b.record('run', self.w, elapsed, meta, st == 'exit-0', st)
        return meta

    def compare_output(self, tdir):
        b = self.b
        args = ['--user=' + self.user, '--group=' + b.rungroup,
                '-m', '524288', '-t', b.limit(10), '-f', '8192', '-s', '8192',
                '--no-core', '-M', 'compare.meta', '--', b.compare,
                'testdata.in', 'testdata.out', 'feedback/']
        status, elapsed = b.call(self.w, 'compare', args, tdir,
                                 stdin=os.path.join(tdir, 'program.out'),
                                 stdout=os.path.join(tdir, 'compare.tmp'),
                                 stderr=os.path.join(tdir, 'compare.err'))
        meta = read_meta(os.path.join(tdir, 'compare.meta'))
        st = 'internal-error' if 'internal-error' in meta else \
            'exit-%d' % status
        b.record('compare', self.w, elapsed, meta, status in (42, 43), st)
        return meta, status
