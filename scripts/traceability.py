#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Traceability: which statements of the manual no passing test checks.

The statements that must be checked:

  - every entry of every ERRORS section of man/ (system calls, sources,
    kevent_probe(3), KEVENT_IOC_GET_ABI(2const)), each named by the
    roff comment right before its .TP:

        .\\" ERRORS-ID: no-ring
        .TP
        .B EINVAL
        The queue has no ring.

    IDs are lowercase words joined by '-', unique within a page, and
    stay the same when the text of the entry changes;

  - every command and flag page of man2const (every page there that is
    not a one-line .so alias);

  - every other statement of a page marked as tested, outside ERRORS,
    by a roff comment right before it:

        .\\" TESTED: ready-when-added
        A registration whose socket is already ready when it is added

    the ID, as for ERRORS, in lowercase words joined by '-', unique
    within the page; its tag is [kevent_socket.7 ready-when-added].

A TAP point checks a statement when its description carries a tag:

    [kevent_wait.2 EINVAL no-ring]    an ERRORS entry: page, errno, ID
    [kevent_init.2 EMFILE]            the ID may be left out when the
                                      errno has one entry in the page
    [KEVENT_REQ_ET.2const]            a page as a whole
    [kevent_socket.7 end-of-stream]   a statement marked TESTED, by
                                      its ID
    [kevent.7 any other words]        a statement of a page; checked
                                      for the page only, not counted

A point may carry several tags.  Only points that PASS count.  A tag
that names no page, no entry, or more than one entry is an error.

Two kinds of entries cannot be provoked on the kernel of a normal run:

  - ENOMEM: testsuite/tests/faults.c provokes them by fault injection,
    on the debug kernel only (make check VARIANT=debug); elsewhere it
    skips its points.  Outside the debug variant an ENOMEM entry that no
    passing point checks is accepted when faults.c carries its tag,
    which is checked in the source (and said so in the output);

  - ENOSYS "the kernel does not provide kevent" (ID no-kevent): shown
    by testsuite/tests/nokevent.c on a kernel without CONFIG_KEVENT.  An
    entry that no passing point checks is accepted when nokevent.c
    carries its tag, checked in the source.

Used by testsuite/report.py --trace (make check), or alone:

    scripts/traceability.py [--variant V] [--verbose] GUEST_LOG
    scripts/traceability.py --list      every statement and its tag
"""
import argparse
import errno as errno_module
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTIONS = ('2', '2const', '2type', '3', '7')
TAG = re.compile(r'\[([A-Za-z_][A-Za-z0-9_]*\.(?:2const|2type|2|3|7))'
                 r'(?:\s+([^\]]*?))?\s*\]')
ERRNOS = {n for n in dir(errno_module) if re.match(r'^E[A-Z0-9]+$', n)}


def is_errno(word):
    return word in ERRNOS
ID_LINE = re.compile(r'^\.\\"\s*ERRORS-ID:\s*(\S+)\s*$')
TESTED_LINE = re.compile(r'^\.\\"\s*TESTED:\s*(\S+)\s*$')
GOOD_ID = re.compile(r'^[a-z0-9]+(-[a-z0-9]+)*$')
TAP_POINT = re.compile(r'^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$')
SKIP = re.compile(r'#\s*skip', re.I)
# The tests whose tags are trusted from the source, for entries that a
# normal run cannot provoke.
STATIC = {
    'nomem': ('testsuite/tests/faults.c',
              'covered by the debug variant: the tag is in '
              'testsuite/tests/faults.c (checked in the source), whose '
              'points run on the debug kernel only '
              '(make check VARIANT=debug)'),
    'nokevent': ('testsuite/tests/nokevent.c',
                 'covered by the kernel without CONFIG_KEVENT: the tag is '
                 'in testsuite/tests/nokevent.c (checked in the source)'),
}


class Entry:
    """One ERRORS entry: a .TP with one or more errnos (.TQ)."""

    def __init__(self, page, ident, line):
        self.page = page
        self.id = ident
        self.line = line
        self.errnos = []
        self.text = ''

    def key(self):
        return f'{self.page.name} {self.errnos[0] if self.errnos else "?"} ' \
               f'{self.id}'

    def tag(self):
        """The shortest tag that names this entry."""
        same = [e for e in self.page.entries
                if set(e.errnos) & set(self.errnos)]
        if len(same) == 1:
            return f'[{self.page.name} {self.errnos[0]}]'
        return f'[{self.page.name} {self.errnos[0]} {self.id}]'

    def static_kind(self):
        if 'ENOMEM' in self.errnos:
            return 'nomem'
        if self.id == 'no-kevent' and 'ENOSYS' in self.errnos:
            return 'nokevent'
        return None


class Fact:
    """A statement outside ERRORS marked with a TESTED: comment."""

    def __init__(self, page, ident, line):
        self.page = page
        self.id = ident
        self.line = line
        self.text = ''

    def tag(self):
        return f'[{self.page.name} {self.id}]'


class Page:
    def __init__(self, name, path):
        self.name = name            # kevent_wait.2
        self.path = path
        self.alias = None           # the .so target, for an alias
        self.entries = []
        self.facts = []
        self.errors = []            # lint messages

    def need_page_tag(self):
        """A command or flag page: checked as a whole."""
        return self.name.endswith('.2const') and self.alias is None


def roff_text(line):
    """Rough plain text of a roff line, for the report."""
    line = re.sub(r'^\.(B|I|BR|IR|RB|RI|BI|IB)\s+', '', line)
    line = re.sub(r' \((\d\w*)\)', r'(\1)', line)
    line = line.replace('\\-', '-').replace('\\(em', '-')
    line = re.sub(r'\\\[[a-z]+\]', '"', line)
    line = re.sub(r'\\[fs]\S', '', line)
    line = line.replace('"', '').replace('\\', '')
    return re.sub(r'\s+', ' ', line)


def parse_page(name, path):
    page = Page(name, path)
    with open(path, errors='replace') as f:
        lines = f.read().splitlines()
    if lines and lines[0].startswith('.so '):
        page.alias = lines[0][4:].strip()
        return page
    rel = os.path.relpath(path, TOP)
    section = None
    pending_id = pending_at = None
    entry = None
    state = None        # 'tag' after .TP/.TQ, 'text' after the tags
    seen = {}
    fact = None
    for n, line in enumerate(lines, 1):
        m = TESTED_LINE.match(line)
        if m:
            fact = None
            if section == 'ERRORS':
                page.errors.append(f'{rel}:{n}: TESTED: inside ERRORS '
                                   '(an entry has its ERRORS-ID)')
            elif not GOOD_ID.match(m.group(1)):
                page.errors.append(f'{rel}:{n}: TESTED: {m.group(1)!r}: '
                                   'use lowercase words joined by "-"')
            elif m.group(1) in seen:
                page.errors.append(f'{rel}:{n}: TESTED: {m.group(1)} also '
                                   f'at line {seen[m.group(1)]}: IDs are '
                                   'unique within a page')
            else:
                seen[m.group(1)] = n
                fact = Fact(page, m.group(1), n)
                page.facts.append(fact)
            continue
        if fact is not None and not line.startswith('.\\"'):
            if len(fact.text) < 160 and not line.startswith(('.P', '.SS',
                                                              '.SH', '.TP',
                                                              '.IP')):
                fact.text = (fact.text + ' ' + roff_text(line)).strip()
        if line.startswith(('.P', '.SS', '.SH', '.TP', '.IP')) and \
                fact is not None and fact.text:
            fact = None
        if line.startswith('.SH '):
            section = line[4:].strip().strip('"')
            entry = state = None
            if pending_id:
                page.errors.append(f'{rel}:{pending_at}: ERRORS-ID '
                                   f'{pending_id} is not followed by .TP')
                pending_id = None
            continue
        if section != 'ERRORS':
            if ID_LINE.match(line):
                page.errors.append(f'{rel}:{n}: ERRORS-ID outside ERRORS')
            continue
        m = ID_LINE.match(line)
        if m:
            if pending_id:
                page.errors.append(f'{rel}:{pending_at}: ERRORS-ID '
                                   f'{pending_id} is not followed by .TP')
            pending_id, pending_at = m.group(1), n
            continue
        if line.startswith('.TP'):
            entry = Entry(page, pending_id or '', n)
            page.entries.append(entry)
            if not pending_id:
                page.errors.append(f'{rel}:{n}: an ERRORS entry without '
                                   'an ".\\" ERRORS-ID: name" line before '
                                   'its .TP')
            elif not GOOD_ID.match(pending_id):
                page.errors.append(f'{rel}:{pending_at}: ERRORS-ID '
                                   f'{pending_id!r}: use lowercase words '
                                   'joined by "-"')
            elif pending_id in seen:
                page.errors.append(f'{rel}:{pending_at}: ERRORS-ID '
                                   f'{pending_id} also at line '
                                   f'{seen[pending_id]}: IDs are unique '
                                   'within a page')
            else:
                seen[pending_id] = pending_at
            pending_id = None
            state = 'tag'
            continue
        if line.startswith('.TQ') and entry is not None:
            state = 'tag'
            continue
        if line.startswith('.SS '):
            entry = state = None
            continue
        if entry is None or line.startswith('.\\"'):
            continue
        if state == 'tag':
            words = line.split()
            if len(words) >= 2 and words[0] == '.B' and is_errno(words[1]):
                entry.errnos.append(words[1])
            else:
                page.errors.append(f'{rel}:{n}: an ERRORS entry whose tag '
                                   f'is not ".B ERRNO": {line!r}')
            state = 'text'
            continue
        if len(entry.text) < 160 and not line.startswith('.P'):
            entry.text = (entry.text + ' ' + roff_text(line)).strip()
    if pending_id:
        page.errors.append(f'{rel}:{pending_at}: ERRORS-ID {pending_id} '
                           'is not followed by .TP')
    return page


def load_manual(mandir=None):
    mandir = mandir or os.path.join(TOP, 'man')
    pages = {}
    for sec in SECTIONS:
        d = os.path.join(mandir, f'man{sec}')
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith('.' + sec):
                pages[f] = parse_page(f, os.path.join(d, f))
    return pages


def resolve(pages, page_name, rest):
    """('entry', Entry) | ('page', Page) | ('statement', Page) | ('error',
    message) for one tag."""
    page = pages.get(page_name)
    if page is None:
        return ('error', f'[{page_name}{" " + rest if rest else ""}]: '
                         f'no page {page_name} in man/')
    if page.alias is not None:
        return ('error', f'[{page_name}]: {page_name} is an alias of '
                         f'{page.alias}: name that page')
    if not rest:
        return ('page', page)
    words = rest.split()
    if not is_errno(words[0]):
        for f in page.facts:
            if len(words) == 1 and f.id == words[0]:
                return ('fact', f)
        if len(words) == 1 and GOOD_ID.match(words[0]) and '-' in words[0]:
            ids = ', '.join(f.id for f in page.facts) or 'none'
            return ('error', f'[{page_name} {rest}]: no statement '
                             f'{words[0]} marked TESTED in {page_name} '
                             f'(its IDs: {ids})')
        return ('statement', page)
    errno = words[0]
    cands = [e for e in page.entries if errno in e.errnos]
    if not cands:
        return ('error', f'[{page_name} {rest}]: {page_name} has no ERRORS '
                         f'entry for {errno}')
    if len(words) == 1:
        if len(cands) > 1:
            ids = ', '.join(e.id for e in cands)
            return ('error', f'[{page_name} {rest}]: {errno} has '
                             f'{len(cands)} entries in {page_name} ({ids}): '
                             'add the ID')
        return ('entry', cands[0])
    if len(words) > 2:
        return ('error', f'[{page_name} {rest}]: want [PAGE ERRNO ID]')
    for e in cands:
        if e.id == words[1]:
            return ('entry', e)
    ids = ', '.join(e.id for e in cands)
    return ('error', f'[{page_name} {rest}]: no {errno} entry {words[1]} in '
                     f'{page_name} (its {errno} entries: {ids})')


class Trace:
    """Collects the tagged points of a run and says what is not covered."""

    def __init__(self, pages=None, variant='normal', top=TOP):
        self.top = top
        self.pages = pages if pages is not None else load_manual()
        self.variant = variant or 'normal'
        self.covered = {}       # Entry or Page -> [point names]
        self.bad_tags = []      # (where, message)
        self.points = 0
        self.tagged = 0

    def statements(self):
        """Every statement to check, in page order."""
        out = []
        for page in self.pages.values():
            if page.need_page_tag():
                out.append(page)
            out.extend(page.entries)
            out.extend(page.facts)
        return out

    def collect(self, prog, lines):
        """The TAP lines of one program of the guest."""
        for line in lines:
            m = TAP_POINT.match(line)
            if not m:
                continue
            desc = m.group(3)
            passed = m.group(1) == 'ok' and not SKIP.search(desc)
            self.add_point(prog, desc, passed)

    def add_point(self, prog, desc, passed):
        self.points += 1
        tags = TAG.findall(desc)
        if tags:
            self.tagged += 1
        for page_name, rest in tags:
            kind, what = resolve(self.pages, page_name, rest)
            if kind == 'error':
                self.bad_tags.append((prog, what))
            elif passed and kind in ('entry', 'page', 'fact'):
                self.covered.setdefault(what, []).append(
                    f'{prog}: {desc[:100]}')

    def static_tags(self, path):
        """The statements a test's source tags, and its bad tags."""
        full = os.path.join(self.top, path)
        try:
            with open(full, errors='replace') as f:
                text = f.read()
        except OSError:
            return None, []
        found, bad = set(), []
        for page_name, rest in TAG.findall(text):
            if '%' in rest:
                continue    # a printf format: seen in the log instead
            kind, what = resolve(self.pages, page_name, rest)
            if kind == 'error':
                bad.append((path, what))
            elif kind in ('entry', 'page'):
                found.add(what)
        return found, bad

    def check(self):
        """(lint, bad tags, static {kind: [statement]}, uncovered)."""
        lint = [m for p in self.pages.values() for m in p.errors]
        bad = list(self.bad_tags)
        static = {}
        uncovered = []
        source_tags = {}
        for kind, (path, _) in STATIC.items():
            tags, bad_static = self.static_tags(path)
            source_tags[kind] = tags
            bad.extend(bad_static)
        for st in self.statements():
            if self.covered.get(st):
                continue
            kind = st.static_kind() if isinstance(st, Entry) else None
            if kind == 'nomem' and self.variant == 'debug':
                kind = None     # the debug kernel must show it
            tags = source_tags.get(kind)
            if kind and tags and st in tags:
                static.setdefault(kind, []).append(st)
                continue
            uncovered.append(st)
        return lint, bad, static, uncovered


def describe(st, top=TOP):
    if isinstance(st, Page):
        return (f'{st.name}: the page ({os.path.relpath(st.path, top)}); '
                f'tag [{st.name}]')
    rel = os.path.relpath(st.page.path, top)
    if isinstance(st, Fact):
        return (f'{st.page.name} {st.id} ({rel}:{st.line}): '
                f'{st.text[:90]}; tag {st.tag()}')
    errnos = '/'.join(st.errnos)
    return (f'{st.page.name} {errnos} {st.id} ({rel}:{st.line}): '
            f'{st.text[:90]}; tag {st.tag()}')


def report_lines(trace):
    """(ok, summary lines, detail lines) for report.py and the CLI."""
    lint, bad, static, uncovered = trace.check()
    entries = sum(len(p.entries) for p in trace.pages.values())
    pages_with = sum(1 for p in trace.pages.values() if p.entries)
    flag_pages = sum(1 for p in trace.pages.values() if p.need_page_tag())
    facts = sum(len(p.facts) for p in trace.pages.values())
    total = entries + flag_pages + facts
    dynamic = total - len(uncovered) - sum(len(v) for v in static.values())
    summary = [f'traceability: {entries} ERRORS entries in {pages_with} '
               f'pages, {flag_pages} command and flag pages (2const), '
               f'{facts} statements marked TESTED; '
               f'{trace.tagged} of {trace.points} points tagged; '
               f'variant {trace.variant}',
               f'  {dynamic} of {total} checked by passing tagged points']
    for kind, sts in static.items():
        summary.append(f'  {len(sts)} {STATIC[kind][1]}:')
        for st in sts:
            summary.append(f'      {st.page.name} {"/".join(st.errnos)} '
                           f'{st.id}')
    detail = []
    for m in lint:
        detail.append(f'manual: {m}')
    for where, m in bad:
        detail.append(f'bad tag in {where}: {m}')
    for st in uncovered:
        detail.append(f'not checked: {describe(st, trace.top)}')
    return not detail, summary, detail, uncovered, lint, bad


def read_points(path):
    """Per program, the TAP lines of a guest log (report.py's parser)."""
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(TOP, 'testsuite'))
    import report   # noqa: E402  (testsuite/report.py)
    g = report.parse_file(path)
    return [(r.name, r.out) for r in g.runs], g


def main():
    ap = argparse.ArgumentParser(
        description='List the statements of the manual that no passing '
                    'tagged test point checks.')
    ap.add_argument('--variant', help='normal or debug (default: debug if '
                    'the log has a kmemleak report, else normal)')
    ap.add_argument('--list', action='store_true',
                    help='list every statement to check, with its tag')
    ap.add_argument('--verbose', '-v', action='store_true',
                    help='also show the points that check each statement')
    ap.add_argument('guest_log', nargs='*')
    args = ap.parse_args()
    pages = load_manual()
    if args.list:
        t = Trace(pages)
        for st in t.statements():
            print(describe(st))
        return 0
    variant = args.variant
    trace = None
    for path in args.guest_log:
        runs, g = read_points(path)
        if variant is None:
            variant = 'debug' if g.kmemleak is not None else 'normal'
        if trace is None:
            trace = Trace(pages, variant)
        for name, out in runs:
            trace.collect(name, out)
    if trace is None:
        trace = Trace(pages, variant or 'normal')
    good, summary, detail, _, _, _ = report_lines(trace)
    for line in summary:
        print(line)
    if args.verbose:
        for st in trace.statements():
            who = trace.covered.get(st, [])
            print(describe(st))
            for w in who[:5]:
                print(f'      {w}')
            if len(who) > 5:
                print(f'      ... and {len(who) - 5} more')
    for line in detail:
        print(f'  {line}')
    print('traceability: ' + ('every statement is checked' if good else
                              f'{len(detail)} problems'))
    return 0 if good else 1


if __name__ == '__main__':
    sys.exit(main())
