"""The event sources of kevent, read from the one list of them: the
table of kernel/kevent/sources.c.

    import kernel_sources
    kernel_sources.sources()    # [('socket', 'CONFIG_NET'), ('timer', None), ...]

A source is named as its type is, in lower case without KEVENT_
(KEVENT_POSIX_TIMER: posix_timer), which is also the name of its file
in kernel/kevent, of its callbacks (kevent_posix_timer_callbacks), of
its step in the series and of its row in the report's matrix.  An entry
inside #ifdef CONFIG_X is built only with X.
"""
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(TOP, 'kernel', 'tree', 'kernel', 'kevent', 'sources.c')
ENTRY = re.compile(r'^\t\[KEVENT_(\w+)\]\s*= &kevent_(\w+)_callbacks,$')


def sources():
    """(name, config) for each entry of the table, in its order."""
    out, config = [], None
    with open(TABLE, encoding='utf-8') as f:
        for line in f.read().split('\n'):
            if line.startswith('#ifdef '):
                config = line.split()[1]
            elif line.startswith('#endif'):
                config = None
            else:
                m = ENTRY.match(line)
                if m:
                    if m.group(1).lower() != m.group(2):
                        raise ValueError('%s: KEVENT_%s has the callbacks '
                                         'of %s' % (TABLE, m.group(1),
                                                    m.group(2)))
                    out.append((m.group(2), config))
    if not out:
        raise ValueError(TABLE + ': no source in the table')
    return out
