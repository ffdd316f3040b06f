#!/usr/bin/env python3
"""Runs the code blocks of Markdown files that are meant to be run, exactly as written.

    doctest.py [--source DIR] [--keep] [--env NAME=VALUE ...] FILE.md ...

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

The `sh run` blocks of one file run in order in one bash session (`set -e -o pipefail`),
so what one block exports or creates the next one sees, as for a reader who types them
in order; it starts in the source checkout (--source, default: this file's checkout),
with HOME a new empty directory, so that `~` and `$HOME` in a document are a sandbox. A
block that fails, or whose output differs, is reported with its file:line, and the run
exits 1. --keep leaves the HOME directory in place and prints it.
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


def run_file(path, source, env, keep):
    todo = []  # (line, script, expected output or None)
    bs = blocks(path)
    for k, (line, lang, words, text) in enumerate(bs):
        if lang in ("sh", "bash", "shell") and "run" in words:
            expected = None
            if k + 1 < len(bs) and bs[k + 1][1] == "text" and "output" in bs[k + 1][2]:
                expected = bs[k + 1][3]
            todo.append((line, text, expected))
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
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=source, env=e,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
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
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    env = dict(kv.split("=", 1) for kv in a.env)
    total = failed = 0
    for f in a.files:
        n, bad = run_file(os.path.abspath(f), a.source, env, a.keep)
        print("doctest: %s: %d blocks run, %d failed" % (f, n, bad))
        total += n
        failed += bad
    if total == 0:
        print("doctest: no `sh run` blocks found")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
