#!/usr/bin/env python3
"""Fix the line counts of every hunk header of a patch edited by hand,
as patchutils' recountdiff does, and the new start lines after them.

usage: scripts/recount-patch.py FILE.patch   (rewritten in place)
"""
import re
import sys

HUNK = re.compile(r'^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$')


def recount(lines):
    out, i, shift = [], 0, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('--- '):
            shift = 0
        m = HUNK.match(line)
        if not m:
            out.append(line)
            i += 1
            continue
        old_start = int(m.group(1))
        body, i = [], i + 1
        while i < len(lines) and lines[i][:1] in (' ', '+', '-', '\\') \
                and not lines[i].startswith('--- '):
            body.append(lines[i])
            i += 1
        old = sum(1 for b in body if b[:1] in (' ', '-'))
        new = sum(1 for b in body if b[:1] in (' ', '+'))
        out.append(f'@@ -{old_start},{old} +{old_start + shift},{new} @@'
                   f'{m.group(3)}')
        out.extend(body)
        shift += new - old
    return out


def main():
    path = sys.argv[1]
    with open(path) as f:
        lines = f.read().split('\n')
    with open(path, 'w') as f:
        f.write('\n'.join(recount(lines)))


if __name__ == '__main__':
    main()
