#!/usr/bin/env python3
"""Runs the code blocks of Markdown files that are meant to be run, exactly as written.

    doctest.py [--source DIR] [--home] [--link NAME=PATH ...] [--runner LANG=COMMAND ...]
               [--strict] [--allow-none] [--keep] [--env NAME=VALUE ...] FILE.md ...

A block is run when its fence's info string has the word `run` after the language:

    ```sh run
    mentat --version
    ```

and its output is checked when the next block (blank lines between allowed) is a `text
output` block:

    ```text output
    mentat 0.1.0
    ```

A line `...` in an output block matches any number of lines; `...` at the end of a line
matches the rest of that line. Trailing spaces and a trailing newline do not count.

The `run` blocks of one file run in order in one bash session (`set -e -o pipefail`), so
what one block exports or creates the next one sees, as for a reader who types them in
order. The session starts in the source checkout (--source, default: this file's
checkout), or with --home in HOME. HOME is a new empty directory, so that `~` and `$HOME`
in a document are a sandbox; --link NAME=PATH puts a symbolic link NAME to PATH in it.

`sh` (`bash`, `shell`) blocks are bash. A block of another language, `python run` say,
is the standard input of its runner, a command run in the same session (`--runner
python="python3 -"`); a `run` block of a language without a runner is an error. With
--strict, every block of a language that has a runner (sh always has) must say `run` or
`no-run`, so that a new example cannot escape the test unnoticed.

A block that fails, or whose output differs, is reported with its file:line, and the run
exits 1; so does a run without any `run` block, unless --allow-none. --keep leaves the
HOME directory in place and prints it.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(\s*)(```+)\s*([A-Za-z0-9_+-]*)\s*(.*?)\s*$")


def blocks(path):
    """The fenced blocks of `path`: (line, language, words, text)."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang, rest = m.group(1), m.group(2), m.group(3), m.group(4)
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        out.append((start, lang, rest.split(), "\n".join(body)))
        i += 1
    return out


def matches(expected, actual):
    """True when `actual` (lines) matches `expected` (lines with `...` wildcards)."""
    if not expected:
        return not actual
    head = expected[0]
    if head == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    if not actual:
        return False
    if head.endswith("..."):
        ok = actual[0].startswith(head[:-3])
    else:
        ok = actual[0] == head
    return ok and matches(expected[1:], actual[1:])


def clean(text):
    return [l.rstrip() for l in text.rstrip("\n").split("\n")] if text.strip() else []


SHELLS = ("sh", "bash", "shell")


def run_file(path, source, env, keep, runners, strict, in_home, links):
    todo = []  # (line, script, expected output or None)
    bs = blocks(path)
    problems = []
    for k, (line, lang, words, text) in enumerate(bs):
        runnable = lang in SHELLS or lang in runners
        if "run" in words:
            if not runnable:
                problems.append("%s:%d: a `%s run` block, but no --runner %s=..." %
                                (path, line, lang, lang))
                continue
            expected = None
            if k + 1 < len(bs) and bs[k + 1][1] == "text" and "output" in bs[k + 1][2]:
                expected = bs[k + 1][3]
            if lang not in SHELLS:
                delim = "@@doctest-stdin-%d@@" % line
                text = "{ %s\n} <<'%s'\n%s\n%s" % (runners[lang], delim, text, delim)
            todo.append((line, text, expected))
        elif strict and runnable and "no-run" not in words:
            problems.append("%s:%d: a `%s` block that says neither `run` nor `no-run`" %
                            (path, line, lang))
    for p in problems:
        print("FAIL " + p)
    if problems:
        return len(todo), len(problems)
    if not todo:
        return 0, 0
    home = tempfile.mkdtemp(prefix="mentat-doctest-")
    marker = "@@doctest-%d@@" % os.getpid()
    script = ["set -e -o pipefail"]
    for n, (line, text, _) in enumerate(todo):
        script.append(text)
        script.append("echo %s%d" % (marker, n))
    e = dict(os.environ)
    e.update(env)
    e["HOME"] = home
    for name, target in links:
        os.symlink(os.path.abspath(target), os.path.join(home, name))
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=home if in_home else source,
                          env=e,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    outputs, current, done = [], [], 0
    for l in proc.stdout.split("\n"):
        if l.startswith(marker):
            outputs.append("\n".join(current))
            current = []
            done += 1
        else:
            current.append(l)
    failures = 0
    for n, (line, text, expected) in enumerate(todo):
        where = "%s:%d" % (path, line)
        if n >= done:
            tail = "\n".join(current[-30:])
            print("FAIL %s: the block failed (exit %d):\n%s\n--- its output:\n%s" %
                  (where, proc.returncode, text, tail))
            failures += 1
            break
        if expected is not None and not matches(clean(expected), clean(outputs[n])):
            print("FAIL %s: the output differs\n--- expected:\n%s\n--- got:\n%s" %
                  (where, expected.rstrip(), outputs[n].rstrip()))
            failures += 1
    if keep:
        print("doctest: HOME of %s kept in %s" % (path, home))
    else:
        shutil.rmtree(home, ignore_errors=True)
    return len(todo), failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--home", action="store_true")
    ap.add_argument("--allow-none", action="store_true")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--link", action="append", default=[])
    ap.add_argument("--runner", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    env = dict(kv.split("=", 1) for kv in a.env)
    runners = dict(kv.split("=", 1) for kv in a.runner)
    links = [kv.split("=", 1) for kv in a.link]
    total = failed = 0
    for f in a.files:
        n, bad = run_file(os.path.abspath(f), a.source, env, a.keep, runners, a.strict,
                          a.home, links)
        print("doctest: %s: %d blocks run, %d failed" % (f, n, bad))
        total += n
        failed += bad
    if total == 0 and not failed and not a.allow_none:
        print("doctest: no `run` blocks found")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
