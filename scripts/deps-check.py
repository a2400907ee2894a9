#!/usr/bin/env python3
"""Every command the project's scripts run comes from a package that
scripts/deps.sh names.

    scripts/deps-check.py [-v]

Collects the words in command position of the host-side shell scripts
(scripts/*.sh, testsuite/*.sh, .ci/run), of the Makefile's recipes and
the programs that the Python scripts start with subprocess, finds each
on PATH and maps it to its Debian package with dpkg -S.  It fails,
naming the command, the script and the package, when that package is
neither named in scripts/deps.sh nor one that every Debian system has.

The package must be named there, or be a direct dependency of one that
is (groff's programs are in groff-base, python3's in python3-minimal):
a package only pulled in further down (binutils by gcc-12 by gcc) is
not enough, since deps.sh says what the scripts need and another
package's dependencies may change under it.  The packages every system has are
those of priority "required" (dpkg, coreutils, grep, sed, findutils,
diffutils, util-linux, mawk...): debootstrap installs them even in its
smallest variant, and Debian never removes them from a system that
apt manages.  The guest's scripts (testsuite/guest, testsuite/peers,
bench/guest.sh) run busybox in the guest and are not checked.

A word that names no program on PATH is a function of the script, a
shell builtin or keyword, or text of a string that the tokenizer took
for a command; it is skipped, so that the check has no false alarms;
-v lists those words.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Words that are no program though PATH may have one of that name: the
# shell's keywords and builtins (POSIX and dash), which a script never
# runs from /usr/bin.
SHELL_WORDS = set("""
if then else elif fi case esac for while until do done in function
select time ! { } [[ ]] . : [ alias bg break cd command continue echo
eval exec exit export false fc fg getopts hash jobs kill local printf
pwd read readonly return set shift test times trap true type ulimit
umask unalias unset wait
""".split())

# Commands that run another command: the word after their options is
# the command (nice -n 10 make, timeout 20 qemu..., env A=B prog).
WRAPPERS = {"env", "nice", "timeout", "exec", "sudo", "command", "nohup",
            "xargs", "flock", "chroot", "unshare"}

SEPARATORS = re.compile(r"\|\||&&|[;|&`]|\$\(|\(|\)|\{|\}|\bthen\b|\bdo\b|\belse\b|\bif\b|\bwhile\b|\buntil\b|!")


def shell_lines(text):
    """The script's lines as the shell reads them: here-documents,
    comments and the text of single-quoted strings (awk and sed
    programs, sh -c scripts run elsewhere) dropped, continuations
    joined."""
    kept = []
    heredoc = None
    for raw in text.split("\n"):
        if heredoc:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", raw)
        if m:
            heredoc = m.group(1)
        kept.append(raw)
    t = "\n".join(kept)
    out = []
    quote = None
    i = 0
    while i < len(t):
        c = t[i]
        if quote == "'":
            if c == "'":
                quote = None
        elif c == "\\" and i + 1 < len(t):
            out.append(" " if t[i + 1] == "\n" else t[i:i + 2])
            i += 1
        elif quote == '"':
            if c == '"':
                quote = None
            out.append(c)
        elif c == "'":
            quote = c
            out.append(" Q ")
        elif c == '"':
            quote = c
            out.append(c)
        elif c == "#" and (not out or out[-1][-1:] in " \t\n;("):
            j = t.find("\n", i)
            i = len(t) if j < 0 else j
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out).split("\n")


def first_word(segment):
    """The command words of one segment of a line: its command, and
    what a wrapper (nice, timeout, env) runs."""
    words = segment.split()
    i = 0
    while i < len(words):
        w = words[i].lstrip("@-") if i == 0 else words[i]
        if re.match(r"^\w+=", w):          # VAR=value before the command
            i += 1
            continue
        if w in WRAPPERS:
            # The wrapper is a command too; then what it runs.
            yield w
            i += 1
            while i < len(words) and (words[i].startswith("-") or
                                      re.match(r"^[\w.]+=|^[0-9.]+[smhd]?$", words[i])):
                if words[i] in ("-n", "-s", "-k", "-u", "-g"):
                    i += 1
                i += 1
            continue
        yield w
        return


def shell_commands(text):
    functions = set(re.findall(r"^\s*([\w-]+)\s*\(\)", text, re.M))
    for line in shell_lines(text):
        for seg in SEPARATORS.split(line):
            for w in first_word(seg):
                if re.match(r"^[a-z][\w.+-]*$", w) and w not in functions:
                    yield w


def makefile_commands(text):
    recipe = []
    for line in text.split("\n"):
        if line.startswith("\t"):
            recipe.append(line[1:].lstrip("@-").replace("$$", "$"))
    return shell_commands("\n".join(recipe))


def python_commands(text):
    for m in re.finditer(r"subprocess\.\w+\(\s*\[\s*['\"]([\w.+-]+)['\"]", text):
        yield m.group(1)


def deps_packages():
    text = open(os.path.join(TOP, "scripts/deps.sh")).read()
    names = set()
    for m in re.finditer(r'packages="(?:\$packages\s+)?([^"]*)"', text):
        names.update(m.group(1).split())
    return names


def direct_dependencies(names):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Depends}, ${Pre-Depends}\n"] + sorted(names),
                         capture_output=True, text=True).stdout
    deps = set()
    for item in re.split(r"[,|\n]", out):
        item = re.sub(r"\(.*?\)|:\w+", "", item).strip()
        if item:
            deps.add(item)
    return deps


def required_packages():
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Priority} ${Essential}\n"],
                         capture_output=True, text=True).stdout
    req = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and (f[1] == "required" or f[-1] == "yes"):
            req.add(f[0].split(":")[0])
    return req


def package_of(path):
    for p in (path, os.path.realpath(path)):
        for cand in (p, "/usr" + p if not p.startswith("/usr/") else p[4:]):
            r = subprocess.run(["dpkg", "-S", cand], capture_output=True, text=True)
            if r.returncode == 0:
                line = r.stdout.splitlines()[-1]
                if line.startswith("diversion"):
                    continue
                return line.split(":")[0].split(",")[0].strip()
    return None


def main():
    verbose = "-v" in sys.argv[1:]
    os.chdir(TOP)
    sources = {}
    for f in sorted(glob.glob("scripts/*.sh") + glob.glob("testsuite/*.sh") + [".ci/run"]):
        if os.path.isfile(f):
            for c in shell_commands(open(f).read()):
                sources.setdefault(c, set()).add(f)
    for c in makefile_commands(open("Makefile").read()):
        sources.setdefault(c, set()).add("Makefile")
    for f in sorted(glob.glob("scripts/*.py") + glob.glob("testsuite/*.py") +
                    glob.glob("testsuite/*/*.py")):
        for c in python_commands(open(f).read()):
            sources.setdefault(c, set()).add(f)

    named = deps_packages()
    named |= direct_dependencies(named)
    required = required_packages()
    bad = 0
    skipped = []
    for cmd in sorted(sources):
        if cmd in SHELL_WORDS:
            continue
        # Where Debian's packages put programs: this machine may have
        # others (a python3 of its own in /usr/local or $HOME) that a
        # fresh system does not.
        path = shutil.which(cmd, path="/usr/sbin:/usr/bin:/sbin:/bin")
        if not path:
            other = shutil.which(cmd)
            if other:
                print(f"{cmd} ({other}, run by {', '.join(sorted(sources[cmd]))}): "
                      "not from a Debian package")
                bad += 1
            else:
                skipped.append(cmd)
            continue
        pkg = package_of(path)
        where = ", ".join(sorted(sources[cmd]))
        if pkg is None:
            print(f"{cmd} ({path}, run by {where}): no package provides it")
            bad += 1
        elif pkg not in named and pkg not in required:
            print(f"{cmd} ({path}, run by {where}): package {pkg} is not in scripts/deps.sh")
            bad += 1
        elif verbose:
            print(f"ok {cmd}: {pkg}")
    if verbose:
        print("not on PATH (functions, strings):", " ".join(skipped))
    print(f"deps-check: {len(sources)} commands, {bad} without a package of scripts/deps.sh")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
