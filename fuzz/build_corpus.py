#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets (fuzz/README.md).

Sources: the bodies of every record in test/data/**/*.test (transactions, queries, pull
patterns, expected results, options JSON), the scripts in test/script/*.clj, the bad-input
corpus in
test/reliability/corpus/*.txt, and the checked-in seeds in fuzz/seeds/<target>/.

    build_corpus.py --out DIR      writes DIR/<target>/<sha1> files
"""
import argparse
import hashlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["edn_fuzz", "tx_fuzz", "query_fuzz", "pull_fuzz", "options_fuzz", "cli_fuzz",
           "script_fuzz"]


def substitute(text):
    text = text.replace("{{tx}}", "268435457").replace("{{tx-1}}", "268435456")
    return re.sub(r"\{\{[^}]*\}\}", "65536", text)


def parse_test_file(path):
    """Yields (header, body, expected) for each record of a .test file."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            i += 1
            continue
        header = line
        i += 1
        body, expected = [], []
        while i < len(lines) and lines[i].strip() and lines[i] != "----":
            body.append(lines[i])
            i += 1
        if i < len(lines) and lines[i] == "----":
            i += 1
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i])
                i += 1
        yield header, substitute("\n".join(body)), substitute("\n".join(expected))


def options_json(header):
    """The options JSON at the end of a query header, if any."""
    for m in re.finditer(r"\{", header):
        candidate = header[m.start():]
        try:
            json.loads(candidate)
            return candidate
        except ValueError:
            continue
    return None


def parse_bad_corpus(path):
    records, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace").read().split("\n"):
        if line.startswith("=== "):
            cur = []
            records.append(cur)
        elif cur is not None:
            cur.append(line)
    return ["\n".join(r).rstrip("\n") for r in records]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    seeds = {t: set() for t in TARGETS}

    def add(target, data):
        if isinstance(data, str):
            data = data.encode("utf-8", errors="replace")
        if data:
            seeds[target].add(data)

    for dirpath, _, files in os.walk(os.path.join(ROOT, "test", "data")):
        for f in sorted(files):
            if not f.endswith(".test"):
                continue
            for header, body, expected in parse_test_file(os.path.join(dirpath, f)):
                kind = header.split()[0]
                add("edn_fuzz", body)
                if expected:
                    add("edn_fuzz", expected)
                if kind == "transact":
                    add("tx_fuzz", b"\x00" + body.encode())
                    add("tx_fuzz", b"\x01" + body.encode())
                    add("cli_fuzz", ".t " + body.replace("\n", " "))
                elif kind in ("query", "explain-contains"):
                    add("query_fuzz", b"\x00" + body.encode())
                    add("query_fuzz", b"\x13" + body.encode())
                    add("cli_fuzz", ".q " + body.replace("\n", " "))
                    opts = options_json(header)
                    if opts:
                        add("options_fuzz", body.replace("\n", " ") + "\n" + opts)
                    else:
                        add("options_fuzz", body.replace("\n", " ") + "\n{}")
                elif kind == "pull":
                    add("pull_fuzz", b"\x00" + body.encode())
                    add("pull_fuzz", b"\x83" + body.encode())
                elif kind == "datoms":
                    add("cli_fuzz", ".datoms " + body.replace("\n", " "))

    bad = os.path.join(ROOT, "test", "reliability", "corpus")
    mapping = {"edn.txt": "edn_fuzz", "tx.txt": "tx_fuzz", "query.txt": "query_fuzz",
               "pull.txt": "pull_fuzz", "options.txt": "options_fuzz", "cli.txt": "cli_fuzz",
               "script.txt": "script_fuzz"}
    for name, target in mapping.items():
        path = os.path.join(bad, name)
        if not os.path.exists(path):
            continue
        for body in parse_bad_corpus(path):
            prefix = b"\x01" if target in ("tx_fuzz", "query_fuzz", "pull_fuzz") else b""
            add(target, prefix + body.encode("utf-8", errors="replace"))

    # Scripts: the script test suite's programs.
    script_dir = os.path.join(ROOT, "test", "script")
    if os.path.isdir(script_dir):
        for f in sorted(os.listdir(script_dir)):
            if f.endswith(".clj"):
                add("script_fuzz", open(os.path.join(script_dir, f), "rb").read())

    for target in TARGETS:
        d = os.path.join(ROOT, "fuzz", "seeds", target)
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                add(target, open(os.path.join(d, f), "rb").read())

    for target, items in seeds.items():
        d = os.path.join(args.out, target)
        os.makedirs(d, exist_ok=True)
        for data in items:
            name = hashlib.sha1(data).hexdigest()
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print(f"{target}: {len(items)} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
