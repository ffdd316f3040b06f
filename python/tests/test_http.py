"""Tests of mentat.connect("http://...") against a real `mentat serve`.

The server binary is $MENTAT_BINARY, else the source tree's build/mentat (../../build/mentat
from this file); the tests fail (they do not skip) when it is missing. Each test class
starts its own server on a new store in a temporary directory, on 127.0.0.1 port 0, and
stops it with SIGTERM.

Run:
    PYTHONPATH=/work/main/python python3 -m unittest discover -s /work/main/python/tests \\
        -t /work/main/python
"""

from __future__ import annotations

import datetime as dt
import http.server
import os
import re
import shutil
import signal
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

import mentat  # noqa: E402
from mentat import Edn, Keyword as K, Symbol  # noqa: E402
from tests import test_mentat as native  # noqa: E402  (data only: SCHEMA, people, ...)

UTC = dt.timezone.utc
RW = "rw-token-0123456789"
RO = "ro-token-0123456789"
SLOW = native.ThreadsTest.SLOW  # 27 million rows


def server_binary() -> str:
    path = os.environ.get("MENTAT_BINARY") or os.path.normpath(
        os.path.join(HERE, "..", "..", "build", "mentat"))
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise AssertionError("the mentat server binary %s does not exist or is not executable "
                             "(build it, or set MENTAT_BINARY)" % path)
    return path


class Server:
    """A `mentat serve` process on a temporary store."""

    def __init__(self, *extra: str, tokens: Optional[Dict[str, str]] = None,
                 store: Optional[str] = None) -> None:
        binary = server_binary()
        self.dir = tempfile.mkdtemp(prefix="mentat-http-test-")
        self.store = store or os.path.join(self.dir, "store.db")
        tokens_file = os.path.join(self.dir, "tokens")
        with open(tokens_file, "w") as f:
            f.write("# test tokens\n")
            for token, kind in (tokens or {RW: "read-write", RO: "read-only"}).items():
                f.write("%s %s\n" % (token, kind))
        self.proc = subprocess.Popen(
            [binary, "serve", self.store, "--listen", "127.0.0.1:0", "--tokens",
             tokens_file, "--access-log", "", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        self.lines: List[str] = []
        first = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.lines.append(line.rstrip("\n"))
                first.set()
            first.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        m = None
        if first.wait(30) and self.lines:
            m = re.match(r"mentat serve: listening on (https?)://127\.0\.0\.1:(\d+) ",
                         self.lines[0])
        if not m:
            self.proc.kill()
            self.stop()
            raise AssertionError("mentat serve did not start as expected: %r" % self.lines)
        self.scheme, self.port = m.group(1), int(m.group(2))
        self.url = "%s://127.0.0.1:%d" % (self.scheme, self.port)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait(30)
        self._reader.join(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc


def stop_server(server: Server) -> None:
    """Stops `server` (SIGTERM); it must exit 0 after saying it stopped."""
    rc = server.stop()
    if rc != 0 or "mentat serve: stopped" not in server.lines:
        raise AssertionError("mentat serve exited with %d: %r" % (rc, server.lines))


class ServerTest(unittest.TestCase):
    """A server per class (SERVER_ARGS), a read-write connection to it (cls.conn)."""

    SERVER_ARGS: Sequence[str] = ()
    server: Server
    conn: mentat.Connection

    @classmethod
    def setUpClass(cls) -> None:
        # Class cleanups run even when a setUpClass fails: the server never outlives us.
        cls.server = Server(*cls.SERVER_ARGS)
        cls.addClassCleanup(stop_server, cls.server)
        cls.conn = mentat.connect(cls.server.url, token=RW)
        cls.addClassCleanup(cls.conn.close)

    def connect(self, token: Optional[str] = RW, **kw: Any) -> mentat.Connection:
        conn = mentat.connect(self.server.url, token=token, **kw)
        self.addCleanup(conn.close)
        return conn


# ---------------------------------------------------------------------------------------

class HttpConnectTest(ServerTest):
    def test_connect_health_and_repr(self) -> None:
        conn = self.connect()
        self.assertIsInstance(conn, mentat.Connection)
        self.assertEqual(conn.path, self.server.url)
        self.assertFalse(conn.closed)
        self.assertIn(self.server.url, repr(conn))
        self.assertIn(self.server.url, repr(conn.db()))
        t0 = conn.db().basis_t
        self.assertEqual(conn.last_tx(), 0x10000000 + t0)
        r = conn.transact(native.SCHEMA)
        self.assertEqual(conn.last_tx(), r.tx_id)
        self.assertEqual(conn.db().basis_t, t0 + 1)
        # /health needs no token: connect() succeeds without one
        with mentat.connect(self.server.url) as anon:
            self.assertFalse(anon.closed)

    def test_close(self) -> None:
        conn = mentat.connect(self.server.url, token=RW)
        self.assertIsNone(conn.q("[:find ?e . :where [?e :db/ident :no/such-ident]]"))
        db = conn.db()
        prepared = conn.prepare("[:find ?e . :where [?e :db/ident :db/ident]]")
        conn.close()
        self.assertTrue(conn.closed)
        self.assertIn("closed", repr(conn))
        for call in (lambda: conn.q("[:find ?e :where [?e :db/ident]]"),
                     lambda: conn.transact("[]"), conn.db, conn.last_tx,
                     lambda: conn.pull("[*]", 1)):
            with self.assertRaises(mentat.InvalidArgument) as cm:
                call()
            self.assertIn("closed", str(cm.exception))
        conn.close()  # twice: nothing
        # Db values and prepared queries taken before stay usable (a new connection)
        ident = db.q("[:find ?e . :where [?e :db/ident :db/ident]]")
        self.assertIsInstance(ident, int)
        self.assertEqual(prepared.run(), ident)
        with mentat.connect(self.server.url, token=RW) as c2:
            self.assertEqual(c2.q("[:find ?e . :where [?e :db/ident :db/ident]]"), ident)
        self.assertTrue(c2.closed)

    def test_bad_arguments(self) -> None:
        url = self.server.url
        for kw in ({"read_only": True}, {"busy_timeout": 1}, {"replicas": ["a"]},
                   {"synchronous": "full"}):
            with self.subTest(kw=kw), self.assertRaises(mentat.InvalidArgument) as cm:
                mentat.connect(url, token=RW, **kw)
            self.assertIn(next(iter(kw)), str(cm.exception))
        with self.assertRaises(mentat.InvalidArgument):
            mentat.connect(url, token=RW, cafile="/nonexistent.pem")  # http: no TLS options
        with self.assertRaises(mentat.InvalidArgument):
            mentat.connect("http://user:%s@127.0.0.1:%d" % (RW, self.server.port))
        with self.assertRaises(mentat.InvalidArgument):
            mentat.connect(url + "/?x=1", token=RW)
        with self.assertRaises(mentat.InvalidArgument):
            mentat.connect("http://127.0.0.1:notaport")
        with self.assertRaises(mentat.InvalidArgument):
            mentat.connect(url, token="two\nlines")
        with self.assertRaises(ValueError):
            mentat.connect(url, token=RW, http_timeout=-1)
        # HTTP options with a store path
        for kw in ({"token": RW}, {"cafile": "x.pem"}, {"http_timeout": 5}):
            with self.subTest(kw=kw), self.assertRaises(mentat.InvalidArgument):
                mentat.connect("", **kw)

    def test_unreachable_server_is_io_error(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now
        with self.assertRaises(mentat.IoError) as cm:
            mentat.connect("http://127.0.0.1:%d" % port, token=RW)
        self.assertIsInstance(cm.exception, mentat.Error)
        self.assertIsInstance(cm.exception, OSError)
        self.assertIn("127.0.0.1:%d" % port, str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, ConnectionRefusedError)

    def test_idle_keep_alive_connection_closed_by_server(self) -> None:
        # cpp-httplib closes a keep-alive connection idle for 5 seconds: the next request
        # notices and opens a new one.
        conn = self.connect()
        q = "[:find ?e . :where [?e :db/ident :db/ident]]"
        ident = conn.q(q)
        transport = conn._store._transport
        sock = transport._local.conn.sock
        self.assertIsNotNone(sock)
        time.sleep(6)
        self.assertEqual(conn.q(q), ident)
        self.assertIsNot(transport._local.conn.sock, sock)  # a new socket
        self.assertEqual(len(transport._all), 1)  # the same http.client connection
        # and a write after an idle period is not lost nor doubled
        conn.transact(native.SCHEMA)
        time.sleep(6)
        r = conn.transact('[{:db/id "k" :person/name "Keep Alive"}]')
        self.assertEqual(conn.q('[:find (count ?e) . :where [?e :person/name "Keep Alive"]]'),
                         1)
        self.assertEqual(conn.last_tx(), r.tx_id)


# ---------------------------------------------------------------------------------------

class HttpTransactTest(ServerTest):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.report = native.people(cls.conn)

    def test_python_data_with_tempids(self) -> None:
        report = self.report
        self.assertIsInstance(report, mentat.TxReport)
        self.assertEqual(set(report.tempids), {"ada", "bob", "cy"})
        self.assertEqual(report.tx_instant.tzinfo, UTC)
        self.assertLess(abs((dt.datetime.now(UTC) - report.tx_instant).total_seconds()), 600)
        ada, bob, cy = (report.tempids[k] for k in ("ada", "bob", "cy"))
        self.assertEqual(len({ada, bob, cy}), 3)
        self.assertIn(mentat.Datom(ada, K("person/name"), "Ada", report.tx_id, True),
                      report.tx_data)
        self.assertIn((report.tx_id, K("db/txInstant"), report.tx_instant, report.tx_id, True),
                      [tuple(d) for d in report.tx_data])
        friends = self.conn.q("[:find [?f ...] :in $ ?e :where [?e :person/friend ?f]]", ada)
        self.assertEqual(sorted(friends), sorted([bob, cy]))

    def test_edn_text_list_forms_and_lookup_refs(self) -> None:
        r = self.conn.transact('[{:db/id "x" :person/name "Xavier \\"X\\"\\n é 😀"}]')
        x = r.tempids["x"]
        self.assertIn(mentat.Datom(x, K("person/name"), 'Xavier "X"\n é 😀', r.tx_id, True),
                      r.tx_data)
        r = self.conn.transact([(K("db/add"), x, K("person/age"), 37),
                                [K("db/add"), x, K("person/tags"), K("t1")]])
        self.assertEqual(self.conn.q("[:find ?a . :in $ ?e :where [?e :person/age ?a]]", x), 37)
        r = self.conn.transact([[K("db/retract"), x, K("person/age"), 37],
                                [K("db/add"), (K("person/name"), 'Xavier "X"\n é 😀'),
                                 K("person/tags"), K("t2")]])
        self.assertIn(mentat.Datom(x, K("person/age"), 37, r.tx_id, False), r.tx_data)
        self.assertEqual(sorted(self.conn.q(
            "[:find [?t ...] :in $ ?e :where [?e :person/tags ?t]]", x)), [K("t1"), K("t2")])
        self.assertIsNone(self.conn.pull("[:person/age]", x))  # as in process: nothing pulled

    def test_with_is_unsupported(self) -> None:
        with self.assertRaises(mentat.UnsupportedError) as cm:
            self.conn.with_('[{:person/name "Dee"}]')
        self.assertIn("HTTP", str(cm.exception))
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Dee"]]'))

    def test_schema_error_writes_nothing(self) -> None:
        before = self.conn.last_tx()
        with self.assertRaises(mentat.SchemaError) as cm:
            self.conn.transact([{K("person/name"): "Eve"}, {K("no/such"): 1}])
        e = cm.exception
        self.assertEqual((e.code, e.code_name, e.http_status), (4, "schema error", 400))
        self.assertIn(":no/such", e.message)
        self.assertEqual(self.conn.last_tx(), before)
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Eve"]]'))
        with self.assertRaises(mentat.SchemaError):
            self.conn.transact([{K("person/name"): "Eve", K("person/age"): "old"}])

    def test_conflict_and_cas(self) -> None:
        before = self.conn.last_tx()
        with self.assertRaises(mentat.ConflictError) as cm:
            self.conn.transact([{K("person/name"): "Dee", K("person/email"): "dee@x"},
                                {K("person/name"): "Eve", K("person/email"): "ada@example.org"}])
        self.assertEqual((cm.exception.code, cm.exception.http_status), (5, 409))
        self.assertEqual(self.conn.last_tx(), before)
        cy = self.report.tempids["cy"]
        with self.assertRaises(mentat.CasMismatchError) as cm2:
            self.conn.transact([[K("db/cas"), cy, K("person/age"), 1, 2]])
        self.assertEqual((cm2.exception.code, cm2.exception.http_status), (6, 409))
        self.conn.transact([[K("db/cas"), cy, K("person/age"), 25, 26]])
        self.assertEqual(self.conn.pull("[:person/age]", cy), {K("person/age"): 26})
        self.conn.transact([[K("db/cas"), cy, K("person/age"), 26, 25]])

    def test_parse_error_in_transaction(self) -> None:
        with self.assertRaises(mentat.ParseError) as cm:
            self.conn.transact('[{:db/ident :a/b}\n {:person/name "x}]')
        e = cm.exception
        self.assertEqual((e.code, e.code_name, e.http_status), (2, "parse error", 400))
        self.assertEqual(e.line, 2)
        self.assertIsNotNone(e.column)
        with self.assertRaises(mentat.InvalidArgument) as cm2:
            self.conn.transact('{:db/id "y" :person/name "Y"}')  # not a vector
        self.assertEqual(cm2.exception.http_status, 400)

    def test_python_values_refused_before_sending(self) -> None:
        import math
        with self.assertRaises(ValueError):
            self.conn.transact([{K("person/age"): math.nan}])
        with self.assertRaises(TypeError):
            self.conn.transact([{K("person/age"): object()}])


# ---------------------------------------------------------------------------------------

class HttpQueryTest(ServerTest):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.report = native.people(cls.conn)
        cls.ada, cls.bob, cls.cy = (cls.report.tempids[k] for k in ("ada", "bob", "cy"))

    def test_relation(self) -> None:
        rows = self.conn.q("[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]")
        self.assertIsInstance(rows, list)
        self.assertTrue(all(isinstance(r, tuple) for r in rows))
        self.assertEqual(sorted(rows), [("Ada", 36), ("Bob", 41), ("Cy", 25)])
        self.assertEqual(self.conn.q("[:find ?n :where [?e :person/name ?n] "
                                     "[?e :person/age 99]]"), [])

    def test_collection(self) -> None:
        self.assertEqual(sorted(self.conn.q("[:find [?n ...] :where [_ :person/name ?n]]")),
                         ["Ada", "Bob", "Cy"])
        self.assertEqual(self.conn.q("[:find [?n ...] :where [?e :person/name ?n] "
                                     "[?e :person/age 99]]"), [])

    def test_tuple(self) -> None:
        self.assertEqual(self.conn.q('[:find [?n ?a] :where [?e :person/name ?n] '
                                     '[?e :person/age ?a] [(= ?n "Bob")]]'), ("Bob", 41))
        self.assertIsNone(self.conn.q('[:find [?n ?a] :where [?e :person/name ?n] '
                                      '[?e :person/age ?a] [(= ?n "Nobody")]]'))

    def test_scalar(self) -> None:
        self.assertEqual(self.conn.q("[:find (max ?a) . :where [_ :person/age ?a]]"), 41)
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Nobody"]]'))

    def test_keys_strs_syms(self) -> None:
        rows = self.conn.q("[:find ?n ?a :keys name age :where [?e :person/name ?n] "
                           "[?e :person/age ?a]]")
        self.assertEqual(sorted(rows, key=lambda r: r["name"]),
                         [{"name": "Ada", "age": 36}, {"name": "Bob", "age": 41},
                          {"name": "Cy", "age": 25}])
        self.assertEqual(list(rows[0]), ["name", "age"])
        self.assertEqual(self.conn.q('[:find ?n :strs who :where [?e :person/name ?n] '
                                     '[(= ?n "Cy")]]'), [{"who": "Cy"}])
        self.assertEqual(self.conn.q('[:find ?n :syms who :where [?e :person/name ?n] '
                                     '[(= ?n "Cy")]]'), [{"who": "Cy"}])
        self.assertEqual(self.conn.q('{:find [?n] :keys [n] :where [[?e :person/name ?n] '
                                     '[(= ?n "Ada")]]}'), [{"n": "Ada"}])
        self.assertEqual(self.conn.q('[:find [?n ?a] :keys n a :where [?e :person/name ?n] '
                                     '[?e :person/age ?a] [(= ?n "Bob")]]'),
                         {"n": "Bob", "a": 41})

    def test_query_as_python_data(self) -> None:
        q = [K("find"), Symbol("?n"), Symbol("."), K("in"), Symbol("$"), Symbol("?e"),
             K("where"), [Symbol("?e"), K("person/name"), Symbol("?n")]]
        self.assertEqual(self.conn.q(q, self.bob), "Bob")

    def test_aggregates_and_pull_in_find(self) -> None:
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]"), 3)
        rows = self.conn.q('[:find (pull ?e [:person/name]) :where [?e :person/name "Ada"]]')
        self.assertEqual(rows, [({K("person/name"): "Ada"},)])
        coll = self.conn.q("[:find [(pull ?e [:person/name]) ...] :where [?e :person/age ?a] "
                           "[(> ?a 30)]]")
        self.assertEqual(sorted(coll, key=lambda m: m[K("person/name")]),
                         [{K("person/name"): "Ada"}, {K("person/name"): "Bob"}])

    def test_inputs_scalar_collection_tuple_relation(self) -> None:
        q = "[:find ?e . :in $ ?n :where [?e :person/name ?n]]"
        self.assertEqual(self.conn.q(q, "Ada"), self.ada)
        q = "[:find [?a ...] :in $ [?n ...] :where [?e :person/name ?n] [?e :person/age ?a]]"
        self.assertEqual(sorted(self.conn.q(q, ["Ada", "Cy"])), [25, 36])
        q = "[:find ?e . :in $ [?n ?a] :where [?e :person/name ?n] [?e :person/age ?a]]"
        self.assertEqual(self.conn.q(q, ("Bob", 41)), self.bob)
        q = "[:find ?e ?x :in $ [[?n ?x]] :where [?e :person/name ?n]]"
        self.assertEqual(sorted(self.conn.q(q, [("Ada", 1), ("Cy", 2)])),
                         [(self.ada, 1), (self.cy, 2)])
        q = "[:find [?n ...] :in $ ?t :where [?e :person/tags ?t] [?e :person/name ?n]]"
        self.assertEqual(self.conn.q(q, K("math")), ["Ada"])
        q = "[:find ?a . :in $ ?e :where [?e :person/age ?a]]"
        self.assertEqual(self.conn.q(q, [K("person/name"), "Bob"]), 41)
        # several inputs at once
        q = "[:find ?e . :in $ ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]"
        self.assertEqual(self.conn.q(q, "Cy", 25), self.cy)
        self.assertIsNone(self.conn.q(q, "Cy", 26))

    def test_rules_as_edn_and_data(self) -> None:
        rules = Edn("""[[(friend-of ?a ?b) [?a :person/friend ?b]]
                        [(friend-of ?a ?b) [?a :person/friend ?x] (friend-of ?x ?b)]]""")
        q = ("[:find [?n ...] :in $ % ?start :where (friend-of ?start ?f) "
             "[?f :person/name ?n]]")
        self.assertEqual(sorted(self.conn.q(q, rules, self.ada)), ["Bob", "Cy"])
        self.assertEqual(self.conn.q(q, rules, self.cy), [])
        f = Symbol
        data = [[mentat.List([f("friend-of"), f("?a"), f("?b")]),
                 [f("?a"), K("person/friend"), f("?b")]]]
        self.assertEqual(sorted(self.conn.q(q, data, self.bob)), ["Cy"])

    def test_str_input_is_a_string_not_edn(self) -> None:
        q = "[:find ?e . :in $ ?n :where [?e :person/name ?n]]"
        self.assertIsNone(self.conn.q(q, ":person/name"))
        self.assertIsNone(self.conn.q(q, '"Ada"'))
        self.assertIsNone(self.conn.q(q, '"} :as-of 1 {'))

    def test_parse_error_carries_line_column(self) -> None:
        with self.assertRaises(mentat.ParseError) as cm:
            self.conn.q("[:find ?e\n :where [?e :person/name \"x]")
        e = cm.exception
        self.assertEqual((e.code, e.code_name, e.http_status), (2, "parse error", 400))
        self.assertEqual((e.line, e.column), (2, 26))
        self.assertRegex(e.message, r"2:26")
        self.assertIsInstance(e, ValueError)

    def test_query_errors(self) -> None:
        with self.assertRaises(mentat.Error) as cm:
            self.conn.q("[:find ?x :where [?x :no/such ?y]]")
        self.assertIn(":no/such", cm.exception.message)
        self.assertEqual(cm.exception.http_status, 400)
        with self.assertRaises(mentat.InvalidArgument) as cm2:
            self.conn.q("[:find ?e . :in $ ?n :where [?e :person/name ?n]]")  # no input
        self.assertIn("?n", cm2.exception.message)
        with self.assertRaises(mentat.InvalidArgument):
            self.conn.q("[:find ?e . :in $ ?n :where [?e :person/name ?n]]", "a", "b")
        with self.assertRaises(TypeError):
            self.conn.q("[:find ?e . :in $ $db :where [?e :person/name]]", self.conn.db())

    def test_timeout_option(self) -> None:
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]",
                                     timeout=30), 3)
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]",
                                     timeout=dt.timedelta(seconds=5)), 3)
        with self.assertRaises(ValueError):
            self.conn.q("[:find ?e . :where [?e :person/name]]", timeout=-1)

    def test_columns_without_a_request(self) -> None:
        cases = {
            "[:find ?e (count ?n) :where [?e :person/name ?n]]": ["?e", "(count ?n)"],
            "[:find [?a ...] :where [?a _ _]]": ["?a"],
            "[:find ?a . :where [?a _ _]]": ["?a"],
            "[:find [?a ?b] :where [?a _ ?b]]": ["?a", "?b"],
            "[:find (pull ?e [:a/b {:c [*]}]) ?x :keys a b :where [?e _ ?x]]":
                ["(pull ?e [:a/b {:c [*]}])", "?x"],
            "{:find [?a (max ?b)] :where [[?a _ ?b]]}": ["?a", "(max ?b)"],
            "[:find (count-distinct ?a) (sum ?x) (min 3 ?x) :with ?z :where [?a _ ?x]]":
                ["(count-distinct ?a)", "(sum ?x)", "(min 3 ?x)"],
        }
        for q, want in cases.items():
            with self.subTest(q=q):
                self.assertEqual(self.conn.columns(q), want)
        with self.assertRaises(mentat.ParseError):
            self.conn.columns("[:find ?e :where")

    def test_prepared(self) -> None:
        p = self.conn.prepare("[:find ?a . :in $ ?n :where [?e :person/name ?n] "
                              "[?e :person/age ?a]]")
        self.assertEqual(p.run("Ada"), 36)
        self.assertEqual(p("Bob"), 41)
        self.assertIsNone(p.run("Dee"))
        r = self.conn.transact('[{:db/id "d" :person/name "Dee" :person/age 7}]')
        self.assertEqual(p.run("Dee"), 7)  # sees the latest transactions
        self.assertIsNone(p.run("Dee", as_of=r.tx_id - 1))
        self.conn.transact([[K("db/retractEntity"), r.tempids["d"]]])
        self.assertIsNone(p.run("Dee"))
        pdb = self.conn.db().as_of(r.tx_id).prepare(
            "[:find (count ?e) . :where [?e :person/name]]")
        self.assertEqual(pdb.run(), 4)
        with self.assertRaises(mentat.ParseError):
            self.conn.prepare("[:find ?e :where")

    def test_unsupported_calls(self) -> None:
        for call in (self.conn.interrupt,
                     lambda: self.conn.listen(lambda r: None),
                     lambda: self.conn.explain("[:find ?e :where [?e :person/name]]"),
                     lambda: self.conn.db().explain("[:find ?e :where [?e :person/name]]")):
            with self.assertRaises(mentat.UnsupportedError) as cm:
                call()
            self.assertIn("HTTP", str(cm.exception))
            self.assertEqual(cm.exception.code, 11)
        # the connection stays usable
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]"), 3)


# ---------------------------------------------------------------------------------------

class HttpTypesTest(ServerTest):
    """Values of each type round-trip through transactions, query inputs and results."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.conn.transact(native.TYPES_SCHEMA)

    def test_round_trip(self) -> None:
        for attr, value in native.TypesTest.VALUES:
            with self.subTest(attr=attr, value=value):
                r = self.conn.transact([{K("db/id"): "e", K(attr): value}])
                e = r.tempids["e"]
                self.assertIn(mentat.Datom(e, K(attr), value, r.tx_id, True), r.tx_data)
                got = self.conn.q("[:find ?v . :in $ ?e :where [?e :%s ?v]]" % attr, e)
                self.assertEqual(got, value)
                self.assertEqual(type(got), type(value))
                if isinstance(value, dt.datetime):
                    self.assertEqual(got.tzinfo, UTC)
                q = "[:find [?e ...] :in $ ?v :where [?e :%s ?v]]" % attr
                self.assertIn(e, self.conn.q(q, value))
                # collection, tuple and relation inputs carry the type too
                q = "[:find [?e ...] :in $ [?v ...] :where [?e :%s ?v]]" % attr
                self.assertIn(e, self.conn.q(q, [value]))
                q = "[:find ?e ?x :in $ [[?v ?x]] :where [?e :%s ?v]]" % attr
                self.assertIn((e, value), self.conn.q(q, [(value, value)]))
                self.assertEqual(self.conn.pull([K(attr)], e), {K(attr): value})
                self.assertEqual(self.conn.entity(e)[K(attr)], value)
                self.assertIn((e, K(attr), value), [(d.e, d.a, d.v)
                                                    for d in self.conn.datoms("eavt", e)])

    def test_naive_and_aware_datetimes(self) -> None:
        naive = dt.datetime(2020, 5, 17, 12, 0, 0, 5)
        aware = dt.datetime(2020, 5, 17, 14, 0, 0, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))
        r = self.conn.transact([{K("db/id"): "n", K("t/inst"): naive},
                                {K("db/id"): "a", K("t/inst"): aware}])
        want = dt.datetime(2020, 5, 17, 12, 0, 0, 5, tzinfo=UTC)
        for t in ("n", "a"):
            self.assertEqual(self.conn.q("[:find ?v . :in $ ?e :where [?e :t/inst ?v]]",
                                         r.tempids[t]), want)

    def test_float_and_bool_inputs_are_typed(self) -> None:
        r = self.conn.transact([{K("db/id"): "f", K("t/double"): 3.0, K("t/bool"): True,
                                 K("t/long"): 3}])
        e = r.tempids["f"]
        self.assertIn(e, self.conn.q("[:find [?e ...] :in $ ?v :where [?e :t/double ?v]]",
                                     3.0))
        self.assertIn(e, self.conn.q("[:find [?e ...] :in $ ?v :where [?e :t/bool ?v]]",
                                     True))
        self.assertNotIn(e, self.conn.q("[:find [?e ...] :in $ ?v :where [?e :t/bool ?v]]",
                                        False))
        got = self.conn.q("[:find [?d ?l] :in $ ?e :where [?e :t/double ?d] [?e :t/long ?l]]",
                          e)
        self.assertEqual(got, (3.0, 3))
        self.assertIsInstance(got[0], float)
        self.assertIsInstance(got[1], int)

    def test_edn_inputs_of_every_kind(self) -> None:
        q = "[:find ?x . :in $ ?v :where [(ground ?v) ?x]]"
        value = {K("a/b"): [1, -2, 3.5, 2 ** 64, None, True],
                 K("s"): 'q"uote\\ \n é 😀',
                 K("list"): mentat.List([Symbol("f"), 1]), (1, 2): "vector key",
                 K("uri"): mentat.Uri("urn:x"), K("inst"): dt.datetime(2001, 2, 3, tzinfo=UTC)}
        for v in list(value.values()) + [value[K("a/b")]]:
            with self.subTest(v=v):
                self.assertEqual(self.conn.q(q, v), v)
        with self.assertRaises(mentat.InvalidArgument) as cm:  # as in process
            self.conn.q(q, frozenset({1, K("x")}))
        self.assertIn("not a scalar", cm.exception.message)


# ---------------------------------------------------------------------------------------

class HttpTimeTest(ServerTest):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        c = cls.conn
        c.transact(native.SCHEMA)
        cls.r1 = c.transact('[{:db/id "a" :person/name "Ada" :person/age 1}]')
        cls.ada = cls.r1.tempids["a"]
        time.sleep(0.01)
        cls.r2 = c.transact([[K("db/add"), cls.ada, K("person/age"), 2]])
        time.sleep(0.01)
        cls.r3 = c.transact([[K("db/add"), cls.ada, K("person/age"), 3],
                             {K("person/name"): "Bob", K("person/age"): 50}])

    AGE = "[:find ?a . :in $ ?e :where [?e :person/age ?a]]"
    NAMES = "[:find [?n ...] :where [?e :person/name ?n]]"

    def test_as_of_tx_and_instant(self) -> None:
        c = self.conn
        self.assertEqual(c.q(self.AGE, self.ada), 3)
        self.assertEqual(c.q(self.AGE, self.ada, as_of=self.r1.tx_id), 1)
        self.assertEqual(c.q(self.AGE, self.ada, as_of=self.r2), 2)
        self.assertEqual(c.q(self.AGE, self.ada, as_of=self.r2.tx_instant), 2)
        self.assertEqual(c.q(self.AGE, self.ada, as_of=self.r1.tx_instant.replace(tzinfo=None)),
                         1)
        db = c.db()
        self.assertEqual(db.as_of(self.r1.tx_id).q(self.AGE, self.ada), 1)
        self.assertEqual(db.as_of(self.r2.tx_instant).q(self.AGE, self.ada), 2)
        self.assertEqual(db.as_of(self.r3).q(self.AGE, self.ada), 3)
        self.assertEqual(db.q(self.AGE, self.ada, as_of=self.r2.tx_id), 2)
        # a call's as_of replaces the Db's
        self.assertEqual(db.as_of(self.r1).q(self.AGE, self.ada, as_of=self.r2), 2)
        old = db.as_of(self.r1.tx_id)
        self.assertIn("as-of", repr(old))
        self.assertEqual(old.pull("[:person/age]", self.ada), {K("person/age"): 1})
        self.assertEqual(old.pull_many("[:person/age]", [self.ada]), [{K("person/age"): 1}])
        self.assertEqual(old.entity(self.ada)[K("person/age")], 1)
        self.assertEqual(old.q(self.NAMES), ["Ada"])
        at = db.as_of(self.r2.tx_instant)
        self.assertEqual(at.pull("[:person/age]", self.ada), {K("person/age"): 2})
        self.assertEqual(at.entity(self.ada)[K("person/age")], 2)
        self.assertEqual(db.since(self.r2).pull("[:person/name]", self.ada), None)
        with self.assertRaises(mentat.NotFoundError) as cm:
            old.entity([K("person/name"), "Bob"])
        self.assertEqual(cm.exception.http_status, 404)

    def test_since(self) -> None:
        c = self.conn
        self.assertEqual(sorted(c.q(self.NAMES)), ["Ada", "Bob"])
        self.assertEqual(c.q(self.NAMES, since=self.r2.tx_id), ["Bob"])
        self.assertEqual(c.db().since(self.r2).q(self.NAMES), ["Bob"])
        self.assertEqual(c.db().since(self.r2.tx_instant).q(self.NAMES), ["Bob"])
        self.assertEqual(c.q(self.NAMES, since=self.r3.tx_id), [])
        self.assertEqual(c.db().since(self.r1).as_of(self.r2).q(self.NAMES), [])

    def test_history(self) -> None:
        q = "[:find ?a ?tx ?added :in $ ?e :where [?e :person/age ?a ?tx ?added]]"
        rows = set(self.conn.q(q, self.ada, history=True))
        self.assertEqual(rows, {(1, self.r1.tx_id, True), (1, self.r2.tx_id, False),
                                (2, self.r2.tx_id, True), (2, self.r3.tx_id, False),
                                (3, self.r3.tx_id, True)})
        self.assertEqual(set(self.conn.db().history().q(q, self.ada)), rows)
        self.assertIn("history", repr(self.conn.db().history()))
        with self.assertRaises(mentat.UnsupportedError) as cm:  # as in process
            self.conn.db().history().entity(self.ada)
        self.assertEqual((cm.exception.code, cm.exception.http_status), (11, 501))

    def test_datoms_of_a_filtered_db_are_unsupported(self) -> None:
        for db in (self.conn.db().as_of(self.r1), self.conn.db().since(self.r1),
                   self.conn.db().history()):
            with self.assertRaises(mentat.UnsupportedError):
                db.datoms("eavt", self.ada)
        ds = self.conn.db().datoms("eavt", self.ada)
        self.assertEqual({(d.a, d.v) for d in ds}, {(K("person/name"), "Ada"),
                                                    (K("person/age"), 3)})

    def test_basis_t_is_the_servers_latest(self) -> None:
        db = self.conn.db()
        t = db.basis_t
        self.assertEqual(self.conn.last_tx(), 0x10000000 + t)
        self.assertGreaterEqual(t, 4)
        r = self.conn.transact('[{:person/name "Cy"}]')
        self.assertEqual(db.basis_t, t + 1)  # not a snapshot over HTTP
        self.assertEqual(self.conn.last_tx(), r.tx_id)
        self.assertEqual(sorted(db.q(self.NAMES)), ["Ada", "Bob", "Cy"])
        self.assertEqual(sorted(db.as_of(r.tx_id - 1).q(self.NAMES)), ["Ada", "Bob"])
        self.conn.transact([[K("db/retractEntity"), [K("person/name"), "Cy"]]])

    def test_bad_points(self) -> None:
        with self.assertRaises(TypeError):
            self.conn.q(self.AGE, self.ada, as_of="yesterday")
        with self.assertRaises(TypeError):
            self.conn.db().as_of(1.5)


# ---------------------------------------------------------------------------------------

class HttpPullEntityDatomsTest(ServerTest):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.report = native.people(cls.conn)
        cls.ada, cls.bob, cls.cy = (cls.report.tempids[k] for k in ("ada", "bob", "cy"))

    def test_pull_nested_refs(self) -> None:
        got = self.conn.pull("[:person/name {:person/friend [:person/name {:person/friend "
                             "[:person/name]}]} {:person/best [:db/id :person/age]}]",
                             [K("person/name"), "Ada"])
        friends = sorted(got[K("person/friend")], key=lambda m: m[K("person/name")])
        self.assertEqual(got[K("person/name")], "Ada")
        self.assertEqual(friends, [{K("person/name"): "Bob",
                                    K("person/friend"): [{K("person/name"): "Cy"}]},
                                   {K("person/name"): "Cy"}])
        self.assertEqual(got[K("person/best")], {K("db/id"): self.bob, K("person/age"): 41})

    def test_pull_star_reverse_and_ident(self) -> None:
        self.assertEqual(self.conn.pull("[*]", self.cy),
                         {K("db/id"): self.cy, K("person/name"): "Cy", K("person/age"): 25})
        got = self.conn.pull([K("person/name"), {K("person/_friend"): [K("person/name")]}],
                             self.cy)
        self.assertEqual(sorted(m[K("person/name")] for m in got[K("person/_friend")]),
                         ["Ada", "Bob"])
        got = self.conn.pull("[:db/ident :db/valueType]", K("person/name"))
        self.assertEqual(got[K("db/ident")], K("person/name"))
        self.assertEqual(self.conn.pull("[:person/name]", Edn('[:person/name "Bob"]')),
                         {K("person/name"): "Bob"})

    def test_pull_many(self) -> None:
        self.assertEqual(self.conn.pull_many("[:person/name]", [self.ada, self.bob]),
                         [{K("person/name"): "Ada"}, {K("person/name"): "Bob"}])

    def test_pull_missing_and_errors(self) -> None:
        self.assertIsNone(self.conn.pull("[*]", [K("person/name"), "Nobody"]))
        with self.assertRaises(mentat.NotFoundError) as cm:
            self.conn.entity([K("person/name"), "Nobody"])
        self.assertEqual((cm.exception.code, cm.exception.http_status), (3, 404))
        with self.assertRaises(mentat.ParseError) as cm2:
            self.conn.pull("[:person/name", self.ada)
        self.assertIsNotNone(cm2.exception.line)
        with self.assertRaises(TypeError):
            self.conn.pull("[*]", "Ada")

    def test_entity(self) -> None:
        e = self.conn.entity(self.ada)
        self.assertEqual(e[K("db/id")], self.ada)
        self.assertEqual(e[K("person/name")], "Ada")
        self.assertEqual(e[K("person/age")], 36)
        self.assertEqual(e[K("person/email")], "ada@example.org")
        self.assertEqual(set(e[K("person/tags")]), {K("math"), K("poetry")})
        self.assertEqual(self.conn.entity([K("person/name"), "Bob"])[K("db/id")], self.bob)
        self.assertEqual(self.conn.db().entity(Edn('[:person/name "Cy"]'))[K("person/age")], 25)

    def test_datoms(self) -> None:
        ds = self.conn.datoms("eavt", self.cy)
        self.assertTrue(all(isinstance(d, mentat.Datom) for d in ds))
        self.assertEqual({(d.a, d.v) for d in ds},
                         {(K("person/name"), "Cy"), (K("person/age"), 25)})
        self.assertTrue(all(d.e == self.cy and d.added and d.tx == self.report.tx_id
                            for d in ds))
        ds = self.conn.datoms(":avet", K("person/name"), "Bob")
        self.assertEqual([(d.e, d.a, d.v) for d in ds], [(self.bob, K("person/name"), "Bob")])
        ds = self.conn.datoms(K("aevt"), K("person/age"))
        self.assertEqual(sorted(d.v for d in ds), [25, 36, 41])
        ds = self.conn.datoms("vaet", self.cy)
        self.assertEqual({d.e for d in ds}, {self.ada, self.bob})
        # components that need URL quoting
        r = self.conn.transact([{K("person/name"): "a&b=c d+e?#%/é"}])
        ds = self.conn.datoms("avet", K("person/name"), "a&b=c d+e?#%/é")
        self.assertEqual([d.tx for d in ds], [r.tx_id])
        self.assertEqual(len(self.conn.datoms("eavt")) > 10, True)
        with self.assertRaises(mentat.Error) as cm:
            self.conn.datoms("nope")
        self.assertEqual(cm.exception.http_status, 400)


# ---------------------------------------------------------------------------------------

class HttpAuthTest(ServerTest):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.conn.transact(native.SCHEMA)
        cls.conn.transact('[{:person/name "Ada"}]')

    def test_read_only_token(self) -> None:
        ro = self.connect(RO)
        self.assertEqual(ro.q("[:find [?n ...] :where [_ :person/name ?n]]"), ["Ada"])
        self.assertEqual(ro.pull("[:person/name]", [K("person/name"), "Ada"]),
                         {K("person/name"): "Ada"})
        before = ro.last_tx()
        with self.assertRaises(mentat.AuthError) as cm:
            ro.transact('[{:person/name "Bob"}]')
        e = cm.exception
        self.assertIsInstance(e, mentat.Error)
        self.assertIsInstance(e, PermissionError)
        self.assertEqual((e.http_status, e.code_name), (403, "forbidden"))
        self.assertIn("read-only", e.message)
        self.assertEqual(ro.last_tx(), before)
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Bob"]]'))

    def test_missing_and_wrong_token(self) -> None:
        for token in (None, "not-a-valid-token"):
            with self.subTest(token=token):
                conn = self.connect(token)
                with self.assertRaises(mentat.AuthError) as cm:
                    conn.q("[:find ?e :where [?e :person/name]]")
                e = cm.exception
                self.assertEqual((e.http_status, e.code_name, e.code), (401, "unauthorized", 0))
                self.assertIn("Bearer" if token is None else "not valid", e.message)
                with self.assertRaises(mentat.AuthError):
                    conn.transact('[{:person/name "Eve"}]')
                with self.assertRaises(mentat.AuthError):
                    conn.datoms("eavt")
                # the connection stays usable (health needs no token)
                self.assertGreater(conn.last_tx(), 0x10000000)
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Eve"]]'))


# ---------------------------------------------------------------------------------------

class HttpLimitsTest(ServerTest):
    SERVER_ARGS = ("--max-body", "65536", "--timeout", "1500", "--max-concurrent", "1")

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.conn.transact(native.SCHEMA)
        cls.conn.transact([{K("person/name"): "p%d" % i} for i in range(300)])

    def test_body_too_large(self) -> None:
        with self.assertRaises(mentat.InvalidArgument) as cm:
            self.conn.transact([{K("person/name"): "x" * 200000}])
        self.assertEqual(cm.exception.http_status, 413)
        with self.assertRaises(mentat.InvalidArgument):
            self.conn.q("[:find ?e . :in $ ?n :where [?e :person/name ?n]]", "y" * 100000)
        # the connection stays usable
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]"), 300)

    def test_timeouts(self) -> None:
        start = time.monotonic()
        with self.assertRaises(mentat.Interrupted) as cm:
            self.conn.q(SLOW, timeout=0.1)
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual((cm.exception.code, cm.exception.http_status), (8, 504))
        self.assertIn("time limit", cm.exception.message)
        # the server's --timeout bounds a query that asks for more
        with self.assertRaises(mentat.Interrupted):
            self.conn.db().q(SLOW, timeout=600)
        with self.assertRaises(mentat.Interrupted):
            self.conn.prepare(SLOW).run()

    def test_http_timeout(self) -> None:
        conn = self.connect(http_timeout=0.2)
        start = time.monotonic()
        with self.assertRaises(mentat.IoError) as cm:
            conn.q(SLOW)
        self.assertLess(time.monotonic() - start, 10)
        self.assertIn("timed out", str(cm.exception))
        # the server finishes the query (its --timeout); then the connection works again
        deadline = time.monotonic() + 20
        while True:
            try:
                self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 300)
                break
            except mentat.BusyError:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.1)

    def test_too_many_requests(self) -> None:
        outcome: List[Any] = []

        def slow() -> None:
            try:
                outcome.append(self.conn.q(SLOW))
            except mentat.Error as e:
                outcome.append(e)

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.4)
        busy = None
        deadline = time.monotonic() + 10  # the slow query may take a while to be in flight
        while busy is None and time.monotonic() < deadline and t.is_alive():
            try:
                self.conn.q("[:find (count ?e) . :where [?e :person/name]]")
            except mentat.BusyError as e:
                busy = e
        t.join(30)
        self.assertIsNotNone(busy)
        self.assertEqual((busy.code, busy.http_status), (7, 429))
        self.assertEqual(len(outcome), 1)
        self.assertIsInstance(outcome[0], mentat.Interrupted)
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]"), 300)


# ---------------------------------------------------------------------------------------

class HttpThreadsTest(ServerTest):
    SERVER_ARGS = ("--max-concurrent", "64")

    def test_eight_threads_one_connection(self) -> None:
        conn = self.connect()
        conn.transact(native.SCHEMA)
        conn.transact([{K("person/name"): "p%d" % i, K("person/age"): i} for i in range(200)])
        q = "[:find ?a . :in $ ?n :where [?e :person/name ?n] [?e :person/age ?a]]"
        prepared = conn.prepare("[:find (count ?e) . :in $ ?min :where [?e :person/age ?a] "
                                "[(>= ?a ?min)]]")
        failures: List[Any] = []
        barrier = threading.Barrier(8)

        def worker(k: int) -> None:
            try:
                barrier.wait(10)
                for j in range(40):
                    i = (k * 37 + j * 11) % 200
                    got = conn.q(q, "p%d" % i)
                    if got != i:
                        failures.append((k, i, got))
                    n = prepared.run(i)
                    if n != 200 - i:
                        failures.append((k, "count", i, n))
                    if j % 10 == 0:
                        rows = conn.db().q("[:find ?n ?a :where [?e :person/name ?n] "
                                           "[?e :person/age ?a] [(< ?a 3)]]")
                        if sorted(rows) != [("p0", 0), ("p1", 1), ("p2", 2)]:
                            failures.append((k, "rows", rows))
                        got_pull = conn.pull("[:person/age]", [K("person/name"), "p%d" % i])
                        if got_pull != {K("person/age"): i}:
                            failures.append((k, "pull", got_pull))
                    if j % 8 == 0:
                        conn.transact([{K("person/name"): "w%d-%d" % (k, j)}])
            except Exception as e:  # pragma: no cover - reported below
                failures.append((k, repr(e)))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertFalse(any(t.is_alive() for t in threads))
        self.assertEqual(failures, [])
        self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 200 + 8 * 5)
        # keep-alive: one http.client connection per thread (and the main one), reused
        # for its ~100 requests
        self.assertLessEqual(len(conn._store._transport._all), 9)


# ---------------------------------------------------------------------------------------

class FakeServerTest(unittest.TestCase):
    """The client's handling of answers mentat serve does not give: a proxy's HTML error
    page, a JSON error, and a keep-alive connection closed without an answer."""

    def test_non_edn_errors_and_retry_on_a_dropped_connection(self) -> None:
        seen: List[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                seen.append(self.path)
                if self.path.startswith("/other/"):
                    self._answer(200, "text/html", "<html>Welcome</html>")
                else:
                    self._answer(200, "application/edn", '{:status "ok" :basis-t 41}')

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                seen.append(self.path)
                if "html" in body.decode():
                    self._answer(502, "text/html", "<html>Bad Gateway</html>")
                elif "json" in body.decode():
                    self._answer(503, "application/json",
                                 '{"error": "the store is locked", "code": "busy"}')
                elif "drop" in body.decode() and seen.count("/prefix/q") == 2:
                    self.close_connection = True  # no answer at all
                else:
                    self._answer(200, "application/edn", "[[1 2]]")

            def _answer(self, status: int, ctype: str, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        url = "http://127.0.0.1:%d/prefix/" % srv.server_address[1]
        with mentat.connect(url, token=RW) as conn:
            self.assertEqual(conn.last_tx(), 0x10000000 + 41)
            self.assertEqual(conn.q('[:find ?a ?b :where [?a :x/y "first"]]'), [(1, 2)])
            # the second /q on this connection is dropped: sent again on a new one
            self.assertEqual(conn.q('[:find ?a ?b :where [?a :x/y "drop"]]'), [(1, 2)])
            self.assertEqual(seen.count("/prefix/q"), 3)
            with self.assertRaises(mentat.Error) as cm:
                conn.q('[:find ?a :where [?a :x/y "html"]]')
            self.assertIs(type(cm.exception), mentat.Error)
            self.assertEqual(cm.exception.http_status, 502)
            self.assertIn("Bad Gateway", cm.exception.message)
            with self.assertRaises(mentat.BusyError) as cm2:
                conn.q('[:find ?a :where [?a :x/y "json"]]')
            self.assertEqual((cm2.exception.message, cm2.exception.http_status),
                             ("the store is locked", 503))
        self.assertTrue(all(p.startswith("/prefix/") for p in seen), seen)
        # not a mentat server
        with self.assertRaises(mentat.IoError) as cm3:
            mentat.connect("http://127.0.0.1:%d/other" % srv.server_address[1])
        self.assertIn("Welcome", str(cm3.exception))


# ---------------------------------------------------------------------------------------

class HttpTlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tempfile.mkdtemp(prefix="mentat-tls-test-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.key = os.path.join(cls.dir, "key.pem")
        cls.cert = os.path.join(cls.dir, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        cls.key, "-out", cls.cert, "-days", "1", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost"],
                       check=True, capture_output=True, timeout=120)
        cls.server = Server("--tls-cert", cls.cert, "--tls-key", cls.key)
        cls.addClassCleanup(stop_server, cls.server)
        if cls.server.scheme != "https":
            raise AssertionError("not an https server: %r" % cls.server.lines)
        cls.url = "https://localhost:%d" % cls.server.port

    def test_cafile(self) -> None:
        with mentat.connect(self.url, token=RW, cafile=self.cert) as conn:
            r = conn.transact(native.SCHEMA)
            r = conn.transact([{K("db/id"): "t", K("person/name"): "Tls"}])
            self.assertEqual(conn.q("[:find ?e . :in $ ?n :where [?e :person/name ?n]]", "Tls"),
                             r.tempids["t"])
            self.assertEqual(conn.pull("[:person/name]", r.tempids["t"]),
                             {K("person/name"): "Tls"})
            # keep-alive over TLS: the requests of this thread went over one connection
            transport = conn._store._transport
            sock = transport._local.conn.sock
            for _ in range(5):
                self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 1)
            self.assertIs(transport._local.conn.sock, sock)
            self.assertIsInstance(sock, ssl.SSLSocket)
            self.assertEqual(len(transport._all), 1)
            # threads share the connection over TLS too
            errors: List[Any] = []

            def worker() -> None:
                try:
                    for _ in range(10):
                        if conn.q("[:find ?n . :where [_ :person/name ?n]]") != "Tls":
                            errors.append("wrong")
                except Exception as e:  # pragma: no cover
                    errors.append(e)

            threads = [threading.Thread(target=worker) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            self.assertEqual(errors, [])
            with self.assertRaises(mentat.AuthError):
                mentat.connect(self.url, token=RO, cafile=self.cert).transact("[]")

    def test_ssl_context(self) -> None:
        ctx = ssl.create_default_context(cafile=self.cert)
        with mentat.connect(self.url, token=RO, ssl_context=ctx) as conn:
            self.assertIsInstance(conn.q("[:find ?e . :where [?e :db/ident :db/ident]]"), int)

    def test_untrusted_certificate_and_wrong_name(self) -> None:
        with self.assertRaises(mentat.IoError) as cm:
            mentat.connect(self.url, token=RW)  # the system's CAs do not know it
        self.assertIsInstance(cm.exception.__cause__, ssl.SSLCertVerificationError)
        with self.assertRaises(mentat.IoError) as cm:  # the certificate names localhost
            mentat.connect("https://127.0.0.1:%d" % self.server.port, token=RW,
                           cafile=self.cert)
        self.assertIsInstance(cm.exception.__cause__, ssl.SSLCertVerificationError)
        with self.assertRaises(mentat.IoError):
            mentat.connect("http://localhost:%d" % self.server.port, token=RW)  # not TLS
        with self.assertRaises(mentat.IoError):
            mentat.connect(self.url, token=RW, cafile=os.path.join(self.dir, "missing.pem"))
        with self.assertRaises(mentat.InvalidArgument):
            mentat.connect(self.url, token=RW, cafile=self.cert,
                           ssl_context=ssl.create_default_context())


if __name__ == "__main__":
    unittest.main()
