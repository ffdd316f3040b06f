#!/usr/bin/env python3
"""The layers of src/ are enforced by the build: this checks that they are.

For every target compiled through an include view (cmake/layers.cmake), and every subsystem
of src/, it compiles a one-line file that includes one of that subsystem's headers with the
target's own compile command (syntax only). The include must compile exactly when the
subsystem is one the target declares (src/CMakeLists.txt's mentat_subsystem DEPS, or a
mentat_include_view call), directly or through the subsystems it declares: an include that
runs back up the layers, or sideways, must fail to build.

  check_layers.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def declarations(source):
    """{subsystem: [deps]} in declaration order, and {target: [subsystems]}."""
    subsystems, views = {}, {}
    text = open(os.path.join(source, "src", "CMakeLists.txt")).read()
    for m in re.finditer(r"^mentat_subsystem\((\w+)(?:\s+CORE_ONLY)?(?:\s+DEPS\s+([\w ]+))?\)", text, re.M):
        deps = m.group(2).split() if m.group(2) else []
        for d in deps:
            if d not in subsystems:
                sys.exit(f"src/CMakeLists.txt: {m.group(1)} declares {d} before it is declared")
        subsystems[m.group(1)] = deps
    for root, _, files in os.walk(source):
        if "node_modules" in root or os.path.basename(root).startswith("build"):
            continue
        for f in files:
            if f != "CMakeLists.txt":
                continue
            for m in re.finditer(r"^\s*mentat_include_view\((\w+)\s+([\w ]+)\)",
                                 open(os.path.join(root, f)).read(), re.M):
                views[m.group(1)] = m.group(2).split()
    return subsystems, views


def closure(names, subsystems):
    seen, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(subsystems[n])
    return seen


def probe_header(source, name):
    headers = sorted(f for f in os.listdir(os.path.join(source, "src", name)) if f.endswith(".h"))
    if not headers:
        sys.exit(f"src/{name} has no header to probe")
    return f"{name}/{headers[0]}"


def main():
    build, source = sys.argv[1], sys.argv[2]
    subsystems, views = declarations(source)
    # (mentat_sqlite_<name>, the extension's second build, is made by the same function
    # with the same view.)
    for name in subsystems:
        views[f"mentat_{name}"] = [name]
    commands = {}
    for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
        m = re.search(r"layers/(\w+)(?:\s|$)", entry["command"])
        if m and m.group(1) not in commands:
            commands[m.group(1)] = entry
    missing = sorted(t for t in views if t not in commands)
    if missing:
        sys.exit("no compile command found for " + ", ".join(missing))
    tmp = tempfile.mkdtemp(prefix="mentat-layers-")
    jobs = []
    # A subsystem with no header of its own (capi: its API is include/mentat/mentat.h)
    # offers nothing to include, so there is no include of it to check.
    probed = [n for n in subsystems
              if any(f.endswith(".h") for f in os.listdir(os.path.join(source, "src", n)))]
    for target, names in sorted(views.items()):
        allowed = closure(names, subsystems)
        for name in probed:
            jobs.append((target, name, name in allowed))

    def run(job):
        target, name, allowed = job
        entry = commands[target]
        probe = os.path.join(tmp, f"{target}__{name}.cc")
        with open(probe, "w") as f:
            f.write(f'#include "{probe_header(source, name)}"\n')
        args, cleaned, i = shlex.split(entry["command"]), [], 0
        while i < len(args):
            if args[i] in ("-o", "-MT", "-MF", "-MQ"):
                i += 2
                continue
            if args[i] not in ("-c", "-MD", entry["file"]):
                cleaned.append(args[i])
            i += 1
        r = subprocess.run(cleaned + ["-fsyntax-only", probe], cwd=entry["directory"],
                           capture_output=True, text=True)
        compiled = r.returncode == 0
        if compiled == allowed and (compiled or "No such file" in r.stderr):
            return None
        if allowed:
            return f"{target}: including {probe_header(source, name)} should compile and does not:\n{r.stderr[:2000]}"
        if not compiled:
            return f"{target}: including {probe_header(source, name)} fails, not for want of the file:\n{r.stderr[:2000]}"
        return f"{target}: including {probe_header(source, name)} compiles, but {name} is not a layer it declares"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(run, jobs) if f]
    for f in failures:
        print(f)
    print(f"layers: {len(jobs)} probes over {len(views)} targets, {len(failures)} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
