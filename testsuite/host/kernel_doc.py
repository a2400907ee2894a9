#!/usr/bin/env python3
"""Every function of kevent that another file calls has kernel-doc.

    kernel_doc.py KERNEL_DOC TREE

TREE is kernel/tree.  A function defined without "static" in
kernel/kevent/*.c is called from another file (the core's files call
each other through kevent.h, the hooks through include/linux/kevent*.h);
so is a static inline of include/linux/kevent*.h.  Each must be in the
reST that scripts/kernel-doc makes of its file.  Prints the missing
ones; exits 1 if there are any.
"""
import glob
import os
import re
import subprocess
import sys


def documented(kd, path):
    out = subprocess.run([kd, '-rst', path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL,
                         universal_newlines=True).stdout
    return set(re.findall(r'^\.\. c:function:: .*?(\w+) \(', out, re.M))


def defined(path, header):
    text = open(path, encoding='utf-8').read()
    if header:
        rx = r'^static (?:inline|__always_inline) [^;{]*?(\w+)\([^;]*?\)\s*\{'
    else:
        rx = r'^(?!static)[a-z][\w ]*[ *](\w+)\([^;]*?\)\s*\{'
    return re.findall(rx, text, re.M)


def main():
    kd, tree = sys.argv[1:3]
    missing = []
    files = [(f, False) for f in sorted(glob.glob(os.path.join(
        tree, 'kernel/kevent/*.c')))]
    files += [(f, True) for f in sorted(glob.glob(os.path.join(
        tree, 'include/linux/kevent*.h')))]
    # A stub of a header is documented where the function is.
    docs = set()
    for path, _ in files:
        docs |= documented(kd, path)
    for path, header in files:
        for name in defined(path, header):
            if name not in docs:
                missing.append('%s: %s() has no kernel-doc' %
                               (os.path.relpath(path, tree), name))
    if missing:
        print('\n'.join(missing))
    sys.exit(1 if missing else 0)


if __name__ == '__main__':
    main()
