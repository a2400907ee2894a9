"""The guest's serial log, read the same way by every reader of it: the
report (testsuite/report.py), the traceability report, the selftests'
comparison and the peers' tables.

    import guestlog
    lines = guestlog.read(path)
    for begin, body, end in guestlog.frames(lines, 'PEER'): ...

The serial console ends lines with \\r\\n and may double the \\r; a
program's output may hold bytes that are not UTF-8.  read() gives the
lines without any \\r, undecodable bytes replaced.
"""


def read(path):
    """The lines of the log at path; OSError if it cannot be read."""
    with open(path, 'rb') as f:
        data = f.read()
    return data.decode('utf-8', 'replace').replace('\r', '').splitlines()


def frames(lines, kind):
    """The output framed by "### KIND BEGIN ..." and "### KIND END ...".

    Yields (begin, body, end) in the log's order: begin and end are the
    words after BEGIN and END, body the lines between, without other
    "### KIND ..." lines (what the framed script says about the run,
    read by the caller from lines itself).  end is None for a frame the
    log ends inside: the boot stopped during that program.
    """
    begin_mark, end_mark = f'### {kind} BEGIN ', f'### {kind} END '
    other = f'### {kind} '
    begin, body = None, []
    for line in lines:
        if line.startswith(begin_mark):
            begin, body = line[len(begin_mark):].split(), []
        elif begin is None:
            continue
        elif line.startswith(end_mark):
            yield begin, body, line[len(end_mark):].split()
            begin = None
        elif not line.startswith(other):
            body.append(line)
    if begin is not None:
        yield begin, body, None
