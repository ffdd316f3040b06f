#!/usr/bin/env python3
"""Golden batch sessions for the mentat CLI.

Each test/cli/golden/*.golden file holds one or more runs of the binary, all sharing a
fresh temporary directory:

    # comments: lines before the first run
    $ mentat --format edn {DIR}/a.db .schema     <- the command line (shell words)
    <<<                                          <- standard input (optional)
    .t [...]
    >>>                                          <- expected standard output
    ...
    >>>2                                         <- expected standard error
    ...
    >>>= 1                                       <- expected exit status (default 0)

A section that is left out is not checked; an empty section must match empty output.
In the command line, {DIR} is the temporary directory (also the working directory) and
{DATA} is {DIR}/data, a copy of test/cli/data.
Before comparing, outputs are normalized: the temporary directory becomes {DIR}, #inst
literals become #inst "<INST>" (and JSON instants "<INST>", and the instant of .t's summary
line "<INST>"), timer lines become "time: <MS> ms".

Usage: run_golden.py --mentat PATH [--update] [FILES...]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(path):
    runs, cur, section = [], None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if line.startswith("$ mentat"):
            cur = {"cmd": line[2:], "stdin": None, "stdout": None, "stderr": None, "status": 0}
            runs.append(cur)
            section = None
            continue
        if cur is None:
            continue
        m = re.fullmatch(r">>>= *(\d+)", line)
        if m:
            cur["status"] = int(m.group(1))
            section = None
            continue
        marker = {"<<<": "stdin", ">>>": "stdout", ">>>2": "stderr"}.get(line)
        if marker:
            section = marker
            cur[section] = []
            continue
        if section:
            cur[section].append(line)
    return runs


def normalize(text, tmp):
    text = text.replace(tmp, "{DIR}")
    text = re.sub(r'#inst "[^"]*"', '#inst "<INST>"', text)
    text = re.sub(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"', '"<INST>"', text)
    text = re.sub(r"time: [0-9.]+ ms", "time: <MS> ms", text)
    # .t's summary line in the table format: "tx N (t T) at <instant>: ..."
    text = re.sub(r"\) at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z:", ") at <INST>:", text)
    return text


def run_file(path, mentat, update):
    runs = parse(path)
    failures = []
    with tempfile.TemporaryDirectory(prefix="mentat-golden-") as tmp:
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        env["MENTAT_HISTORY"] = ""
        env["HOME"] = tmp
        shutil.copytree(os.path.join(HERE, "data"), os.path.join(tmp, "data"))
        for i, run in enumerate(runs):
            cmd = run["cmd"].replace("{DATA}", os.path.join(tmp, "data")).replace("{DIR}", tmp)
            argv = shlex.split(cmd)
            argv[0] = mentat
            stdin = "\n".join(run["stdin"]) + "\n" if run["stdin"] is not None else ""
            p = subprocess.run(argv, input=stdin.encode(), capture_output=True, cwd=tmp,
                               env=env, timeout=120)
            out = normalize(p.stdout.decode("utf-8", "replace"), tmp)
            err = normalize(p.stderr.decode("utf-8", "replace"), tmp)
            run["actual"] = (out, err, p.returncode)
            for name, got in (("stdout", out), ("stderr", err)):
                want = run[name]
                if want is None and not update:
                    continue
                want_text = "\n".join(want) + "\n" if want else ""
                if got != want_text:
                    failures.append(f"{path}: run {i + 1} ({run['cmd']}): {name} differs\n"
                                    f"--- expected\n{want_text}--- got\n{got}---")
            if p.returncode != run["status"]:
                failures.append(f"{path}: run {i + 1} ({run['cmd']}): exit status "
                                f"{p.returncode}, expected {run['status']}\nstderr:\n{err}")
    if update:
        write(path, runs)
        return []
    return failures


def write(path, runs):
    """Rewrites the expected sections of `path` from the actual outputs."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out, i, r = [], 0, -1
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ mentat"):
            r += 1
            out.append(line)
            i += 1
            if i < len(lines) and lines[i] == "<<<":
                out.append("<<<")
                i += 1
                while i < len(lines) and not lines[i].startswith((">>>", "$ mentat")):
                    out.append(lines[i])
                    i += 1
            while i < len(lines) and not lines[i].startswith("$ mentat"):
                i += 1
            o, e, s = runs[r]["actual"]
            if o:
                out.append(">>>")
                out.extend(o.rstrip("\n").split("\n") if o.strip("\n") else [])
            if e:
                out.append(">>>2")
                out.extend(e.rstrip("\n").split("\n"))
            if s != 0:
                out.append(f">>>= {s}")
            continue
        out.append(line)
        i += 1
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mentat", required=True)
    ap.add_argument("--update", action="store_true", help="rewrite the expected outputs")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(
        os.path.join(HERE, "golden", f) for f in os.listdir(os.path.join(HERE, "golden"))
        if f.endswith(".golden"))
    failures = []
    for f in files:
        failures += run_file(f, os.path.abspath(args.mentat), args.update)
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{len(files)} golden files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
