#!/usr/bin/env python3
"""The split of the series into patches, for scripts/patchset.sh.

    patchset.py commits REPO        one commit per step on REPO's branch
    patchset.py cover               the cover letter's text, to stdout
    patchset.py fill-cover FILE TEXT  put TEXT into format-patch's cover
    patchset.py files               every file and patch the steps use
    patchset.py selftest-files DIR  copy the generated selftest sources

Each step of STEPS adds new files of kernel/tree (and the UAPI header)
and applies hook patches of kernel/patches.  A file that several steps
grow (the source table, the Makefile) is added whole by its first step
with the lines of later steps cut out (FILTERS), so that every commit
builds and the last one is exactly the tree scripts/kernel.sh assembles.
The selftests' sources are generated from testsuite/ (SELFTESTS): the
tests of make check are the only copy.

The commit message of a step is the header of its hook patch, or
kernel/patchset/<step>.msg for steps that make their own.
"""

import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
import kernel_sources  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.path.join(TOP, 'kernel', 'tree')
PATCHES = os.path.join(TOP, 'kernel', 'patches')
MSGS = os.path.join(TOP, 'kernel', 'patchset')

KK = 'kernel/kevent/'
ST = 'tools/testing/selftests/kevent/'

# name, commit message (None: the first hook patch's header), new files,
# hook patches.
STEPS = [
    ('user', None, [], ['kevent-user.patch']),
    ('core', 'core.msg',
     ['include/uapi/linux/kevent.h', 'include/linux/kevent.h',
      KK + 'Kconfig', KK + 'Makefile', KK + 'kevent.h', KK + 'sources.h',
      KK + 'sources.c', KK + 'syscalls.c', KK + 'queue.c', KK + 'abi.c',
      KK + 'kevent.c', KK + 'index.c', KK + 'ctl.c', KK + 'limit.c',
      KK + 'storage.c',
      KK + 'wait.c', KK + 'ring.c', KK + 'direct.c', KK + 'timer.c'],
     ['kevent-build.patch', 'kevent-syscalls-generic.patch']),
    ('x86', None, [], ['kevent-syscalls-x86.patch']),
    ('poll', None, [KK + 'poll.c'], ['kevent-file-release.patch']),
    ('pipe', None, [KK + 'pipe.c'], ['kevent-pipe.patch']),
    ('signal', None, ['include/linux/kevent_signal.h', KK + 'signal.c'],
     ['kevent-signal.patch']),
    ('posix_timer', None,
     ['include/linux/kevent_posix_timer.h', KK + 'kernel_api.h',
      KK + 'kernel_api.c', KK + 'posix_timer.c'],
     ['kevent-posix-timer.patch']),
    ('socket', None, ['include/linux/kevent_socket.h', KK + 'socket.c'],
     ['kevent-socket.patch']),
    ('doc', None, ['Documentation/userspace-api/kevent.rst'],
     ['kevent-doc.patch']),
    ('selftests', None, 'tools/testing/selftests/kevent/',
     ['kevent-selftests.patch']),
    ('maintainers', None, [], ['kevent-maintainers.patch']),
]

# (step, file, regex): the text the step adds to a file an earlier step
# created.  Each regex must match the final file exactly once.  Each
# source but the core's timer is a step of its name, which adds its
# entry to the table, its declaration and its line of the Makefile.
FILTERS = [
    (name, path, rx)
    for name, config in kernel_sources.sources() if name != 'timer'
    for path, rx in [
        (KK + 'Makefile', r'^obj-[^\n]*\b%s\.o\n' % name),
        (KK + 'sources.c',
         (r'^#ifdef %s\n\t\[KEVENT_%s\][^\n]*\n#endif\n' %
          (config, name.upper())) if config else
         r'^\t\[KEVENT_%s\][^\n]*\n' % name.upper()),
        (KK + 'sources.h', r'^extern [^\n]*kevent_%s_callbacks;\n' % name),
    ]] + [
    ('poll', 'include/linux/kevent.h',
     r'^#ifdef CONFIG_KEVENT\nvoid __kevent_release_file\(.*?\n#endif\n\n'),
]

# The selftests: the programs of testsuite/tests that tests.list flags
# selftest (they run without arguments and without the examples); the
# headers they include, and the user-space header.  Generated into the
# selftests' folder.
SELFTESTS = subprocess.run([os.path.join(TOP, 'scripts', 'suite-list.sh'),
                            'flag', 'selftest'], check=True,
                           stdout=subprocess.PIPE,
                           universal_newlines=True).stdout.split()
SELFTEST_COPIES = [('testsuite/lib/kevent_sys.h', 'lib/kevent_sys.h'),
                   ('testsuite/lib/harness.h', 'lib/harness.h'),
                   ('testsuite/lib/rand.h', 'lib/rand.h'),
                   ('testsuite/lib/tap_checks.h', 'lib/tap_checks.h'),
                   ('include/kevent.h', 'include/kevent.h')] + \
    [('testsuite/tests/%s.c' % t, 'tests/%s.c' % t) for t in SELFTESTS]


def die(msg):
    sys.stderr.write('patchset.py: %s\n' % msg)
    sys.exit(1)


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def source_of(path):
    """Where a new file of the series lives in this project."""
    if path == 'include/uapi/linux/kevent.h':
        return os.path.join(TOP, path)
    return os.path.join(TREE, path)


def tree_files(under):
    out = []
    for dirpath, _, names in os.walk(os.path.join(TREE, under)):
        for n in names:
            out.append(os.path.relpath(os.path.join(dirpath, n), TREE))
    return sorted(out)


def step_files(files):
    return tree_files(files) if isinstance(files, str) else files


def series():
    return [line.strip() for line in read(os.path.join(PATCHES, 'series'))
            .splitlines() if line.strip() and not line.startswith('#')]


def check_coverage():
    """Every file of kernel/tree and every patch of series is in a step."""
    used = []
    for _, _, files, _ in STEPS:
        used += step_files(files)
    want = tree_files('.') + ['include/uapi/linux/kevent.h']
    missing = sorted(set(want) - set(used))
    extra = sorted(set(used) - set(want))
    if missing or extra or len(used) != len(set(used)):
        die('kernel/tree and the steps disagree: not in a step %s, '
            'not in kernel/tree %s' % (missing, extra))
    names = [s[0] for s in STEPS]
    for name, _ in kernel_sources.sources():
        if name != 'timer' and name not in names:
            die('the source %s of kernel/kevent/sources.c has no step' %
                name)
    check_selftests()
    patches = [p for _, _, _, ps in STEPS for p in ps]
    if sorted(patches) != sorted(series()):
        die('kernel/patches/series and the steps disagree: %s vs %s' %
            (sorted(series()), sorted(patches)))


def check_selftests():
    """The selftests' Makefile and .gitignore name the flagged programs."""
    mk = read(os.path.join(TREE, ST, 'Makefile'))
    m = re.search(r'^KEVENT_TESTS := ((?:.*\\\n)*.*)$', mk, re.M)
    listed = m.group(1).replace('\\\n', ' ').split() if m else []
    ignored = [line.lstrip('/') for line in
               read(os.path.join(TREE, ST, '.gitignore')).split()]
    for what, names in (('Makefile', listed), ('.gitignore', ignored)):
        if names != SELFTESTS:
            die('%s%s names %s; testsuite/tests.list flags selftest %s' %
                (ST, what, ' '.join(names), ' '.join(SELFTESTS)))


def filtered(path, step_index):
    """The file as the step leaves it: later steps' lines cut out."""
    text = read(source_of(path))
    names = [s[0] for s in STEPS]
    for step, fpath, rx in FILTERS:
        if fpath != path:
            continue
        text2, n = re.subn(rx, '', text, flags=re.M | re.S)
        if len(re.findall(rx, read(source_of(path)), flags=re.M | re.S)) != 1:
            die('%s: the text of step %s (%s) is not there once' %
                (path, step, rx))
        if names.index(step) > step_index:
            text = text2
    return text


def patch_header(name):
    """Subject and body of a hook patch: its commit message."""
    text = read(os.path.join(PATCHES, name))
    head = text.split('\n---\n', 1)[0]
    m = re.search(r'^Subject: (?:\[PATCH[^\]]*\] )?(.*)$', head, re.M)
    if not m:
        die('%s has no Subject: line' % name)
    body = head.split('\n\n', 1)[1] if '\n\n' in head else ''
    return m.group(1) + '\n\n' + body.strip() + '\n'


def message(step):
    name, msg, _, patches = step
    text = read(os.path.join(MSGS, msg)) if msg else patch_header(patches[0])
    ident = read(os.path.join(PATCHES, 'kevent-build.patch')) \
        .split('\n', 1)[0][len('From: '):]
    sob = 'Signed-off-by: ' + ident
    if sob not in text:
        text = text.rstrip('\n') + '\n\n' + sob + '\n'
    return text


def run(cmd, cwd, **kw):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, **kw)
    if r.returncode:
        die('%s failed in %s:\n%s' % (' '.join(cmd), cwd, r.stdout))
    return r.stdout


def copy_selftest_sources(dest):
    for src, rel in SELFTEST_COPIES:
        write(os.path.join(dest, rel), read(os.path.join(TOP, src)))


def commits(repo):
    check_coverage()
    for i, step in enumerate(STEPS):
        name, _, files, patches = step
        for p in patches:
            with open(os.path.join(PATCHES, p), encoding='utf-8') as f:
                r = subprocess.run(['patch', '-p1', '-s', '-F0',
                                    '--no-backup-if-mismatch'], cwd=repo,
                                   stdin=f, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT,
                                   universal_newlines=True)
            if r.returncode:
                die('kernel/patches/%s does not apply:\n%s' % (p, r.stdout))
        for path in step_files(files):
            write(os.path.join(repo, path), filtered(path, i))
        # A file an earlier step created grows by this step's lines.
        for path in sorted({f for s, f, _ in FILTERS if s == name}):
            write(os.path.join(repo, path), filtered(path, i))
        if name == 'selftests':
            copy_selftest_sources(os.path.join(repo, ST))
        # -f: Debian's .gitignore ignores every top-level entry.
        new = step_files(files) + (
            [ST + rel for _, rel in SELFTEST_COPIES]
            if name == 'selftests' else [])
        run(['git', 'add', '-u'], repo)
        run(['git', 'add', '-f', '--'] + new, repo)
        run(['git', 'commit', '-q', '-F', '-'], repo, input=message(step))
    print('patchset: %d commits on branch kevent' % len(STEPS))


def changes_since_take26():
    text = read(os.path.join(TOP, 'CHANGES'))
    m = re.search(r'^Changes since take26[^\n]*\n\n(.*?)(?=\n\S[^\n]*\n[=-]+\n|\Z)',
                  text, re.M | re.S)
    if not m:
        die('CHANGES has no "Changes since take26" section')
    return m.group(1).rstrip() + '\n'


def bench_summary():
    """The hooks' cost and the summary table of doc/benchmarks.md: the
    first table of each of these sections that the file has."""
    path = os.path.join(TOP, 'doc', 'benchmarks.md')
    if not os.path.exists(path):
        return ''
    text = read(path)
    out = []
    for titles in (r'The cost of the hooks', r'Summary|Targets against epoll and io_uring'):
        m = re.search(r'^## ((?:%s)[^\n]*)\n(.*?)(?=^## |\Z)' % titles, text,
                      re.M | re.S)
        table = m and re.search(r'((?:^\|[^\n]*\|\n)+)', m.group(2), re.M)
        if table:
            out.append('%s (doc/benchmarks.md):\n\n%s' % (m.group(1),
                                                        table.group(1)))
        elif titles.startswith('The cost'):
            out.append('The cost of the hooks while kevent is unused has no '
                       'measurement yet\nin doc/benchmarks.md.\n')
    return '\n'.join(out)


def cover():
    text = read(os.path.join(MSGS, 'cover.txt'))
    summary = bench_summary()
    text = text.replace('@CHANGES@', changes_since_take26())
    text = text.replace('@BENCHMARKS@', summary if summary else
                        'doc/benchmarks.md has no summary table yet.\n')
    sys.stdout.write(text)


def fill_cover(path, textfile):
    text = read(textfile)
    subject, body = text.split('\n\n', 1)
    letter = read(path)
    letter = letter.replace('*** SUBJECT HERE ***', subject.strip())
    letter = letter.replace('*** BLURB HERE ***', body.rstrip('\n'))
    write(path, letter)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'commits':
        commits(sys.argv[2])
    elif sys.argv[1:] == ['cover']:
        cover()
    elif len(sys.argv) == 4 and sys.argv[1] == 'fill-cover':
        fill_cover(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == 'selftest-files':
        copy_selftest_sources(sys.argv[2])
    elif sys.argv[1:] == ['files']:
        check_coverage()
        for s in STEPS:
            print(s[0], ' '.join(step_files(s[2]) + s[3]))
    else:
        die(__doc__)


if __name__ == '__main__':
    main()
