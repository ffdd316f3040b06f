"""Tests of the mentat Python package against the real libmentat.

Run:
    MENTAT_LIBRARY=/work/main/build/src/libmentat.so.0 \\
        python3 -m unittest discover -s /work/main/python/tests -t /work/main/python
(or with PYTHONPATH=/work/main/python; without MENTAT_LIBRARY the package finds the
library in the source tree's build/src).
"""

from __future__ import annotations

import datetime as dt
import gc
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

import mentat  # noqa: E402
from mentat import Edn, Keyword as K, Symbol, Uri  # noqa: E402
from mentat import edn  # noqa: E402

UTC = dt.timezone.utc

SCHEMA = """
[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
  :db/unique :db.unique/identity}
 {:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one
  :db/unique :db.unique/value}
 {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :person/best :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
 {:db/ident :person/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}]
"""

TYPES_SCHEMA = """
[{:db/ident :t/str :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :t/long :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :t/double :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
 {:db/ident :t/bool :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
 {:db/ident :t/kw :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
 {:db/ident :t/inst :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
 {:db/ident :t/uuid :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}
 {:db/ident :t/bytes :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
 {:db/ident :t/dec :db/valueType :db.type/bigdec :db/cardinality :db.cardinality/one}
 {:db/ident :t/big :db/valueType :db.type/bigint :db/cardinality :db.cardinality/one}
 {:db/ident :t/uri :db/valueType :db.type/uri :db/cardinality :db.cardinality/one}
 {:db/ident :t/sym :db/valueType :db.type/symbol :db/cardinality :db.cardinality/one}]
"""


def people(conn: mentat.Connection) -> mentat.TxReport:
    """The schema and three people: ada (friends bob, cy; best bob), bob, cy."""
    conn.transact(SCHEMA)
    return conn.transact([
        {K("db/id"): "ada", K("person/name"): "Ada", K("person/age"): 36,
         K("person/email"): "ada@example.org", K("person/friend"): ["bob", "cy"],
         K("person/best"): "bob", K("person/tags"): [K("math"), K("poetry")]},
        {K("db/id"): "bob", K("person/name"): "Bob", K("person/age"): 41,
         K("person/friend"): ["cy"]},
        {K("db/id"): "cy", K("person/name"): "Cy", K("person/age"): 25},
    ])


class ConnectTest(unittest.TestCase):
    def test_library_and_version(self) -> None:
        v = mentat.version()
        self.assertRegex(v, r"^\d+\.\d+\.\d+$")
        self.assertTrue(os.path.exists(mentat.library_path())
                        or mentat.library_path() == "libmentat.so.0")

    def test_in_memory(self) -> None:
        with mentat.connect() as conn:
            self.assertFalse(conn.closed)
            self.assertEqual(conn.q("[:find ?e . :where [?e :db/ident :db/ident]]"),
                             conn.q("[:find ?e . :where [?e :db/ident :db/ident]]"))
            people(conn)
            self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 3)
        # a new in-memory store is empty
        with mentat.connect("") as other:
            self.assertIsNone(other.q("[:find ?e . :where [?e :db/ident :person/name]]"))

    def test_file_store_persists(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "people.db")
            with mentat.connect(path) as conn:
                report = people(conn)
                ada = report.tempids["ada"]
                last = conn.last_tx()
                self.assertEqual(last, report.tx_id)
            self.assertTrue(os.path.exists(path))
            with mentat.connect(path) as conn:
                self.assertEqual(conn.last_tx(), last)
                self.assertEqual(conn.q("[:find ?n . :in $ ?e :where [?e :person/name ?n]]",
                                        ada), "Ada")
                self.assertEqual(sorted(conn.q("[:find [?n ...] :where [_ :person/name ?n]]")),
                                 ["Ada", "Bob", "Cy"])
            # read_only, as an option
            with mentat.connect(path, read_only=True, busy_timeout=2.5) as conn:
                self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 3)
                with self.assertRaises(mentat.Error):
                    conn.transact('[{:person/name "Dee"}]')

    def test_pathlike_and_options(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            import pathlib
            p = pathlib.Path(d) / "x.db"
            with mentat.connect(p, synchronous="full", auto_index="schema") as conn:
                conn.transact(SCHEMA)
            self.assertTrue(p.exists())
            with self.assertRaises(mentat.InvalidArgument) as cm:
                mentat.connect(str(p), synchronous="sometimes")
            self.assertIn("synchronous", str(cm.exception))
            with self.assertRaises(mentat.Error):
                mentat.connect(os.path.join(d, "missing.db"), create=False)

    def test_context_manager_closes(self) -> None:
        with mentat.connect() as conn:
            conn.transact(SCHEMA)
            db = conn.db()
        self.assertTrue(conn.closed)
        with self.assertRaises(mentat.InvalidArgument) as cm:
            conn.q("[:find ?e :where [?e :db/ident]]")
        self.assertIn("closed", str(cm.exception))
        with self.assertRaises(mentat.InvalidArgument):
            conn.transact("[]")
        conn.close()  # twice: nothing
        # A Db value keeps the store open after close.
        self.assertEqual(db.q("[:find ?e . :where [?e :db/ident :person/name]]") is not None,
                         True)

    def test_close_without_context_manager(self) -> None:
        conn = mentat.connect()
        conn.close()
        self.assertTrue(conn.closed)
        self.assertIn("closed", repr(conn))

    def test_http_arguments(self) -> None:
        # connect("http://...") is a client of mentat serve (tests/test_http.py): the store
        # options are refused before any request, and the HTTP ones with a store.
        with self.assertRaises(mentat.InvalidArgument) as cm:
            mentat.connect("http://localhost:8080", token="secret", read_only=True)
        self.assertIn("read_only", str(cm.exception))
        with self.assertRaises(mentat.InvalidArgument):
            mentat.connect("https://example.org/db", replicas=["a"])
        for kw in ({"token": "secret"}, {"cafile": "ca.pem"}, {"http_timeout": 1}):
            with self.assertRaises(mentat.InvalidArgument):
                mentat.connect("", **kw)


class TransactTest(unittest.TestCase):
    def setUp(self) -> None:
        self.conn = mentat.connect()

    def tearDown(self) -> None:
        self.conn.close()

    def test_schema_and_edn_text(self) -> None:
        report = self.conn.transact(SCHEMA)
        self.assertIsInstance(report, mentat.TxReport)
        self.assertIsInstance(report.tx_id, int)
        self.assertEqual(report.tx_instant.tzinfo, UTC)
        self.assertLess(abs((dt.datetime.now(UTC) - report.tx_instant).total_seconds()), 600)
        idents = {d.v for d in report.tx_data if d.a == K("db/ident")}
        self.assertIn(K("person/name"), idents)
        r = self.conn.transact('[{:db/id "x" :person/name "Xavier \\"X\\"\\n"}]')
        self.assertEqual(set(r.tempids), {"x"})
        x = r.tempids["x"]
        self.assertIn(mentat.Datom(x, K("person/name"), 'Xavier "X"\n', r.tx_id, True),
                      r.tx_data)
        # the tx entity's instant is a datom too
        self.assertIn((r.tx_id, K("db/txInstant"), r.tx_instant, r.tx_id, True),
                      [tuple(d) for d in r.tx_data])

    def test_python_data_with_tempids(self) -> None:
        report = people(self.conn)
        self.assertEqual(set(report.tempids), {"ada", "bob", "cy"})
        ada, bob, cy = (report.tempids[k] for k in ("ada", "bob", "cy"))
        self.assertEqual(len({ada, bob, cy}), 3)
        friends = self.conn.q("[:find [?f ...] :in $ ?e :where [?e :person/friend ?f]]", ada)
        self.assertEqual(sorted(friends), sorted([bob, cy]))
        # list forms as tuples and lists
        r = self.conn.transact([(K("db/add"), ada, K("person/age"), 37),
                                [K("db/retract"), ada, K("person/tags"), K("poetry")]])
        self.assertEqual(self.conn.q("[:find ?a . :in $ ?e :where [?e :person/age ?a]]", ada),
                         37)
        self.assertIn(mentat.Datom(ada, K("person/age"), 36, r.tx_id, False), r.tx_data)
        self.assertEqual(self.conn.q("[:find [?t ...] :in $ ?e :where [?e :person/tags ?t]]",
                                     ada), [K("math")])
        # lookup refs in transaction data
        self.conn.transact([[K("db/add"), (K("person/name"), "Cy"), K("person/age"), 26]])
        self.assertEqual(self.conn.pull([K("person/age")], cy), {K("person/age"): 26})

    def test_with_is_speculative(self) -> None:
        people(self.conn)
        before = self.conn.last_tx()
        r = self.conn.with_('[{:db/id "d" :person/name "Dee"}]')
        self.assertIn("d", r.tempids)
        self.assertTrue(any(d.v == "Dee" for d in r.tx_data))
        self.assertEqual(self.conn.last_tx(), before)
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Dee"]]'))

    def test_unknown_attribute_is_schema_error_and_writes_nothing(self) -> None:
        people(self.conn)
        before = self.conn.last_tx()
        with self.assertRaises(mentat.SchemaError) as cm:
            self.conn.transact([{K("person/name"): "Eve"}, {K("no/such"): 1}])
        e = cm.exception
        self.assertEqual(e.code, 4)
        self.assertEqual(e.code_name, "schema error")
        self.assertIn(":no/such", e.message)
        self.assertIsInstance(e, mentat.Error)
        self.assertEqual(self.conn.last_tx(), before)
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Eve"]]'))

    def test_wrong_type_is_schema_error(self) -> None:
        people(self.conn)
        with self.assertRaises(mentat.SchemaError):
            self.conn.transact([{K("person/name"): "Eve", K("person/age"): "old"}])

    def test_unique_conflict(self) -> None:
        people(self.conn)
        before = self.conn.last_tx()
        with self.assertRaises(mentat.ConflictError) as cm:
            self.conn.transact([{K("person/name"): "Dee", K("person/email"): "dee@x"},
                                {K("person/name"): "Eve", K("person/email"): "ada@example.org"}])
        self.assertEqual(cm.exception.code, 5)
        self.assertEqual(self.conn.last_tx(), before)
        self.assertIsNone(self.conn.q('[:find ?e . :where [?e :person/name "Dee"]]'))

    def test_parse_error_in_transaction(self) -> None:
        with self.assertRaises(mentat.ParseError) as cm:
            self.conn.transact("[{:db/ident :a/b}")
        self.assertIsNotNone(cm.exception.line)

    def test_python_values_refused_before_mentat(self) -> None:
        self.conn.transact(TYPES_SCHEMA)
        with self.assertRaises(ValueError):
            self.conn.transact([{K("t/double"): math.nan}])
        with self.assertRaises(ValueError):
            self.conn.transact([{K("t/double"): math.inf}])
        with self.assertRaises(TypeError):
            self.conn.transact([{K("t/inst"): dt.date(2020, 1, 1)}])
        with self.assertRaises(TypeError):
            self.conn.transact([{K("t/str"): object()}])


class QueryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.conn = mentat.connect()
        cls.report = people(cls.conn)
        cls.ada = cls.report.tempids["ada"]
        cls.bob = cls.report.tempids["bob"]
        cls.cy = cls.report.tempids["cy"]

    @classmethod
    def tearDownClass(cls) -> None:
        cls.conn.close()

    def test_relation(self) -> None:
        rows = self.conn.q("[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]")
        self.assertIsInstance(rows, list)
        self.assertTrue(all(isinstance(r, tuple) for r in rows))
        self.assertEqual(sorted(rows), [("Ada", 36), ("Bob", 41), ("Cy", 25)])
        self.assertEqual(self.conn.q("[:find ?n :where [?e :person/name ?n] [?e :person/age 99]]"),
                         [])

    def test_collection(self) -> None:
        names = self.conn.q("[:find [?n ...] :where [_ :person/name ?n]]")
        self.assertEqual(sorted(names), ["Ada", "Bob", "Cy"])
        self.assertEqual(self.conn.q("[:find [?n ...] :where [?e :person/name ?n] "
                                     "[?e :person/age 99]]"), [])

    def test_tuple(self) -> None:
        t = self.conn.q('[:find [?n ?a] :where [?e :person/name ?n] [?e :person/age ?a] '
                        '[(= ?n "Bob")]]')
        self.assertEqual(t, ("Bob", 41))
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
        self.assertEqual(list(rows[0]), ["name", "age"])  # declared order
        rows = self.conn.q('[:find ?n :strs who :where [?e :person/name ?n] [(= ?n "Cy")]]')
        self.assertEqual(rows, [{"who": "Cy"}])
        rows = self.conn.q('[:find ?n :syms who :where [?e :person/name ?n] [(= ?n "Cy")]]')
        self.assertEqual(rows, [{"who": "Cy"}])
        # the map form of a query
        rows = self.conn.q('{:find [?n] :keys [n] :where [[?e :person/name ?n] '
                           '[(= ?n "Ada")]]}')
        self.assertEqual(rows, [{"n": "Ada"}])

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
        q = ("[:find ?e ?x :in $ [[?n ?x]] :where [?e :person/name ?n]]")
        self.assertEqual(sorted(self.conn.q(q, [("Ada", 1), ("Cy", 2)])),
                         [(self.ada, 1), (self.cy, 2)])
        # a Keyword input
        q = "[:find [?n ...] :in $ ?t :where [?e :person/tags ?t] [?e :person/name ?n]]"
        self.assertEqual(self.conn.q(q, K("math")), ["Ada"])
        # an entity given by a lookup ref
        q = "[:find ?a . :in $ ?e :where [?e :person/age ?a]]"
        self.assertEqual(self.conn.q(q, [K("person/name"), "Bob"]), 41)

    def test_rules_as_edn(self) -> None:
        rules = Edn("""[[(friend-of ?a ?b) [?a :person/friend ?b]]
                        [(friend-of ?a ?b) [?a :person/friend ?x] (friend-of ?x ?b)]]""")
        q = ("[:find [?n ...] :in $ % ?start :where (friend-of ?start ?f) "
             "[?f :person/name ?n]]")
        self.assertEqual(sorted(self.conn.q(q, rules, self.ada)), ["Bob", "Cy"])
        self.assertEqual(self.conn.q(q, rules, self.cy), [])
        # the same rules as Python data (heads as edn.List)
        f = Symbol
        data = [[mentat.List([f("friend-of"), f("?a"), f("?b")]),
                 [f("?a"), K("person/friend"), f("?b")]]]
        self.assertEqual(sorted(self.conn.q(q, data, self.bob)), ["Cy"])

    def test_str_input_is_a_string_not_edn(self) -> None:
        q = "[:find ?e . :in $ ?n :where [?e :person/name ?n]]"
        self.assertIsNone(self.conn.q(q, ":person/name"))
        self.assertIsNone(self.conn.q(q, '"Ada"'))

    def test_parse_error_carries_line_column(self) -> None:
        with self.assertRaises(mentat.ParseError) as cm:
            self.conn.q("[:find ?e\n :where [?e :person/name \"x]")
        e = cm.exception
        self.assertEqual(e.code, 2)
        self.assertEqual(e.code_name, "parse error")
        self.assertEqual((e.line, e.column), (2, 26))
        self.assertRegex(e.message, r"2:26")
        self.assertIsInstance(e, ValueError)

    def test_query_errors(self) -> None:
        with self.assertRaises(mentat.Error) as cm:
            self.conn.q("[:find ?x :where [?x :no/such ?y]]")
        self.assertIn(":no/such", cm.exception.message)
        with self.assertRaises(mentat.InvalidArgument):
            self.conn.q("[:find ?e . :in $ ?n :where [?e :person/name ?n]]")  # no input
        with self.assertRaises(TypeError):
            self.conn.q("[:find ?e . :in $ $db :where [?e :person/name]]", self.conn.db())

    def test_timeout_option_and_interrupt(self) -> None:
        # A generous timeout lets the query finish; interrupt with nothing running is
        # harmless and the connection stays usable.
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]",
                                     timeout=30), 3)
        self.conn.interrupt()
        self.assertEqual(self.conn.q("[:find (count ?e) . :where [?e :person/name]]"), 3)
        with self.assertRaises(ValueError):
            self.conn.q("[:find ?e . :where [?e :person/name]]", timeout=-1)

    def test_columns(self) -> None:
        self.assertEqual(self.conn.columns("[:find ?e (count ?n) :where [?e :person/name ?n]]"),
                         ["?e", "(count ?n)"])

    def test_explain(self) -> None:
        plan = self.conn.explain("[:find ?e :where [?e :person/name]]")
        self.assertIsInstance(plan, str)
        self.assertTrue(plan.strip())


class TypesTest(unittest.TestCase):
    """Values of each type round-trip through transactions, query inputs and results."""

    VALUES = [
        ("t/str", 'quote " backslash \\ newline \n tab \t cr \r nul \x00 bell \x07 '
                  'del \x7f é ü 中文 😀'),
        ("t/long", -(2 ** 63)),
        ("t/long", 2 ** 63 - 1),
        ("t/double", -0.1),
        ("t/double", 1e300),
        ("t/double", 2.5e-7),
        ("t/bool", False),
        ("t/bool", True),
        ("t/kw", K("some.ns/kw-name?")),
        ("t/inst", dt.datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)),
        ("t/inst", dt.datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC)),
        ("t/uuid", uuid.UUID("123e4567-e89b-12d3-a456-426614174000")),
        ("t/bytes", bytes(range(256))),
        ("t/bytes", b""),
        ("t/dec", Decimal("-12345678901234567890.000123")),
        ("t/big", 12345678901234567890123456789),
        ("t/uri", Uri("https://example.org/a?b=c#d")),
        ("t/sym", Symbol("my.ns/f")),
    ]

    @classmethod
    def setUpClass(cls) -> None:
        cls.conn = mentat.connect()
        cls.conn.transact(TYPES_SCHEMA)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.conn.close()

    def test_round_trip(self) -> None:
        for attr, value in self.VALUES:
            with self.subTest(attr=attr, value=value):
                r = self.conn.transact([{K("db/id"): "e", K(attr): value}])
                e = r.tempids["e"]
                q = "[:find ?v . :in $ ?e :where [?e :%s ?v]]" % attr
                got = self.conn.q(q, e)
                self.assertEqual(got, value)
                self.assertEqual(type(got) is bool, type(value) is bool)
                if isinstance(value, dt.datetime):
                    self.assertEqual(got.tzinfo, UTC)
                # the value as a query input finds the entity
                q = "[:find [?e ...] :in $ ?v :where [?e :%s ?v]]" % attr
                self.assertIn(e, self.conn.q(q, value))
                self.assertEqual(self.conn.pull([K(attr)], e), {K(attr): value})

    def test_naive_and_aware_datetimes(self) -> None:
        naive = dt.datetime(2020, 5, 17, 12, 0, 0, 5)
        aware = dt.datetime(2020, 5, 17, 14, 0, 0, 5,
                            tzinfo=dt.timezone(dt.timedelta(hours=2)))
        r = self.conn.transact([{K("db/id"): "n", K("t/inst"): naive},
                                {K("db/id"): "a", K("t/inst"): aware}])
        want = dt.datetime(2020, 5, 17, 12, 0, 0, 5, tzinfo=UTC)
        for t in ("n", "a"):
            self.assertEqual(self.conn.q("[:find ?v . :in $ ?e :where [?e :t/inst ?v]]",
                                         r.tempids[t]), want)

    def test_float_and_bool_inputs_are_typed(self) -> None:
        r = self.conn.transact([{K("db/id"): "f", K("t/double"): 3.0, K("t/bool"): True}])
        e = r.tempids["f"]
        self.assertIn(e, self.conn.q("[:find [?e ...] :in $ ?v :where [?e :t/double ?v]]",
                                     3.0))
        self.assertIn(e, self.conn.q("[:find [?e ...] :in $ ?v :where [?e :t/bool ?v]]",
                                     True))
        self.assertNotIn(e, self.conn.q("[:find [?e ...] :in $ ?v :where [?e :t/bool ?v]]",
                                        False))


class TimeTest(unittest.TestCase):
    def setUp(self) -> None:
        self.conn = mentat.connect()
        self.conn.transact(SCHEMA)
        self.r1 = self.conn.transact('[{:db/id "a" :person/name "Ada" :person/age 1}]')
        self.ada = self.r1.tempids["a"]
        time.sleep(0.01)
        self.r2 = self.conn.transact([[K("db/add"), self.ada, K("person/age"), 2]])
        time.sleep(0.01)
        self.r3 = self.conn.transact([[K("db/add"), self.ada, K("person/age"), 3],
                                      {K("person/name"): "Bob", K("person/age"): 50}])

    def tearDown(self) -> None:
        self.conn.close()

    AGE = "[:find ?a . :in $ ?e :where [?e :person/age ?a]]"

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
        old = db.as_of(self.r1.tx_id)
        self.assertEqual(old.pull("[:person/age]", self.ada), {K("person/age"): 1})
        self.assertEqual(old.entity(self.ada)[K("person/age")], 1)

    def test_since(self) -> None:
        c = self.conn
        names = "[:find [?n ...] :where [?e :person/name ?n]]"
        self.assertEqual(sorted(c.q(names)), ["Ada", "Bob"])
        self.assertEqual(c.q(names, since=self.r2.tx_id), ["Bob"])
        self.assertEqual(c.db().since(self.r2).q(names), ["Bob"])
        self.assertEqual(c.db().since(self.r2.tx_instant).q(names), ["Bob"])
        self.assertEqual(c.q(names, since=self.r3.tx_id), [])

    def test_history(self) -> None:
        q = ("[:find ?a ?tx ?added :in $ ?e :where [?e :person/age ?a ?tx ?added]]")
        rows = set(self.conn.q(q, self.ada, history=True))
        self.assertEqual(rows, {(1, self.r1.tx_id, True), (1, self.r2.tx_id, False),
                                (2, self.r2.tx_id, True), (2, self.r3.tx_id, False),
                                (3, self.r3.tx_id, True)})
        self.assertEqual(set(self.conn.db().history().q(q, self.ada)), rows)

    def test_basis_t(self) -> None:
        db = self.conn.db()
        t = db.basis_t
        self.assertIsInstance(t, int)
        self.assertGreater(t, 0)
        self.conn.transact('[{:person/name "Cy"}]')
        self.assertEqual(self.conn.db().basis_t, t + 1)
        self.assertEqual(db.basis_t, t)  # a value does not change
        self.assertIsNone(db.q('[:find ?e . :where [?e :person/name "Cy"]]'))
        self.assertIn("basis_t", repr(db))

    def test_bad_points(self) -> None:
        with self.assertRaises(TypeError):
            self.conn.q(self.AGE, self.ada, as_of="yesterday")
        with self.assertRaises(TypeError):
            self.conn.db().as_of(1.5)


class PullEntityDatomsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.conn = mentat.connect()
        cls.report = people(cls.conn)
        cls.ada, cls.bob, cls.cy = (cls.report.tempids[k] for k in ("ada", "bob", "cy"))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.conn.close()

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

    def test_pull_star_and_reverse(self) -> None:
        got = self.conn.pull("[*]", self.cy)
        self.assertEqual(got, {K("db/id"): self.cy, K("person/name"): "Cy",
                               K("person/age"): 25})
        got = self.conn.pull([K("person/name"), {K("person/_friend"): [K("person/name")]}],
                             self.cy)
        self.assertEqual(sorted(m[K("person/name")] for m in got[K("person/_friend")]),
                         ["Ada", "Bob"])
        # pull by ident
        got = self.conn.pull("[:db/ident :db/valueType]", K("person/name"))
        self.assertEqual(got[K("db/ident")], K("person/name"))

    def test_pull_many(self) -> None:
        got = self.conn.pull_many("[:person/name]", [self.ada, self.bob])
        self.assertEqual(got, [{K("person/name"): "Ada"}, {K("person/name"): "Bob"}])

    def test_pull_missing_and_errors(self) -> None:
        self.assertIsNone(self.conn.pull("[*]", [K("person/name"), "Nobody"]))
        with self.assertRaises(mentat.NotFoundError):
            self.conn.entity([K("person/name"), "Nobody"])
        with self.assertRaises(mentat.ParseError):
            self.conn.pull("[:person/name", self.ada)
        with self.assertRaises(TypeError):
            self.conn.pull("[*]", "Ada")

    def test_entity(self) -> None:
        e = self.conn.entity(self.ada)
        self.assertEqual(e[K("db/id")], self.ada)
        self.assertEqual(e[K("person/name")], "Ada")
        self.assertEqual(e[K("person/age")], 36)
        self.assertEqual(e[K("person/email")], "ada@example.org")
        self.assertEqual(set(e[K("person/tags")]), {K("math"), K("poetry")})
        e2 = self.conn.entity([K("person/name"), "Bob"])
        self.assertEqual(e2[K("db/id")], self.bob)
        self.assertEqual(self.conn.db().entity(Edn('[:person/name "Cy"]'))[K("person/age")], 25)

    def test_datoms(self) -> None:
        ds = self.conn.datoms("eavt", self.cy)
        self.assertTrue(all(isinstance(d, mentat.Datom) for d in ds))
        self.assertEqual({(d.a, d.v) for d in ds},
                         {(K("person/name"), "Cy"), (K("person/age"), 25)})
        self.assertTrue(all(d.e == self.cy and d.added for d in ds))
        self.assertTrue(all(d.tx == self.report.tx_id for d in ds))
        ds = self.conn.datoms(":avet", K("person/name"), "Bob")
        self.assertEqual([(d.e, d.a, d.v) for d in ds], [(self.bob, K("person/name"), "Bob")])
        ds = self.conn.datoms(K("aevt"), K("person/age"))
        self.assertEqual(sorted(d.v for d in ds), [25, 36, 41])
        ds = self.conn.datoms("vaet", self.cy)
        self.assertEqual({d.e for d in ds}, {self.ada, self.bob})
        with self.assertRaises(mentat.Error):
            self.conn.datoms("nope")


class PreparedTest(unittest.TestCase):
    def test_prepared_runs_with_new_inputs_and_sees_new_data(self) -> None:
        with mentat.connect() as conn:
            r = people(conn)
            p = conn.prepare("[:find ?a . :in $ ?n :where [?e :person/name ?n] "
                             "[?e :person/age ?a]]")
            self.assertEqual(p.run("Ada"), 36)
            self.assertEqual(p.run("Bob"), 41)
            self.assertIsNone(p.run("Dee"))
            conn.transact('[{:person/name "Dee" :person/age 7}]')
            self.assertEqual(p.run("Dee"), 7)
            self.assertEqual(p("Cy"), 25)
            conn.transact([[K("db/add"), r.tempids["ada"], K("person/age"), 99]])
            self.assertEqual(p.run("Ada"), 99)
            self.assertEqual(p.run("Ada", as_of=r.tx_id), 36)
            coll = conn.prepare("[:find [?n ...] :where [_ :person/name ?n]]")
            self.assertEqual(sorted(coll.run()), ["Ada", "Bob", "Cy", "Dee"])
            # On a Db value: that value, whatever comes later.
            db = conn.db()
            pdb = db.prepare("[:find (count ?e) . :where [?e :person/name]]")
            conn.transact('[{:person/name "Eve"}]')
            self.assertEqual(pdb.run(), 4)
            self.assertEqual(conn.prepare("[:find (count ?e) . :where [?e :person/name]]").run(),
                             5)
            with self.assertRaises(mentat.ParseError):
                conn.prepare("[:find ?e :where")


class ListenTest(unittest.TestCase):
    def test_listen_reports_and_filters(self) -> None:
        with mentat.connect() as conn:
            conn.transact(SCHEMA)
            conn.transact("[{:db/ident :other/x :db/valueType :db.type/long "
                          ":db/cardinality :db.cardinality/one}]")
            got = []
            named = []
            cond = threading.Condition()

            def on_all(report: mentat.TxReport) -> None:
                with cond:
                    got.append(report)
                    cond.notify_all()

            def on_names(report: mentat.TxReport) -> None:
                with cond:
                    named.append(report)
                    cond.notify_all()

            all_l = conn.listen(on_all)
            name_l = conn.listen(on_names, attributes=[K("person/name"), "person/age"])
            r1 = conn.transact("[[:db/add \"o\" :other/x 1]]")
            r2 = conn.transact('[{:db/id "p" :person/name "Ada"}]')
            with cond:
                self.assertTrue(cond.wait_for(lambda: len(got) >= 2 and len(named) >= 1,
                                              timeout=10))
            self.assertEqual([r.tx_id for r in got], [r1.tx_id, r2.tx_id])
            self.assertEqual([r.tx_id for r in named], [r2.tx_id])
            self.assertIsInstance(got[1], mentat.TxReport)
            self.assertEqual(got[1].tx_data, r2.tx_data)
            self.assertEqual(got[1].tx_instant, r2.tx_instant)
            all_l.stop()
            name_l.stop()
            self.assertTrue(all_l.stopped)
            conn.transact('[{:person/name "Bob"}]')
            time.sleep(0.2)
            self.assertEqual(len(got), 2)
            self.assertEqual(len(named), 1)
            all_l.stop()  # twice: nothing

    def test_callback_exception_does_not_escape(self) -> None:
        with mentat.connect() as conn:
            conn.transact(SCHEMA)
            errors = []
            seen = []
            done = threading.Event()

            def bad(report: mentat.TxReport) -> None:
                seen.append(report.tx_id)
                if len(seen) == 2:
                    done.set()
                raise RuntimeError("boom %d" % len(seen))

            with conn.listen(bad, on_error=errors.append):
                conn.transact('[{:person/name "A"}]')
                conn.transact('[{:person/name "B"}]')
                self.assertTrue(done.wait(10))
            self.assertEqual(len(seen), 2)
            time.sleep(0.05)
            self.assertEqual([str(e) for e in errors], ["boom 1", "boom 2"])
            # the connection still works
            self.assertEqual(len(conn.q("[:find ?e :where [?e :person/name]]")), 2)

    def test_stop_from_within_callback_and_close_stops(self) -> None:
        conn = mentat.connect()
        conn.transact(SCHEMA)
        calls = []
        first = threading.Event()
        holder = {}

        def once(report: mentat.TxReport) -> None:
            calls.append(report.tx_id)
            holder["l"].stop()
            first.set()

        holder["l"] = conn.listen(once)
        conn.transact('[{:person/name "A"}]')
        self.assertTrue(first.wait(10))
        conn.transact('[{:person/name "B"}]')
        time.sleep(0.2)
        self.assertEqual(len(calls), 1)
        more = []
        conn.listen(lambda r: more.append(r))
        conn.close()  # stops the listener
        self.assertTrue(conn.closed)
        self.assertEqual(more, [])


class ThreadsTest(unittest.TestCase):
    def test_many_threads_one_connection(self) -> None:
        with mentat.connect() as conn:
            conn.transact(SCHEMA)
            conn.transact([{K("person/name"): "p%d" % i, K("person/age"): i}
                           for i in range(200)])
            q = "[:find ?a . :in $ ?n :where [?e :person/name ?n] [?e :person/age ?a]]"
            prepared = conn.prepare("[:find (count ?e) . :in $ ?min :where [?e :person/age ?a] "
                                    "[(>= ?a ?min)]]")
            failures = []
            barrier = threading.Barrier(8)

            def worker(k: int) -> None:
                try:
                    barrier.wait(10)
                    for j in range(60):
                        i = (k * 37 + j * 11) % 200
                        got = conn.q(q, "p%d" % i)
                        if got != i:
                            failures.append((k, i, got))
                        n = prepared.run(i)
                        if n != 200 - i:
                            failures.append((k, "count", i, n))
                        if j % 20 == 0:
                            rows = conn.db().q("[:find ?n ?a :where [?e :person/name ?n] "
                                               "[?e :person/age ?a] [(< ?a 3)]]")
                            if sorted(rows) != [("p0", 0), ("p1", 1), ("p2", 2)]:
                                failures.append((k, "rows", rows))
                except Exception as e:  # pragma: no cover - reported below
                    failures.append((k, repr(e)))

            threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            self.assertFalse(any(t.is_alive() for t in threads))
            self.assertEqual(failures, [])

    def test_writes_from_threads(self) -> None:
        with mentat.connect() as conn:
            conn.transact(SCHEMA)
            errors = []

            def writer(k: int) -> None:
                try:
                    for j in range(10):
                        conn.transact([{K("person/name"): "w%d-%d" % (k, j)}])
                except Exception as e:  # pragma: no cover
                    errors.append(e)

            threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            self.assertEqual(errors, [])
            self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 80)

    SLOW = ("[:find (count ?s) . :where [_ :person/name ?a] [_ :person/name ?b] "
            "[_ :person/name ?c] [(str ?a ?b ?c) ?s]]")  # 27 million rows

    def slow_store(self) -> mentat.Connection:
        conn = mentat.connect()
        conn.transact(SCHEMA)
        conn.transact([{K("person/name"): "p%d" % i} for i in range(300)])
        return conn

    def test_interrupt_from_another_thread(self) -> None:
        with self.slow_store() as conn:
            outcome = []

            def reader() -> None:
                try:
                    outcome.append(conn.q(self.SLOW))
                except mentat.Error as e:
                    outcome.append(e)

            t = threading.Thread(target=reader)
            start = time.monotonic()
            t.start()
            while t.is_alive() and time.monotonic() - start < 60:
                time.sleep(0.05)
                conn.interrupt()
            t.join(60)
            self.assertEqual(len(outcome), 1)
            self.assertIsInstance(outcome[0], mentat.Interrupted)
            self.assertEqual(outcome[0].code, 8)
            # the connection stays usable
            self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 300)

    def test_timeout(self) -> None:
        with self.slow_store() as conn:
            start = time.monotonic()
            with self.assertRaises(mentat.Interrupted) as cm:
                conn.q(self.SLOW, timeout=0.1)
            self.assertLess(time.monotonic() - start, 30)
            self.assertIn("timed out", cm.exception.message)
            with self.assertRaises(mentat.Interrupted):
                conn.db().q(self.SLOW, timeout=dt.timedelta(milliseconds=50))
            with self.assertRaises(mentat.Interrupted):
                conn.prepare(self.SLOW).run(timeout=0.05)


class EdnTest(unittest.TestCase):
    def test_round_trip_nested(self) -> None:
        value = {
            K("a/b"): [1, -2, 3.5, -0.25, 2 ** 64, Decimal("1.50"), None, True, False],
            K("s"): 'q"uote\\ \n\t\r \x01 é 😀',
            K("set"): frozenset({1, K("x"), "y", (1, 2)}),
            K("nested"): {"deep": [[[{K("k"): [Symbol("sym"), Symbol("ns/sym")]}]]]},
            K("inst"): dt.datetime(2001, 2, 3, 4, 5, 6, 7000, tzinfo=UTC),
            K("uuid"): uuid.UUID(int=12345),
            K("bytes"): b"\x00\xffabc",
            K("uri"): Uri("urn:x:y"),
            K("list"): mentat.List([Symbol("f"), 1]),
            K("char"): mentat.Char("\n"),
            (1, 2): "vector key",
            K("empty"): [[], {}, frozenset()],
        }
        text = edn.dumps(value)
        back = edn.loads(text)
        self.assertEqual(back, value)
        self.assertIsInstance(back[K("list")], mentat.List)
        self.assertIsInstance(back[K("uri")], Uri)
        self.assertIsInstance(back[K("char")], mentat.Char)
        self.assertIsInstance(back[K("set")], frozenset)
        self.assertEqual(edn.loads(edn.dumps(back)), value)
        # mentat's printer reads the same text back to an equal value
        with mentat.connect() as conn:
            self.assertEqual(conn.q("[:find ?x . :in $ ?v :where [(ground ?v) ?x]]",
                                    [value[K("a/b")][0], value[K("s")]]),
                             [value[K("a/b")][0], value[K("s")]])

    def test_reader_forms(self) -> None:
        text = r'''
        ; a comment
        {:a [1, 2 ,3] :b #_ :discarded #_ #_ 1 2 "kept"
         :c \a :d \newline :e \u0041 :f "\u00e9\ud83d\ude00\"\\\b\f"
         :g -7 :h +7 :i 1e3 :j 7N :k 1.5M :l ##Inf :m ##-Inf
         :n #inst "2020-01-02T03:04:05+02:00" :o #inst "2020" :p nil
         :q #my/tag [1] :r #{} :s () :t sym/bol :u :ns/kw}'''
        v = edn.loads(text)
        self.assertEqual(v[K("a")], [1, 2, 3])
        self.assertEqual(v[K("b")], "kept")
        self.assertEqual((v[K("c")], v[K("d")], v[K("e")]), ("a", "\n", "A"))
        self.assertEqual(v[K("f")], 'é😀"\\\b\f')
        self.assertEqual((v[K("g")], v[K("h")], v[K("i")], v[K("j")]), (-7, 7, 1000.0, 7))
        self.assertIsInstance(v[K("i")], float)
        self.assertEqual(v[K("k")], Decimal("1.5"))
        self.assertEqual((v[K("l")], v[K("m")]), (math.inf, -math.inf))
        self.assertEqual(v[K("n")], dt.datetime(2020, 1, 2, 1, 4, 5, tzinfo=UTC))
        self.assertEqual(v[K("o")], dt.datetime(2020, 1, 1, tzinfo=UTC))
        self.assertIsNone(v[K("p")])
        self.assertEqual(v[K("q")], mentat.Tagged("my/tag", [1]))
        self.assertEqual(v[K("r")], frozenset())
        self.assertEqual(v[K("s")], [])
        self.assertEqual(v[K("t")], Symbol("sym/bol"))
        self.assertEqual(v[K("u")].namespace, "ns")
        self.assertTrue(math.isnan(edn.loads("##NaN")))
        self.assertEqual(edn.loads_all("1 [2] :x"), [1, [2], K("x")])
        self.assertEqual(edn.loads_prefix("[1 2] rest"), ([1, 2], " rest"))

    def test_reader_errors(self) -> None:
        cases = {
            "[1 2": (1, 1), "{:a}": (1, 1), '"abc': (1, 1), "[1\n 2)": (2, 3),
            "#_": (1, 1), "0x10": (1, 1), r'"\q"': (1, 2), "#inst 1": (1, 1),
            '#inst "2020-13-01"': (1, 1), "::kw": (1, 1), "1/2": (1, 1), ")": (1, 1),
            '"\\ud800"': (1, 1), "": (1, 1), "{:a 1 :a 2}": (1, 1), "007": (1, 1),
            '#uuid "nope"': (1, 1), '#bytes "abc"': (1, 1),
        }
        for text, pos in cases.items():
            with self.subTest(text=text):
                with self.assertRaises(edn.EdnParseError) as cm:
                    edn.loads(text)
                self.assertEqual((cm.exception.line, cm.exception.column), pos)
                self.assertIsInstance(cm.exception, mentat.ParseError)
                self.assertIsInstance(cm.exception, ValueError)
        with self.assertRaises(edn.EdnParseError) as cm:
            edn.loads("1\n  2")
        self.assertEqual((cm.exception.line, cm.exception.column), (2, 3))
        self.assertEqual(edn.loads("1 #_ 2 ; c"), 1)

    def test_writer(self) -> None:
        d = edn.dumps
        self.assertEqual(d(None), "nil")
        self.assertEqual(d([True, False]), "[true false]")
        self.assertEqual(d((1, "a")), '[1 "a"]')
        self.assertEqual(d(2 ** 63), "9223372036854775808N")
        self.assertEqual(d(-(2 ** 63)), "-9223372036854775808")
        self.assertEqual(d(1.0), "1.0")
        self.assertEqual(d(1e300), "1e300")
        self.assertEqual(d(2.5e-7), "2.5e-7")
        self.assertEqual(d('a"b\\c\nd\te\rf\x00g\x1fh\x7f'),
                         '"a\\"b\\\\c\\nd\\te\\rf\\u0000g\\u001fh\\u007f"')
        self.assertEqual(d("é😀"), '"é😀"')
        self.assertEqual(d(K(":a/b")), ":a/b")
        self.assertEqual(d(Symbol("?x")), "?x")
        self.assertEqual(d(dt.datetime(2020, 1, 2, 3, 4, 5, 120000, tzinfo=UTC)),
                         '#inst "2020-01-02T03:04:05.120Z"')
        self.assertEqual(d(dt.datetime(2020, 1, 2, 3, 4, 5, 1)),
                         '#inst "2020-01-02T03:04:05.000001Z"')
        self.assertEqual(d(uuid.UUID(int=1)), '#uuid "00000000-0000-0000-0000-000000000001"')
        self.assertEqual(d(b"\x01\xab"), '#bytes "01ab"')
        self.assertEqual(d(bytearray(b"\x02")), '#bytes "02"')
        self.assertEqual(d(Decimal("-1.50")), "-1.50M")
        self.assertEqual(d(Uri("http://x")), '#uri "http://x"')
        self.assertEqual(d(Edn("#{1 2}")), "#{1 2}")
        self.assertEqual(d({K("a"): 1, K("b"): [2]}), "{:a 1, :b [2]}")
        self.assertEqual(d(mentat.List([Symbol("f"), 1])), "(f 1)")
        self.assertEqual(d(set()), "#{}")
        self.assertEqual(d(mentat.Char("a")), "\\a")
        for bad in (math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("Infinity")):
            with self.assertRaises(ValueError):
                d(bad)
        with self.assertRaises(TypeError):
            d(dt.date(2020, 1, 1))
        with self.assertRaises(TypeError):
            d(object())
        deep = []
        cur = deep
        for _ in range(5000):
            nxt: list = []
            cur.append(nxt)
            cur = nxt
        text = d(deep)
        self.assertEqual(text, "[" * 5001 + "]" * 5001)
        back = edn.loads(text)
        depth = 0
        while back:
            self.assertEqual(len(back), 1)
            back = back[0]
            depth += 1
        self.assertEqual(depth, 5000)

    def test_keyword_and_symbol(self) -> None:
        a, b = K("person/name"), K(":person/name")
        self.assertEqual(a, b)
        self.assertEqual(hash(a), hash(b))
        self.assertEqual(str(a), ":person/name")
        self.assertEqual((a.namespace, a.name), ("person", "name"))
        self.assertEqual((K("x").namespace, K("x").name), (None, "x"))
        self.assertEqual(len({a, b, K("person/age")}), 2)
        self.assertNotEqual(K("a"), Symbol("a"))
        self.assertNotEqual(K("a"), ":a")
        self.assertEqual(sorted([K("b/a"), K("a/z"), K("a/b")]),
                         [K("a/b"), K("a/z"), K("b/a")])
        self.assertEqual(repr(a), "Keyword(':person/name')")
        self.assertEqual(Symbol("my.ns/f").namespace, "my.ns")
        for bad in ("", "a b", "x[y"):
            with self.assertRaises(ValueError):
                K(bad)
        import pickle
        self.assertEqual(pickle.loads(pickle.dumps(a)), a)


class ErrorsTest(unittest.TestCase):
    def test_error_classes_by_code(self) -> None:
        from mentat.errors import error_for_code
        expected = {1: mentat.InvalidArgument, 2: mentat.ParseError, 3: mentat.NotFoundError,
                    4: mentat.SchemaError, 5: mentat.ConflictError, 6: mentat.CasMismatchError,
                    7: mentat.BusyError, 8: mentat.Interrupted, 9: mentat.IoError,
                    10: mentat.CorruptError, 11: mentat.UnsupportedError,
                    12: mentat.InternalError}
        from mentat import _native
        for code, cls in expected.items():
            e = error_for_code(code, "msg")
            self.assertIsInstance(e, cls)
            self.assertIsInstance(e, mentat.Error)
            self.assertEqual(e.code, code)
            self.assertEqual(e.code_name, _native.code_name(code))
            self.assertEqual(str(e), "msg")
        self.assertEqual(_native.code_name(2), "parse error")

    def test_cas_mismatch(self) -> None:
        with mentat.connect() as conn:
            r = people(conn)
            ada = r.tempids["ada"]
            with self.assertRaises(mentat.CasMismatchError) as cm:
                conn.transact([[K("db/cas"), ada, K("person/age"), 1, 2]])
            self.assertEqual(cm.exception.code, 6)
            conn.transact([[K("db/cas"), ada, K("person/age"), 36, 37]])
            self.assertEqual(conn.pull("[:person/age]", ada), {K("person/age"): 37})

    def test_not_a_store(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "junk.db")
            with open(path, "wb") as f:
                f.write(b"this is not a database file at all" * 200)
            with self.assertRaises(mentat.Error) as cm:
                mentat.connect(path)
            self.assertIn(cm.exception.code, (9, 10))


class ShellTest(unittest.TestCase):
    def run_shell(self, script: str, *args: str) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
        return subprocess.run([sys.executable, "-m", "mentat", *args], input=script,
                              capture_output=True, text=True, env=env, timeout=120)

    def test_shell_through_a_pipe(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "shell.db")
            script = "\n".join([
                "[{:db/ident :person/name :db/valueType :db.type/string",
                "  :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}",
                " {:db/ident :person/age :db/valueType :db.type/long",
                "  :db/cardinality :db.cardinality/one}]",
                '.t [{:person/name "Ada" :person/age 36}',
                '    {:person/name "Bob" :person/age 41}]',
                "[:find ?n ?a",
                " :where [?e :person/name ?n] [?e :person/age ?a] [(< ?a 40)]]",
                '.q [:find ?a . :in $ ?n :where [?e :person/name ?n] [?e :person/age ?a]] "Bob"',
                '.pull [:person/name :person/age] [:person/name "Ada"]',
                '.entity [:person/name "Bob"]',
                ".q [:find ?x :where [?x :no/such ?y]]",
                "[:find ?x :where [?x",
                "  :no/such2 ?y]]",
                '{:person/name "Cy"}',
                ".q [:find [?n ...] :where [_ :person/name ?n]]",
                "garbage",
                ".exit",
                '.q [:find ?n . :where [_ :person/name ?n]]',
            ]) + "\n"
            p = self.run_shell(script, path)
            self.assertEqual(p.returncode, 0, p.stderr)
            out = p.stdout.splitlines()
            self.assertTrue(out[0].startswith("{:tx-id "), out)
            self.assertIn(":tx-data", out[1])
            self.assertIn('["Ada" 36]', out)
            self.assertIn("41", out)
            self.assertIn('{:person/age 36, :person/name "Ada"}', out)
            self.assertTrue(any(line.startswith("{:db/id ") and '"Bob"' in line
                                for line in out), out)
            errors = [line for line in out if line.startswith("error: ")]
            self.assertEqual(len(errors), 3, out)
            self.assertIn(":no/such", errors[0])
            self.assertIn('"Cy"', out)
            self.assertEqual(sorted(line for line in out if line in ('"Ada"', '"Bob"', '"Cy"')),
                             ['"Ada"', '"Bob"', '"Cy"'])
            self.assertNotIn('"Ada"', out[-1:] if out[-1] != '"Cy"' else [])
            # the data is in the file
            with mentat.connect(path) as conn:
                self.assertEqual(conn.q("[:find (count ?e) . :where [?e :person/name]]"), 3)
            # commands as arguments
            p = self.run_shell("", path, ".q [:find (count ?e) . :where [?e :person/name]]")
            self.assertEqual((p.returncode, p.stdout), (0, "3\n"))

    def test_shell_in_memory_and_bad_store(self) -> None:
        p = self.run_shell(".q [:find ?e . :where [?e :db/ident :db/ident]]\n")
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout.strip(), r"^\d+$")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "junk.db")
            with open(path, "wb") as f:
                f.write(b"not a store" * 1000)
            p = self.run_shell("", path)
            self.assertEqual(p.returncode, 1)
            self.assertIn("error:", p.stderr)


class LifetimeTest(unittest.TestCase):
    def test_db_outlives_connection_and_gc(self) -> None:
        conn = mentat.connect()
        people(conn)
        db = conn.db()
        p = db.prepare("[:find (count ?e) . :where [?e :person/name]]")
        conn.close()
        del conn
        gc.collect()
        self.assertEqual(db.q("[:find (count ?e) . :where [?e :person/name]]"), 3)
        self.assertEqual(p.run(), 3)
        self.assertEqual(db.history().q("[:find (count ?e) . :where [?e :person/name]]"), 3)


if __name__ == "__main__":
    unittest.main()
