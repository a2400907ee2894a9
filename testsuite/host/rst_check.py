#!/usr/bin/env python3
"""Check an rst file of Documentation/ with docutils, as make htmldocs
would read it: each ".. kernel-doc::" directive is replaced by what
scripts/kernel-doc -rst makes of it (as Documentation/sphinx/kerneldoc.py
does), Sphinx's C domain directives and roles are accepted and their
content parsed, and any docutils warning or error fails.

    rst_check.py TREE FILE.rst

TREE is a kernel tree with scripts/kernel-doc and the files the
directives name.  Writes the HTML to FILE.rst's name + .html in $TMPDIR.
"""
import io
import os
import re
import subprocess
import sys
import tempfile

from docutils import nodes
from docutils.core import publish_string
from docutils.parsers.rst import Directive, directives, roles


class Stub(Directive):
    """A Sphinx directive: its content is parsed as reST."""
    required_arguments = 0
    optional_arguments = 100
    final_argument_whitespace = True
    has_content = True
    option_spec = None

    def run(self):
        node = nodes.container()
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def stub_role(name, rawtext, text, lineno, inliner, options=None,
              content=None):
    return [nodes.literal(rawtext, text)], []


for d in ('c:function', 'c:type', 'c:struct', 'c:union', 'c:enum',
          'c:macro', 'c:member', 'c:var', 'c:enumerator', 'c:namespace',
          'c:namespace-push', 'c:namespace-pop', 'toctree', 'only'):
    directives.register_directive(d, Stub)
for r in ('c:func', 'c:type', 'c:macro', 'c:member', 'c:data', 'ref',
          'doc', 'manpage'):
    roles.register_local_role(r, stub_role)


def kernel_doc(tree, path, opts):
    cmd = [os.path.join(tree, 'scripts', 'kernel-doc'), '-rst']
    for key, value in opts:
        if key in ('doc', 'functions', 'identifiers'):
            for name in value.split() if key != 'doc' else [value]:
                cmd += ['-function', name]
        elif key in ('export', 'internal'):
            cmd.append('-' + key)
        elif key == 'no-identifiers':
            for name in value.split():
                cmd += ['-nosymbol', name]
    cmd.append(os.path.join(tree, path))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    errs = [l for l in r.stderr.splitlines()
            if 'warning' in l.lower() or 'error' in l.lower()]
    errs = [l for l in errs if 'Sphinx version not found' not in l]
    if r.returncode or errs or not r.stdout.strip():
        sys.exit('kernel-doc %s: %s' % (path, '\n'.join(errs) or
                                        'no output'))
    return r.stdout


def expand(tree, text):
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r'^\.\. kernel-doc:: (\S+)\s*$', lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        opts = []
        i += 1
        while i < len(lines) and re.match(r'^\s+:', lines[i]):
            om = re.match(r'^\s+:([\w-]+):\s*(.*)$', lines[i])
            opts.append((om.group(1), om.group(2).strip()))
            i += 1
        out.extend(kernel_doc(tree, m.group(1), opts).splitlines())
    return '\n'.join(out) + '\n'


def main():
    tree, rst = sys.argv[1:3]
    text = expand(tree, open(rst, encoding='utf-8').read())
    errors = io.StringIO()
    try:
        html = publish_string(text, source_path=rst, writer_name='html',
                              settings_overrides={
                                  'halt_level': 2, 'report_level': 2,
                                  'traceback': False,
                                  'warning_stream': errors})
    except BaseException as e:  # SystemMessage, or SystemExit
        m = re.search(r'\.rst:(\d+): ', str(e) + errors.getvalue())
        if m:
            n = int(m.group(1))
            lines = text.splitlines()
            sys.stderr.write('the expanded text around line %d:\n%s\n' % (
                n, '\n'.join(lines[max(0, n - 6):n + 2])))
        sys.exit('%s%s' % (errors.getvalue(), e))
    out = os.path.join(tempfile.gettempdir(),
                       os.path.basename(rst) + '.html')
    with open(out, 'wb') as f:
        f.write(html)


if __name__ == '__main__':
    main()
