#!/usr/bin/env python3
"""The mentat REPL driven through a pseudo-terminal (python's pty module).

Covers: banner and prompt, line editing (cursor movement, backspace), history within a
session and across sessions through the history file, multi-line input with the
continuation prompt, tab completion of commands, options and attribute idents, Ctrl-C at
the prompt (clears the input, keeps the shell), Ctrl-C during a long .import (stops it
between transactions, every committed transaction intact) and during a long query,
Ctrl-D and .exit, the exit status, colours only without NO_COLOR, the pager, the init file
(~/.mentatrc, --init FILE, -n).

Usage: repl_test.py --mentat PATH [-k NAME]
"""
import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
import traceback

MENTAT = None
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")

SCHEMA = ('.t [{:db/ident :person/name :db/valueType :db.type/string '
          ':db/cardinality :db.cardinality/one :db/unique :db.unique/identity} '
          '{:db/ident :person/age :db/valueType :db.type/long '
          ':db/cardinality :db.cardinality/one}]')


class Term:
    """A mentat process on a pseudo-terminal."""

    def __init__(self, args, env_extra=None, cwd=None):
        env = dict(os.environ)
        env.update({"TERM": "xterm", "INPUTRC": "/dev/null", "NO_COLOR": "1",
                    "COLUMNS": "120", "LINES": "40", "PAGER": ""})
        env.update(env_extra or {})
        env = {k: v for k, v in env.items() if v is not None}
        pid, fd = pty.fork()
        if pid == 0:
            try:
                if cwd:
                    os.chdir(cwd)
                os.execve(MENTAT, [MENTAT] + args, env)
            finally:
                os._exit(127)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.pid, self.fd, self.raw = pid, fd, b""
        self.status = None

    def text(self):
        """Everything printed so far, without escape sequences."""
        return ANSI.sub(b"", self.raw).decode("utf-8", "replace")

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        if not data:
            raise EOFError
        self.raw += data
        return True

    def expect(self, pattern, timeout=15, since=0):
        """Waits until the output after offset `since` matches the regex `pattern`."""
        deadline = time.time() + timeout
        while True:
            m = re.search(pattern, self.text()[since:])
            if m:
                return m
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {pattern!r}; output:\n{self.text()}")
            try:
                self._read(min(left, 0.5))
            except EOFError:
                m = re.search(pattern, self.text()[since:])
                if m:
                    return m
                raise AssertionError(f"EOF waiting for {pattern!r}; output:\n{self.text()}")

    def mark(self):
        return len(self.text())

    def send(self, s):
        os.write(self.fd, s.encode() if isinstance(s, str) else s)

    def line(self, s):
        self.send(s + "\r")

    def prompt(self, since=0):
        return self.expect(r"mentat> $", since=since)

    def wait(self, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                self._read(0.2)
            except EOFError:
                pass
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                os.close(self.fd)
                return self.status
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError(f"mentat did not exit; output:\n{self.text()}")


def interrupt_until(t, pattern, since, tries=20):
    """Sends Ctrl-C once a second until `pattern` shows up (the command may not have
    started yet on a loaded machine; a Ctrl-C at the prompt only clears the line)."""
    for _ in range(tries):
        t.send("\x03")
        try:
            return t.expect(pattern, since=since, timeout=1.5)
        except AssertionError:
            continue
    return t.expect(pattern, since=since, timeout=1)


def check(cond, msg, term=None):
    if not cond:
        raise AssertionError(msg + ("\noutput:\n" + term.text() if term else ""))


# ---- tests ----

def test_banner_help_and_ctrl_d(tmp):
    t = Term([os.path.join(tmp, "a.db")], {"MENTAT_HISTORY": ""})
    t.expect(r"mentat \d+\.\d+\.\d+")
    t.prompt()
    m = t.mark()
    t.line(".help")
    t.expect(r"\.transact, \.t EDN", since=m)
    t.prompt(since=m)
    t.send("\x04")  # Ctrl-D
    check(t.wait() == 0, "Ctrl-D should exit with status 0", t)


def test_pager(tmp):
    # The terminal has 40 rows: 60 rows of output go through $PAGER; .pager off prints
    # them directly; short output is never paged.
    t = Term([os.path.join(tmp, "p.db")], {"MENTAT_HISTORY": "", "PAGER": "sed s/^/PAGED:/"})
    t.prompt()
    numbers = ",".join(str(i) for i in range(60))
    query = '.q [:find ?x :in [?x ...]] {"inputs": [[%s]]}' % numbers
    m = t.mark()
    t.line(query)
    t.expect(r"PAGED:\(60 rows\)", since=m)
    t.prompt(since=m)
    m = t.mark()
    t.line(".q [:find ?x . :in ?x] {\"inputs\": [7]}")
    t.prompt(since=m)
    check("PAGED:" not in t.text()[m:], "short output is not paged", t)
    t.line(".pager off")
    m = t.mark()
    t.line(query)
    t.expect(r"\(60 rows\)", since=m)
    t.prompt(since=m)
    check("PAGED:" not in t.text()[m:], ".pager off prints directly", t)
    t.line(".exit")
    check(t.wait() == 0, "exit status 0", t)


def test_exit_status_after_error(tmp):
    t = Term([os.path.join(tmp, "a.db")], {"MENTAT_HISTORY": ""})
    t.prompt()
    m = t.mark()
    t.line(".frobnicate")
    t.expect(r"error: \.frobnicate: unknown command", since=m)
    t.prompt(since=m)
    t.line(".exit")
    check(t.wait() == 1, "a failed command makes the exit status 1", t)


def test_editing(tmp):
    t = Term([os.path.join(tmp, "a.db")], {"MENTAT_HISTORY": ""})
    t.prompt()
    m = t.mark()
    # Type "schemx", fix the last letter with backspace, go to the start (Ctrl-A) and
    # insert the dot, then move right and left with the arrow keys before Enter.
    t.send("schemx\x7fa")
    t.send("\x01.")
    t.send("\x1b[C\x1b[D")
    t.send("\r")
    t.expect(r"ident\s*\|\s*valueType", since=m)
    t.prompt(since=m)
    m = t.mark()
    t.line(SCHEMA)
    t.expect(r"datoms added, \d+ retracted", since=m)
    t.prompt(since=m)
    m = t.mark()
    # Ctrl-U kills the line, Ctrl-W a word.
    t.send("garbage garbage\x15.schema :person/nam\x17:person/age\r")
    t.expect(r":person/age\s*\|\s*:db.type/long", since=m)
    t.line(".exit")
    check(t.wait() == 0, "exit status 0", t)


def test_multiline_and_history(tmp):
    hist = os.path.join(tmp, "history")
    store = os.path.join(tmp, "m.db")
    t = Term([store], {"MENTAT_HISTORY": hist})
    t.prompt()
    m = t.mark()
    t.line(SCHEMA)
    t.prompt(since=m)
    m = t.mark()
    t.line('.t [{:person/name "Ada"')
    t.expect(r"\.\.\.> $", since=m)
    t.line(' :person/age 36}')
    t.expect(r"\.\.\.> $", since=m + 5)
    t.line(']')
    t.expect(r"datoms added, \d+ retracted", since=m)
    t.prompt(since=m)
    # Up arrow recalls the whole multi-line command as one entry: run it again.
    m = t.mark()
    t.send("\x1b[A\r")
    t.expect(r"datoms added, \d+ retracted", since=m)
    t.prompt(since=m)
    m = t.mark()
    t.line('.datoms :avet :person/name')
    t.expect(r'65536\s*\|\s*:person/name\s*\|\s*Ada', since=m)
    t.line(".exit")
    check(t.wait() == 0, "exit status 0", t)
    with open(hist) as f:
        entries = f.read().splitlines()
    check('.t [{:person/name "Ada" :person/age 36}]' in entries,
          f"history file should hold the flattened command: {entries}")
    # A new session sees the history: up, up recalls .datoms (before .exit).
    t = Term([store], {"MENTAT_HISTORY": hist})
    t.prompt()
    m = t.mark()
    t.send("\x1b[A\x1b[A\r")
    t.expect(r'65536\s*\|\s*:person/name\s*\|\s*Ada', since=m)
    t.prompt(since=m)
    t.send("\x04")
    check(t.wait() == 0, "exit status 0", t)


def test_completion(tmp):
    store = os.path.join(tmp, "c.db")
    subprocess.run([MENTAT, store, SCHEMA], check=True, capture_output=True)
    t = Term([store], {"MENTAT_HISTORY": ""})
    t.prompt()
    # A command name.
    m = t.mark()
    t.send(".sche\t")
    t.expect(r"\.schema $", since=m)
    # An attribute ident after the command.
    t.send(":person/na\t")
    t.expect(r"\.schema :person/name $", since=m)
    t.send("\r")
    t.expect(r":person/name\s*\|\s*:db.type/string", since=m)
    t.prompt(since=m)
    # Inside a query, after a bracket.
    m = t.mark()
    t.send(".q [:fi\t")
    t.expect(r"\[:find $", since=m)
    t.send("?a :where [?e :person/a\t")
    t.expect(r":person/age $", since=m)
    t.send("?a]]\r")
    t.prompt(since=m)
    # Several candidates: a double tab lists them.
    m = t.mark()
    t.send(".e\t\t")
    t.expect(r"\.entity\s+\.eval\s+\.exit\s+\.explain\s+\.export", since=m)
    t.send("\x15")
    # Option values.
    m = t.mark()
    t.send(".format j\t")
    t.expect(r"\.format json $", since=m)
    t.send("\r")
    t.prompt(since=m)
    m = t.mark()
    t.line(".format")
    t.expect(r"\njson\s", since=m)
    # Ctrl-D only once readline reads again: sent while the command runs, the terminal's
    # canonical mode takes it as an end-of-file that nobody reads, and it is lost.
    t.prompt(since=m)
    t.send("\x04")
    check(t.wait() == 0, "exit status 0", t)


def write_big_import(path, n):
    with open(path, "w") as f:
        for i in range(n):
            f.write('[{:person/name "p%d" :person/age %d}]\n' % (i, i))


def test_ctrl_c_at_prompt(tmp):
    t = Term([os.path.join(tmp, "a.db")], {"MENTAT_HISTORY": ""})
    t.prompt()
    m = t.mark()
    t.line(".q [:find ?e")  # incomplete: the continuation prompt
    t.expect(r"\.\.\.> $", since=m)
    t.send("\x03")  # Ctrl-C drops the pending input
    t.prompt(since=m)
    m = t.mark()
    t.send("some half-typed text\x03")
    t.prompt(since=m)
    m = t.mark()
    t.line(".format")
    t.expect(r"\ntable\s", since=m)
    t.prompt(since=m)
    t.line(".exit")
    check(t.wait() == 0, "Ctrl-C at the prompt is not a failure", t)


def test_ctrl_c_interrupts_import(tmp):
    store = os.path.join(tmp, "i.db")
    subprocess.run([MENTAT, store, SCHEMA], check=True, capture_output=True)
    big = os.path.join(tmp, "big.edn")
    n = 200000
    write_big_import(big, n)
    t = Term([store], {"MENTAT_HISTORY": ""})
    t.prompt()
    m = t.mark()
    t.line(".import " + big)
    # The progress bar shows up on a terminal; interrupt once it has.
    t.expect(r"datoms/s", since=m, timeout=60)
    t.send("\x03")
    t.expect(r"error: \.import: interrupted: .*committed (\d+) transactions", since=m, timeout=60)
    t.prompt(since=m)
    t.line(".exit")
    t.wait()
    # Every committed transaction is complete: as many ages as names.
    out = subprocess.run([MENTAT, "--format", "edn", store, ".stats"], check=True,
                         capture_output=True, text=True).stdout
    names = int(re.search(r":person/name (\d+)", out).group(1))
    ages = int(re.search(r":person/age (\d+)", out).group(1))
    check(0 < names < n, f"the import should have stopped part way: {names} of {n}")
    check(names == ages, f"a half-written transaction: {names} names, {ages} ages")


def test_batch_sigint_stops_import_cleanly(tmp):
    """Batch mode (no terminal): SIGINT stops .import between transactions, skips the
    remaining commands and exits with status 1."""
    store = os.path.join(tmp, "b.db")
    subprocess.run([MENTAT, store, SCHEMA], check=True, capture_output=True)
    big = os.path.join(tmp, "big.edn")
    n = 200000
    write_big_import(big, n)
    marker = os.path.join(tmp, "after.edn")
    with open(marker, "w") as f:
        f.write('[{:person/name "after"}]\n')
    p = subprocess.Popen([MENTAT, store, ".import " + big, ".import " + marker],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until the import is under way (the 10th transaction is visible).
    deadline = time.time() + 60
    while time.time() < deadline:
        probe = subprocess.run([MENTAT, store, '.datoms :avet :person/name "p10"'],
                               capture_output=True, text=True).stdout
        if "p10" in probe:
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    check(p.returncode == 1, f"exit status {p.returncode}, stderr: {err}")
    check(re.search(r"error: \.import: interrupted: .*committed \d+ transactions", err),
          f"stderr: {err}")
    out = subprocess.run([MENTAT, "--format", "edn", store, ".stats"], check=True,
                         capture_output=True, text=True).stdout
    names = int(re.search(r":person/name (\d+)", out).group(1))
    ages = int(re.search(r":person/age (\d+)", out).group(1))
    check(0 < names < n and names == ages, f"{names} names, {ages} ages of {n}")
    after = subprocess.run([MENTAT, store, '.datoms :avet :person/name "after"'],
                           capture_output=True, text=True).stdout
    check(after.strip() == "[]", f"the command after the interrupted one ran: {after}")


def test_ctrl_c_interrupts_query(tmp):
    store = os.path.join(tmp, "q.db")
    subprocess.run([MENTAT, store, SCHEMA], check=True, capture_output=True)
    data = os.path.join(tmp, "data.edn")
    with open(data, "w") as f:
        f.write("[" + " ".join('{:person/name "n%d" :person/age %d}' % (i, i)
                               for i in range(2000)) + "]\n")
    subprocess.run([MENTAT, store, ".import " + data], check=True, capture_output=True)
    probe = subprocess.run([MENTAT, store, "[:find ?a . :where [_ :person/age ?a]]"],
                           capture_output=True, text=True)
    if "not available" in probe.stderr:
        print("  (skipped: queries are not available in this build)")
        return
    t = Term([store], {"MENTAT_HISTORY": ""})
    t.prompt()
    m = t.mark()
    # 2000^3 combinations: runs far longer than the test waits.
    t.line(".q [:find (count ?a) :where [?a :person/age ?x] [?b :person/age ?y] "
           "[?c :person/age ?z] [(< ?x ?y)] [(< ?y ?z)]]")
    time.sleep(1.0)
    interrupt_until(t, r"error: \.q: .*interrupted", since=m)
    t.prompt(since=m)
    m = t.mark()
    t.line("[:find ?n . :where [?e :person/age 7] [?e :person/name ?n]]")
    t.expect(r"\bn7\b", since=m)
    t.line(".exit")
    check(t.wait() == 1, "the interrupted query counts as a failure", t)


def test_ctrl_c_interrupts_script(tmp):
    store = os.path.join(tmp, "s.db")
    subprocess.run([MENTAT, store, SCHEMA], check=True, capture_output=True)
    data = os.path.join(tmp, "data.edn")
    with open(data, "w") as f:
        f.write("[" + " ".join('{:person/name "n%d" :person/age %d}' % (i, i)
                               for i in range(2000)) + "]\n")
    subprocess.run([MENTAT, store, ".import " + data], check=True, capture_output=True)
    t = Term([store], {"MENTAT_HISTORY": ""})
    t.prompt()
    m = t.mark()
    t.line(".eval (def n (atom 0))")
    t.prompt(since=m)
    m = t.mark()
    # A script running a query that takes far longer than the test waits (few steps, so
    # no step limit): Ctrl-C stops the script and its query.
    t.line(".eval (swap! n inc) (mentat.store/q (mentat.store/db conn) "
           "'[:find (count ?a) . :where [?a :person/age ?x] [?b :person/age ?y] "
           "[?c :person/age ?z] [(< ?x ?y)] [(< ?y ?z)]])")
    time.sleep(1.0)
    m2 = interrupt_until(t, r"error: \.eval: ([^\n]*)", since=m)
    check("interrupt" in m2.group(1), f"expected an interrupt, got: {m2.group(1)}", t)
    t.prompt(since=m)
    m = t.mark()
    t.line(".eval (deref n)")  # the interpreter and its definitions are still there
    t.expect(r"\n1\s", since=m)
    t.line(".exit")
    t.wait()


def test_colors(tmp):
    store = os.path.join(tmp, "a.db")
    t = Term([store], {"MENTAT_HISTORY": "", "NO_COLOR": None})
    t.prompt()
    m = len(t.raw)
    t.line(".nonsense")
    t.expect(r"error:")
    t.prompt()
    check(b"\x1b[1;31merror:" in t.raw[m:], "errors are red on a terminal", t)
    t.line(".exit")
    t.wait()
    t = Term([store], {"MENTAT_HISTORY": "", "NO_COLOR": "1"})
    t.prompt()
    m = len(t.raw)
    t.line(".nonsense")
    t.expect(r"error:")
    t.prompt()
    check(b"\x1b[1;31m" not in t.raw[m:], "NO_COLOR turns colours off", t)
    t.line(".exit")
    t.wait()


def test_init_file(tmp):
    # ~/.mentatrc runs once the store is open, before the first prompt (here: JSON output
    # and a schema); --init FILE runs instead of it; -n skips it (the table format of a
    # terminal then).
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    with open(os.path.join(home, ".mentatrc"), "w") as f:
        f.write(".format json\n" + SCHEMA + "\n")
    other = os.path.join(tmp, "other.rc")
    with open(other, "w") as f:
        f.write(".format edn\n")
    store = os.path.join(tmp, "i.db")
    query = '.q [:find ?x ?y :in ?x ?y] {"inputs": [7, "a"]}'
    env = {"MENTAT_HISTORY": "", "HOME": home}

    t = Term([store], env)
    t.prompt()
    m = t.mark()
    t.line(query)
    t.expect(r'\[\{"x":7,"y":"a"\}\]', since=m)
    t.prompt(since=m)
    m = t.mark()
    t.line('.t [{:person/name "Ann"}]')  # the schema the init file transacted
    t.expect(r'":tx-id":\d+', since=m)
    t.prompt(since=m)
    t.line(".exit")
    check(t.wait() == 0, "exit status 0 after the init file", t)

    t = Term(["--init", other, store], env)
    t.prompt()
    m = t.mark()
    t.line(query)
    t.expect(r'\[\[7 "a"\]\]', since=m)
    t.prompt(since=m)
    t.line(".exit")
    t.wait()

    t = Term(["-n", store], env)
    t.prompt()
    m = t.mark()
    t.line(query)
    t.expect(r"\?x\s*\|\s*\?y", since=m)
    t.prompt(since=m)
    check('"x":7' not in t.text()[m:], "-n skips ~/.mentatrc", t)
    t.line(".exit")
    t.wait()


TESTS = [v for k, v in sorted(globals().items()) if k.startswith("test_")]


def main():
    global MENTAT
    ap = argparse.ArgumentParser()
    ap.add_argument("--mentat", required=True)
    ap.add_argument("-k", default="")
    args = ap.parse_args()
    MENTAT = os.path.abspath(args.mentat)
    failed = 0
    for test in TESTS:
        if args.k not in test.__name__:
            continue
        start = time.time()
        with tempfile.TemporaryDirectory(prefix="mentat-repl-") as tmp:
            try:
                test(tmp)
                print(f"ok   {test.__name__} ({time.time() - start:.1f}s)")
            except Exception:  # noqa: BLE001 - report every failure
                failed += 1
                print(f"FAIL {test.__name__}\n{traceback.format_exc()}")
    print(f"{len(TESTS)} tests, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
