#!/usr/bin/env python3
"""Writes mentat(1), the CLI's man page, from the CLI's own `--help` and `.help COMMAND`.

    manpage.py MENTAT_BINARY VERSION OUT_FILE

The sections follow the help text: SYNOPSIS (the usage lines), DESCRIPTION (the paragraphs
before "options:"), OPTIONS, COMMANDS (each command with what `.help COMMAND` says of it),
EXIT STATUS and ENVIRONMENT. So the man page lists exactly the options and commands the
binary has.
"""
import re
import subprocess
import sys


def roff(text):
    """Escapes text for roff: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def run(binary, *args):
    out = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        sys.exit("manpage.py: %s %s failed: %s" % (binary, " ".join(args), out.stderr))
    return out.stdout


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, version, out_file = sys.argv[1:]
    lines = run(binary, "--help").splitlines()
    usage, description, options, commands, tail = [], [], [], [], []
    section = "usage"
    for line in lines:
        if section == "usage":
            if not line.strip():
                section = "description"
                continue
            usage.append(re.sub(r"^(usage:)?\s+", "", line))
        elif section == "description":
            if line.strip() == "options:":
                section = "options"
            else:
                description.append(line)
        elif section == "options":
            if not line.strip():
                section = "tail"
            else:
                options.append(line)
        elif section == "tail":
            if line.startswith("commands"):
                section = "commands"
            else:
                tail.append(line)
        else:
            commands.append(line)

    out = [
        '.TH MENTAT 1 "" "mentat %s" "User Commands"' % version,
        ".SH NAME",
        "mentat \\- the command-line shell of mentat, an embedded Datomic-style database",
        ".SH SYNOPSIS",
    ]
    for u in usage:
        out += [".nf", roff(u), ".fi"]
    out.append(".SH DESCRIPTION")
    for para in "\n".join(description).split("\n\n"):
        if para.strip():
            out += [".PP", roff(" ".join(para.split()))]
    out.append(".SH OPTIONS")
    # "  -f, --file FILE run the commands in FILE": the flag part ends at two spaces, or
    # where the description starts after the longest flag column.
    entries = []
    for line in options:
        m = re.match(r"^  (\S.*?)(?:\s{2,}|\s(?=[a-z(]))(.*)$", line)
        if m and line.startswith("  ") and not line.startswith("   "):
            entries.append([m.group(1).strip(), m.group(2).strip()])
        elif entries:
            entries[-1][1] += " " + line.strip()
    for flag, text in entries:
        out += [".TP", "\\fB%s\\fR" % roff(flag), roff(text)]
    tail_text = "\n".join(tail)
    exit_status = re.search(r"Exit status:(.*?)(?:\n\S|\Z)", tail_text, re.S)
    environment = re.search(r"Environment:(.*?)(?:\n\n|\Z)", tail_text, re.S)
    rest = tail_text
    for m in (exit_status, environment):
        if m:
            rest = rest.replace(m.group(0), "")
    for para in rest.split("\n\n"):
        if para.strip():
            out += [".PP", roff(" ".join(para.split()))]
    out.append(".SH COMMANDS")
    out.append(".PP")
    out.append(roff("Commands start with a dot; in the shell, .help COMMAND describes one."))
    for line in commands:
        m = re.match(r"^  (\S.*?)\s{2,}(.*)$", line)
        if not m:
            continue
        name, summary = m.group(1), m.group(2)
        first = name.split(",")[0].split()[0]
        detail = run(binary, ".help " + first).strip()
        out += [".TP", "\\fB%s\\fR" % roff(name), roff(summary)]
        # The first two lines repeat the usage and the summary.
        body = [l for l in detail.splitlines()[2:] if l.strip()]
        if body:
            out += [".IP", roff(" ".join(" ".join(body).split()))]
    if exit_status:
        out += [".SH EXIT STATUS", roff(" ".join(exit_status.group(1).split()))]
    if environment:
        out += [".SH ENVIRONMENT", roff(" ".join(environment.group(1).split()))]
    out += [".SH SEE ALSO", "sqlite3(1), psql(1)"]
    with open(out_file, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
