#!/usr/bin/env python3
"""The files of kernel/kevent call each other in no circle.

    scripts/core-calls.py OBJDIR [-v]

Reads the symbol tables of the objects that OBJDIR/built-in.a links
(the kevent objects of a built kernel, not a stale one of a file since
removed) with nm: a file calls another when it has an undefined symbol
that the other defines as a function.  Calls through the table of
sources (the callbacks a source fills) are data, not calls, and do not
count: the core calls a source only through its table.  Prints each
circle found, and the whole graph with -v; exits 1 if there is a circle.
"""
import os
import subprocess
import sys


def graph(objdir):
    defined, undefined = {}, {}
    members = subprocess.run(['ar', 't', os.path.join(objdir, 'built-in.a')],
                             capture_output=True, text=True,
                             check=True).stdout.split()
    for member in sorted(members):
        obj = os.path.join(objdir, member)
        name = os.path.basename(obj)[:-2] + '.c'
        out = subprocess.run(['nm', obj], capture_output=True, text=True,
                             check=True).stdout
        undefined[name] = set()
        for line in out.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] == 'T':
                defined[fields[2]] = name
            elif len(fields) == 2 and fields[0] == 'U':
                undefined[name].add(fields[1])
    return {name: sorted({defined[s] for s in syms
                          if s in defined and defined[s] != name})
            for name, syms in undefined.items()}


def circles(calls):
    """Each circle once, as the list of files it passes, first the least."""
    found = set()

    def walk(path):
        for callee in calls.get(path[-1], []):
            if callee == path[0]:
                found.add(tuple(path))
            elif callee not in path and callee > path[0]:
                walk(path + [callee])

    for start in calls:
        walk([start])
    return sorted(found)


def main():
    args = [a for a in sys.argv[1:] if a != '-v']
    if len(args) != 1:
        sys.exit(__doc__.strip().split('\n\n')[1])
    calls = graph(args[0])
    if not calls:
        sys.exit('core-calls.py: no objects in ' + args[0])
    if '-v' in sys.argv:
        for name, callees in sorted(calls.items()):
            print(name, '->', ' '.join(callees))
    found = circles(calls)
    for circle in found:
        print('circle:', ' -> '.join(circle + (circle[0],)))
    sys.exit(1 if found else 0)


if __name__ == '__main__':
    main()
