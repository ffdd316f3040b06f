"""A small mentat shell: ``python3 -m mentat [STORE] [COMMAND ...]``.

With COMMANDs it runs them and exits; otherwise it reads commands from stdin (a terminal
or a pipe). A command continues over lines until its brackets balance.

Commands:

  .q QUERY [INPUT ...]   run a query (inputs are EDN values after the query)
  .t EDN                 transact; prints the report
  .with EDN              speculative transaction (nothing is written)
  .pull PATTERN EID      pull a pattern for an entity (id, ident or lookup ref)
  .entity EID            every attribute of an entity
  .datoms INDEX [C ...]  datoms of :eavt :aevt :avet :vaet with leading components C
  .explain QUERY         the plan of a query
  .help                  this text
  .exit                  leave (so does the end of input)

A bare ``[:find ...]`` or ``{:find ...}`` is a query, any other bare ``[...]`` or ``{...}``
a transaction (a lone map is transacted as ``[{...}]``). Results print one per line as EDN
(the rows of a relation, the values of a collection). An error prints ``error: MESSAGE``
on stdout and the shell goes on; the exit status is 0 (1 only when STORE cannot be opened
or the arguments are wrong). STORE defaults to a new in-memory store.
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, Iterator, List, Optional, TextIO, Tuple

from . import connect
from .connection import Connection, TxReport
from .edn import Edn, dumps, loads_all, loads_prefix
from .errors import Error, ParseError

_USAGE = "usage: python3 -m mentat [STORE] [COMMAND ...]  (STORE: a file, \"\" for memory)"


def _depth(text: str) -> int:
    """How many brackets of `text` are still open (strings, chars and comments skipped);
    negative when more close than open."""
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                return depth + 1  # an open string: keep reading
        elif c == "\\":
            i += 1  # a character literal: skip the next character
        elif c == ";":
            nl = text.find("\n", i)
            if nl < 0:
                break
            i = nl
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        i += 1
    return depth


def _commands(lines: Iterable[str]) -> Iterator[str]:
    """Groups input lines into commands: a command ends at a line where its brackets are
    balanced."""
    buf: List[str] = []
    for line in lines:
        line = line.rstrip("\r\n")
        if not buf and not line.strip():
            continue
        buf.append(line)
        text = "\n".join(buf)
        if _depth(text) <= 0:
            buf = []
            yield text.strip()
    if buf:
        text = "\n".join(buf).strip()
        if text:
            yield text


def _split_forms(text: str) -> List[Any]:
    return loads_all(text)


def _first_form(text: str) -> Tuple[str, str]:
    """(the text of the first EDN form of `text`, the rest); ("", "") for blank text."""
    text = text.strip()
    if not text:
        return "", ""
    _, rest = loads_prefix(text)
    return text[:len(text) - len(rest)], rest


class Shell:
    """Runs shell commands on a connection, writing results and errors to `out`."""

    def __init__(self, conn: Connection, out: TextIO) -> None:
        self.conn = conn
        self.out = out

    def emit(self, value: Any) -> None:
        self.out.write(_show(value) + "\n")

    def run(self, command: str) -> bool:
        """Runs one command; False when it was ``.exit``."""
        try:
            return self._run(command)
        except Error as e:
            self.out.write("error: %s\n" % e.message)
        except (TypeError, ValueError) as e:
            self.out.write("error: %s\n" % e)
        self.out.flush()
        return True

    def _run(self, command: str) -> bool:
        cmd = command.strip()
        if not cmd:
            return True
        if cmd.startswith("."):
            name, _, arg = cmd.partition(" ")
            if "\n" in name:
                name, _, rest = name.partition("\n")
                arg = rest + " " + arg
            arg = arg.strip()
            name = name.lower()
            if name in (".exit", ".quit"):
                return False
            if name in (".q", ".query"):
                self.query(arg)
            elif name in (".t", ".transact"):
                self.transact(arg)
            elif name == ".with":
                self.emit_report(self.conn.with_(arg))
            elif name == ".pull":
                pattern, rest = _first_form(arg)
                if not pattern or not rest.strip():
                    raise ValueError(".pull takes a PATTERN and an EID")
                self.emit(self.conn.pull(pattern, Edn(rest.strip())))
            elif name == ".entity":
                if not arg:
                    raise ValueError(".entity takes an EID")
                self.emit(self.conn.entity(Edn(arg)))
            elif name == ".datoms":
                index, rest = _first_form(arg)
                if not index:
                    raise ValueError(".datoms takes an INDEX")
                comps = [Edn(dumps(x)) for x in _split_forms(rest)] if rest.strip() else []
                for d in self.conn.datoms(index, *comps):
                    self.emit(list(d))
            elif name == ".explain":
                self.out.write(self.conn.explain(arg).rstrip("\n") + "\n")
            elif name == ".help":
                self.out.write(__doc__.split("Commands:", 1)[1].strip("\n") + "\n")
            else:
                raise ValueError("unknown command %s (.help lists them)" % name)
            return True
        if cmd.startswith("[:find") or cmd.startswith("{:find"):
            self.query(cmd)
        elif cmd.startswith("["):
            self.transact(cmd)
        elif cmd.startswith("{"):
            self.transact("[" + cmd + "]")
        else:
            raise ValueError("not a command, query or transaction: %s (.help lists the "
                             "commands)" % cmd.split("\n")[0][:60])
        return True

    def query(self, arg: str) -> None:
        if not arg:
            raise ValueError(".q takes a QUERY")
        try:
            query, rest = _first_form(arg)
        except ParseError:
            query, rest = arg, ""  # let mentat say what is wrong with it
        inputs = [Edn(dumps(x)) for x in _split_forms(rest)] if rest.strip() else []
        result = self.conn.q(query, *inputs)
        if isinstance(result, list):
            for row in result:
                self.emit(row)
        else:
            self.emit(result)

    def transact(self, arg: str) -> None:
        if not arg:
            raise ValueError(".t takes transaction data")
        self.emit_report(self.conn.transact(arg))

    def emit_report(self, report: TxReport) -> None:
        self.out.write(report.to_edn() + "\n")


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return dumps(list(value))
    return dumps(value)


def main(argv: Optional[List[str]] = None) -> int:
    """The shell's entry point; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE + "\n\n" + __doc__.split("\n\n", 1)[1])
        return 0
    path = args.pop(0) if args else ""
    try:
        conn = connect(path)
    except (Error, OSError) as e:
        sys.stderr.write("error: cannot open %r: %s\n" % (path, e))
        return 1
    out = sys.stdout
    shell = Shell(conn, out)
    try:
        if args:
            for a in args:
                if not shell.run(a):
                    break
                out.flush()
            return 0
        interactive = sys.stdin.isatty()
        if interactive:
            try:
                import readline  # noqa: F401 - line editing for input()
            except ImportError:
                pass
            lines: Iterable[str] = _prompted_lines()
        else:
            lines = sys.stdin
        for command in _commands(lines):
            if not shell.run(command):
                break
            out.flush()
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        conn.close()
        try:
            out.flush()
        except Exception:
            pass


def _prompted_lines() -> Iterator[str]:
    pending = ""
    while True:
        try:
            line = input("   ...> " if pending else "mentat> ")
        except EOFError:
            sys.stdout.write("\n")
            return
        pending = "" if _depth(pending + "\n" + line) <= 0 else pending + "\n" + line
        yield line


if __name__ == "__main__":
    sys.exit(main())
