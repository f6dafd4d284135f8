#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check that the docs name only files and identifiers that exist.

Usage: check_docs.py [SOURCE_ROOT]      (default: two levels above this file)

Exit status 0 when every reference is found, 1 with one line per problem
(FILE:LINE: what), 2 when the check itself cannot run.  Standard library
only; needs no privileges and no build.

The docs checked: README.md, docs/*.md, tests/integration/README.md and
bench/README.md.

Rules
=====

Paths.  Three places are read:

1. Inline code spans (`...`) outside fenced blocks.  The span is split at
   white space, so `bench/scale --mode pooled` yields `bench/scale`.
2. Markdown link and image targets, [text](target) and ![alt](target).
3. Fenced code blocks (```): only the command word of each line (after a
   `#` or `$` prompt, `sudo`, `cd` and VAR=value assignments), and any other
   word of the line that starts with `./`.

A word is a *candidate path* when, after stripping quotes, a leading `./`,
trailing punctuation and a trailing `:LINE`:

- it is not a URL (scheme://, mailto:) and not an absolute path (/proc/...,
  /etc/..., /usr/..., /run/...: host paths, not the repository's);
- it holds no placeholder: none of < > * $ { } [ ] | % ~ ` = , no `...`,
  no component that is an all-capitals word without a dot (DIR, BUILD,
  PREFIX; README.md and LICENSE-like names with a dot are real), and no
  lone K, N or XXX part (slot-K.lock, testcaseNNNNN, pool-XXXXXXXX);
- it is not build output: its first component is not build, build-*,
  builddir or dist;
- and either it contains a `/` and its first component is an entry of the
  repository root or of the doc's own directory (so `lib/pool/pool.c`,
  `docs/pool.md`, `performance/spaced.png` from docs/ are candidates, and
  `system.slice/lab.service`, `ns/slot-0.mq` or DOMjudge's
  `judge/runguard.cc` are not), or it has no `/` and ends in one of
  SOURCE_EXTENSIONS (`lease.c`, `test_pool.py`, `pool.md`).

A candidate passes when it exists relative to the repository root or to
the doc's directory.  A bare file name (no `/`) also passes when a file of
that name exists anywhere in the source tree: the docs name a file in a
directory they have just mentioned (`lease.c` after `lib/pool/`).

Link targets are resolved the way a Markdown renderer does, relative to the
doc's directory only, and `#anchor` parts of links to Markdown files (or of
`#anchor` links within a doc) must name a heading there (GitHub's slugs).

Identifiers.  Every word of a doc (code or prose) that starts with `rg_` or
`RG_` (rg_pool_run, struct rg_result, RG_RESULT_INIT, RG_LOG_NOTICE) must
occur as a whole word in some file below include/, lib/, runguard/,
keeper/, python/, tests/ (this directory excluded), bench/ or examples/.
A `*` in one (rg_config_set_*, rg_cgroup_*_create) matches any identifier
characters; a bare `rg_` or `RG_` (a prefix being talked about) is skipped.

Function names.  Every word followed by `(` inside a code span
(`take_slot()`, `setns(fd, 0)`) must occur in the same sources, or as
`SYS_name` there (a system call made through syscall()).

ALLOWLIST below names the few legitimate exceptions, each with its reason.
Do not add a name there to silence drift: fix the doc instead.
"""

import os
import re
import sys

DOCS = ['README.md', 'docs/*.md', 'tests/integration/README.md',
        'bench/README.md']

# Where identifiers must occur (text search).
IDENT_DIRS = ['include', 'lib', 'runguard', 'keeper', 'python', 'tests',
              'bench', 'examples']
# Not searched: this checker itself (its allowlist would count).
IDENT_EXCLUDE = ['tests/docs']

# A bare file name ending in one of these is a candidate path.
# (Not .conf, .service: those name installed files, /etc/runguard.conf,
# the runguard-pool unit, more often than the repository's.)
SOURCE_EXTENSIONS = ('.c', '.h', '.py', '.pyi', '.md', '.build', '.map',
                     '.abi', '.abignore', '.sh', '.cc')

# Directories that are build output or not source.
SKIP_DIRS = re.compile(r'^(\.git|build|build-.*|builddir|dist|__pycache__)$')

# Legitimate exceptions: the reference is right, the file or name is not
# in this repository.
ALLOWLIST = {
    # DOMjudge's own files, named where the docs describe DOMjudge's flow.
    'chroot-startstop.sh': "DOMjudge's chroot script (misc-tools/), "
                           "not part of runguard",
    'testcase_run.sh': "DOMjudge's default run script, not part of "
                       "runguard",
    'compile.sh': "DOMjudge's compile wrapper, which calls runguard",
    'build_executable.sh': "DOMjudge's executable builder, which calls "
                           "runguard",
    # The kernel's own functions, named where the docs explain a kernel fix.
    'cpuset_fork': "the kernel's (kernel/cgroup/cpuset.c), fixed in 6.3 "
                   "for CLONE_INTO_CGROUP",
    # Generated into the build directory by meson, never in the source.
    'rg-build-config.h': 'generated into the build directory by the '
                         'top-level meson.build (configure_file)',
    'syscall_filter_bpf.h': 'generated into the build directory by '
                            'gen-syscall-filter (lib/meson.build)',
}

URL = re.compile(r'^[a-z][a-z0-9+.-]*:(//)?', re.I)
PLACEHOLDER_CHARS = set('<>*${}[]|%~`=,')
CAPS_WORD = re.compile(r'^[A-Z][A-Z0-9_]*$')
LONE_PLACEHOLDER = re.compile(r'(^|[-_.])(K|N|NN+|X{3,})([-_.]|$)')
IDENT = re.compile(r'(?<![A-Za-z0-9_])((?:rg|RG)_[A-Za-z0-9_*]*)')
WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
FENCE = re.compile(r'^\s*(```+|~~~+)(.*)$')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
FUNC = re.compile(r'(?<![A-Za-z0-9_.>-])([A-Za-z_][A-Za-z0-9_]*)\(')
CODE_SPAN = re.compile(r'(`+)(.+?)(?<!`)\1(?!`)', re.S)


def slug(text):
    """GitHub's anchor for a heading."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = text.replace('`', '').strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


class Tree:
    def __init__(self, root):
        self.root = root
        self.top = set(os.listdir(root))
        self.basenames = set()
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not SKIP_DIRS.match(x)]
            self.basenames.update(files)
            self.basenames.update(dirs)
        self.words = set()
        for top in IDENT_DIRS:
            for d, dirs, files in os.walk(os.path.join(root, top)):
                rel = os.path.relpath(d, root)
                dirs[:] = [x for x in dirs if not SKIP_DIRS.match(x) and
                           os.path.join(rel, x) not in IDENT_EXCLUDE]
                for f in files:
                    self._read_words(os.path.join(d, f))
        self.anchors = {}

    def _read_words(self, path):
        try:
            with open(path, 'rb') as f:
                data = f.read()
        except OSError:
            return
        if b'\0' in data[:4096]:
            return
        self.words.update(WORD.findall(data.decode('utf-8', 'replace')))

    def exists(self, rel):
        return os.path.lexists(os.path.join(self.root, rel))

    def doc_anchors(self, rel):
        if rel not in self.anchors:
            found, counts = set(), {}
            try:
                with open(os.path.join(self.root, rel),
                          encoding='utf-8') as f:
                    lines = f.read().splitlines()
            except OSError:
                lines = []
            fenced = False
            for line in lines:
                if FENCE.match(line):
                    fenced = not fenced
                    continue
                m = None if fenced else HEADING.match(line)
                if m:
                    s = slug(m.group(2))
                    n = counts.get(s, 0)
                    counts[s] = n + 1
                    found.add(s if n == 0 else '%s-%d' % (s, n))
            self.anchors[rel] = found
        return self.anchors[rel]


def clean_word(word):
    word = word.strip('\'"()“”‘’;')
    word = re.sub(r'[.,:;)]+$', '', word)
    word = re.sub(r':\d+(-\d+)?$', '', word)
    if word.startswith('./'):
        word = word[2:]
    return word


def is_placeholder(word):
    if '...' in word or '…' in word:
        return True
    if any(c in PLACEHOLDER_CHARS for c in word):
        return True
    for comp in word.rstrip('/').split('/'):
        if CAPS_WORD.match(comp) and len(comp) > 1:
            return True
        if LONE_PLACEHOLDER.search(comp):
            return True
    return False


def candidate(word, doc_dir, tree):
    """The word as a repository path to check, or None."""
    if not word or URL.match(word) or word.startswith(('/', '-', '#')):
        return None
    if is_placeholder(word):
        return None
    first = word.split('/')[0]
    if first in ('build', 'builddir', 'dist') or first.startswith('build-'):
        return None
    if '/' in word:
        if first in ('.', '..'):
            return word
        if first in tree.top or (doc_dir and tree.exists(
                os.path.join(doc_dir, first))):
            return word
        return None
    if word.endswith(SOURCE_EXTENSIONS) and not word.startswith('.'):
        return word
    return None


def path_found(word, doc_dir, tree):
    if os.path.basename(word.rstrip('/')) in ALLOWLIST:
        return True
    if word in ALLOWLIST:
        return True
    if tree.exists(word) or (doc_dir and
                             tree.exists(os.path.join(doc_dir, word))):
        return True
    return '/' not in word and word in tree.basenames


def ident_found(name, tree):
    if name in ALLOWLIST:
        return True
    if '*' in name:
        pattern = re.compile('^' + re.escape(name).replace(r'\*', '[A-Za-z0-9_]*') + '$')
        return any(pattern.match(w) for w in tree.words
                   if w[:3] == name[:3])
    return name in tree.words


def func_found(name, tree):
    return (name in ALLOWLIST or name in tree.words or
            'SYS_' + name in tree.words)


def fenced_words(line):
    """The command word of a line in a fenced block, and ./words."""
    words = line.split()
    out = [w for w in words if w.startswith('./')]
    i = 0
    while i < len(words) and (words[i] in ('#', '$', 'sudo', 'cd', '-n') or
                              re.match(r'^[A-Za-z_][A-Za-z0-9_]*=', words[i])):
        i += 1
    if i < len(words) and words[i] not in out:
        out.insert(0, words[i])
    return out


def check_doc(rel, tree, problems, counts):
    doc_dir = os.path.dirname(rel)
    with open(os.path.join(tree.root, rel), encoding='utf-8') as f:
        lines = f.read().splitlines()

    def problem(lineno, text):
        problems.append('%s:%d: %s' % (rel, lineno, text))

    def check_path(lineno, raw, how):
        word = clean_word(raw)
        cand = candidate(word, doc_dir, tree)
        if cand is None:
            return
        counts['paths'] += 1
        if not path_found(cand, doc_dir, tree):
            problem(lineno, 'no such file or directory: %s (%s)' % (cand, how))

    # Identifiers: everywhere.
    for n, line in enumerate(lines, 1):
        for m in IDENT.finditer(line):
            name = m.group(1).rstrip('_')
            if name in ('rg', 'RG') or not name.strip('*'):
                continue
            counts['identifiers'] += 1
            if not ident_found(m.group(1) if m.group(1).endswith('*')
                               else name, tree):
                problem(n, 'identifier not in the source: %s' % name)

    # Prose: fenced blocks apart, paragraphs joined so spans may wrap.
    fenced = False
    prose = []   # (lineno, text)
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            for w in fenced_words(line):
                check_path(n, w, 'command in a code block')
            continue
        prose.append((n, line))

    # Group into paragraphs (blank line separated) for spans across lines.
    para, start = [], None
    for n, line in prose + [(None, '')]:
        if line.strip() and n is not None:
            if start is None:
                start = n
            para.append(line)
            continue
        if para:
            text = '\n'.join(para)
            offsets = [0]
            for p in para:
                offsets.append(offsets[-1] + len(p) + 1)

            def line_of(pos):
                i = 0
                while i + 1 < len(offsets) and offsets[i + 1] <= pos:
                    i += 1
                return start + i

            for m in LINK.finditer(text):
                check_link(line_of(m.start()), m.group(1), rel, doc_dir,
                           tree, problem, counts)
            for m in CODE_SPAN.finditer(text):
                for w in m.group(2).split():
                    check_path(line_of(m.start()), w, 'in backticks')
                for f in FUNC.findall(m.group(2)):
                    if f.startswith(('rg_', 'RG_')):
                        continue  # the identifiers' rule has them
                    counts['functions'] += 1
                    if not func_found(f, tree):
                        problem(line_of(m.start()),
                                'function not in the source: %s()' % f)
        para, start = [], None


def check_link(lineno, target, rel, doc_dir, tree, problem, counts):
    if URL.match(target) and not target.startswith('#'):
        return
    path, _, anchor = target.partition('#')
    counts['links'] += 1
    if path:
        dest = os.path.normpath(os.path.join(doc_dir, path))
        if not tree.exists(dest):
            problem(lineno, 'link to a missing file: %s' % target)
            return
    else:
        dest = rel
    if anchor and dest.endswith('.md') and \
            anchor not in tree.doc_anchors(dest):
        problem(lineno, 'link to a missing heading: %s' % target)


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', '..')
    root = os.path.abspath(root)
    if not os.path.isfile(os.path.join(root, 'README.md')):
        print('check_docs: %s is not the source root' % root,
              file=sys.stderr)
        return 2
    tree = Tree(root)
    docs = []
    for pattern in DOCS:
        if '*' in pattern:
            d, _, ext = pattern.partition('/*')
            docs += sorted(os.path.join(d, f)
                           for f in os.listdir(os.path.join(root, d))
                           if f.endswith(ext))
        elif os.path.isfile(os.path.join(root, pattern)):
            docs.append(pattern)
    problems = []
    counts = {'paths': 0, 'identifiers': 0, 'links': 0, 'functions': 0}
    for rel in docs:
        check_doc(rel, tree, problems, counts)
    summary = ('%d docs: %d paths, %d links, %d identifiers, %d function '
               'names checked'
               % (len(docs), counts['paths'], counts['links'],
                  counts['identifiers'], counts['functions']))
    if problems:
        print('\n'.join(problems))
        print('%s; %d problems' % (summary, len(problems)))
        return 1
    print('%s; all found' % summary)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
