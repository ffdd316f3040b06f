#!/usr/bin/env python3
"""`mentat serve` over real sockets on loopback (doc/server.md).

    server_test.py MENTAT_BINARY

Authentication refused and accepted, a read-only token refused on /transact, an oversized
body (413), a query past the time limit (504), too many requests at once (429), many
concurrent clients, shutdown during a request, TLS, EDN bodies and NDJSON streaming, and
the access log.
"""
import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

MENTAT = None
RW = "rw-token-0123456789"
RO = "ro-token-0123456789"
SCHEMA = (
    "[{:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one"
    "  :db/unique :db.unique/identity}"
    " {:db/ident :n/v :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"
)
# Three-way product of 400 values: slow enough to meet any limit below.
SLOW_QUERY = ("[:find (count ?a) . :where [?a :n/v ?x] [?b :n/v ?y] [?c :n/v ?z] "
              "[(< ?x ?y)] [(< ?y ?z)]]")


class Server:
    """A `mentat serve` process on a free loopback port."""

    def __init__(self, workdir, *extra, tokens=True, tls=None, host="127.0.0.1"):
        self.workdir = workdir
        self.log = os.path.join(workdir, "access-%d.log" % time.monotonic_ns())
        args = [MENTAT, "serve", os.path.join(workdir, "store.db"), "--listen", host + ":0",
                "--access-log", self.log]
        if tokens:
            path = os.path.join(workdir, "tokens")
            with open(path, "w") as f:
                f.write("# tokens\n%s read-write\n%s read-only\n" % (RW, RO))
            args += ["--tokens", path]
        if tls:
            args += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        self.tls = tls
        self.proc = subprocess.Popen(args + list(extra), stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        m = re.search(r"listening on https?://[^:]+:(\d+)", line)
        if not m:
            self.proc.kill()
            raise AssertionError("server did not start: " + line + self.proc.stderr.read())
        self.port = int(m.group(1))

    def conn(self, timeout=30):
        if self.tls:
            ctx = ssl.create_default_context(cafile=self.tls[0])
            return http.client.HTTPSConnection("localhost", self.port, timeout=timeout,
                                               context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, token=RW, headers=None, conn=None):
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        if isinstance(body, dict):
            body = json.dumps(body)
            h.setdefault("Content-Type", "application/json")
        c = conn or self.conn()
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read().decode()
        if conn is None:
            c.close()
        return r.status, data, r

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stderr.close()
        return self.proc.returncode


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.server = Server(cls.dir, "--timeout", "1500", "--max-body", "100000")
        s, body, _ = cls.server.request("POST", "/transact", {"tx-data": SCHEMA})
        assert s == 200, body
        people = "[" + " ".join('{:p/name "p%d"}' % i for i in range(50)) + "]"
        s, body, _ = cls.server.request("POST", "/transact", {"tx-data": people})
        assert s == 200, body
        values = "[" + " ".join("{:n/v %d}" % i for i in range(400)) + "]"
        s, body, _ = cls.server.request("POST", "/transact", {"tx-data": values})
        assert s == 200, body

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.tmp.cleanup()

    def q(self, query, token=RO, **fields):
        fields["query"] = query
        return self.server.request("POST", "/q", fields, token=token)

    def test_health_needs_no_token(self):
        s, body, _ = self.server.request("GET", "/health", token=None)
        self.assertEqual(s, 200)
        self.assertEqual(json.loads(body)["status"], "ok")
        self.assertGreaterEqual(json.loads(body)["basisT"], 3)

    def test_auth_refused_and_accepted(self):
        query = "[:find (count ?e) . :where [?e :p/name]]"
        s, body, r = self.q(query, token=None)
        self.assertEqual(s, 401)
        self.assertEqual(r.getheader("WWW-Authenticate"), "Bearer")
        self.assertIn("Bearer", json.loads(body)["error"])
        s, _, _ = self.q(query, token="not-a-token-at-all")
        self.assertEqual(s, 401)
        for path in ("/transact", "/pull", "/entity"):
            s, _, _ = self.server.request("POST", path, {"eid": 1}, token=None)
            self.assertEqual(s, 401, path)
        for path in ("/datoms", "/tx-range"):
            s, _, _ = self.server.request("GET", path, token=None)
            self.assertEqual(s, 401, path)
        s, body, _ = self.q(query, token=RO)
        self.assertEqual(s, 200, body)
        self.assertEqual(json.loads(body)["result"], 50)
        s, body, _ = self.q(query, token=RW)
        self.assertEqual(s, 200, body)

    def test_read_only_token_cannot_transact(self):
        s, body, _ = self.server.request("POST", "/transact", {"tx-data": '[{:p/name "ro"}]'},
                                         token=RO)
        self.assertEqual(s, 403)
        self.assertIn("read-only", json.loads(body)["error"])
        s, body, _ = self.q('[:find ?e . :where [?e :p/name "ro"]]')
        self.assertIsNone(json.loads(body)["result"])

    def test_transact_reports_tempids_and_errors_write_nothing(self):
        s, body, _ = self.server.request(
            "POST", "/transact", {"tx-data": '[{:db/id "x" :p/name "tx-a"}]'})
        self.assertEqual(s, 200, body)
        report = json.loads(body)
        self.assertIn("x", report["tempids"])
        self.assertGreater(report["tx-id"], 0)
        s, body, _ = self.server.request(
            "POST", "/transact", {"tx-data": '[{:p/name "tx-b"} {:n/v "not a long"}]'})
        self.assertEqual(s, 400)
        self.assertEqual(json.loads(body)["code"], "schema error")
        s, body, _ = self.q('[:find ?e . :where [?e :p/name "tx-b"]]')
        self.assertIsNone(json.loads(body)["result"])
        s, body, _ = self.server.request("POST", "/transact", {"tx-data": "[{:p/name "})
        self.assertEqual(s, 400)
        self.assertRegex(json.loads(body)["error"], r"\d+:\d+")

    def test_oversized_body_is_413(self):
        big = {"tx-data": "[" + "{:p/name \"%s\"}" % ("x" * 200000) + "]"}
        s, body, _ = self.server.request("POST", "/transact", big)
        self.assertEqual(s, 413)
        self.assertIn("larger", json.loads(body)["error"])

    def test_query_past_the_time_limit_is_504(self):
        t0 = time.monotonic()
        s, body, _ = self.q(SLOW_QUERY)
        self.assertEqual(s, 504, body)
        self.assertIn("time", json.loads(body)["error"])
        self.assertLess(time.monotonic() - t0, 10)
        # A lower limit of the request's own.
        t0 = time.monotonic()
        s, body, _ = self.q(SLOW_QUERY, timeout=100)
        self.assertEqual(s, 504, body)
        self.assertLess(time.monotonic() - t0, 1.4)
        # The server is fine afterwards.
        s, body, _ = self.q("[:find (count ?e) . :where [?e :p/name]]")
        self.assertEqual(s, 200)

    def test_many_concurrent_clients(self):
        errors = []

        def client(k):
            try:
                c = self.server.conn()
                for i in range(20):
                    name = "p%d" % ((k * 20 + i) % 50)
                    s, body, _ = self.server.request(
                        "POST", "/q", {"query": "[:find ?e . :in ?n :where [?e :p/name ?n]]",
                                       "inputs": [name]}, token=RO, conn=c)
                    if s != 200 or not isinstance(json.loads(body)["result"], int):
                        errors.append((s, body))
                c.close()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=client, args=(k,)) for k in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_query_forms(self):
        # Inputs, as-of and history in JSON.
        s, body, _ = self.q("[:find ?n . :in ?n :where [_ :p/name ?n]]", inputs=["p7"])
        self.assertEqual(json.loads(body)["result"], "p7")
        s, body, _ = self.q("[:find (count ?e) . :where [?e :p/name]]", asOf=268435457)
        self.assertEqual(s, 200, body)
        self.assertIsNone(json.loads(body)["result"])
        s, body, _ = self.q("[:find ?bad :where [?e :p/name]]")
        self.assertEqual(s, 400)
        s, body, _ = self.q("[:find ?e :where [?e :p/name]]", bogus=1)
        self.assertEqual(s, 400)
        self.assertIn("bogus", json.loads(body)["error"])
        # An EDN body and an EDN answer.
        s, body, _ = self.server.request(
            "POST", "/q",
            '{:query [:find ?e . :in ?n :where [?e :p/name ?n]] :inputs ["p3"]}', token=RO,
            headers={"Content-Type": "application/edn"})
        self.assertEqual(s, 200, body)
        self.assertRegex(body.strip(), r"^\d+$")
        # NDJSON: a line of columns, then a line per row.
        s, body, r = self.server.request(
            "POST", "/q", {"query": "[:find ?e ?v :where [?e :n/v ?v]]"}, token=RO,
            headers={"Accept": "application/x-ndjson"})
        self.assertEqual(s, 200)
        self.assertEqual(r.getheader("Content-Type"), "application/x-ndjson")
        lines = body.strip().split("\n")
        self.assertEqual(json.loads(lines[0]), {"columns": ["?e", "?v"]})
        self.assertEqual(len(lines), 401)
        self.assertEqual(sorted(json.loads(l)[1] for l in lines[1:]), list(range(400)))

    def test_pull_entity_datoms_tx_range(self):
        s, body, _ = self.server.request("POST", "/pull",
                                         {"pattern": "[:p/name]", "eid": '[:p/name "p1"]'},
                                         token=RO)
        self.assertEqual(s, 200, body)
        self.assertEqual(json.loads(body), {":p/name": "p1"})
        s, body, _ = self.server.request("POST", "/entity", {"eid": '[:p/name "p2"]'}, token=RO)
        self.assertEqual(s, 200, body)
        self.assertEqual(json.loads(body)[":p/name"], "p2")
        s, body, _ = self.server.request("POST", "/entity", {"eid": '[:p/name "nobody"]'},
                                         token=RO)
        self.assertEqual(s, 404, body)
        s, body, _ = self.server.request(
            "GET", "/datoms?index=avet&components=%5B%3Ap%2Fname%20%22p4%22%5D", token=RO)
        self.assertEqual(s, 200, body)
        rows = json.loads(body)
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0][1:3], [":p/name", "p4"])
        s, body, _ = self.server.request("GET", "/tx-range?from=1&to=3", token=RO)
        self.assertEqual(s, 200, body)
        txs = json.loads(body)
        self.assertEqual([t["t"] for t in txs], [1, 2])

    def test_access_log(self):
        self.server.request("GET", "/health", token=None)
        self.q("[:find ?e . :where [?e :p/name \"p1\"]]")
        deadline = time.monotonic() + 5
        text = ""
        # The server writes a request's line after it has sent the response, so wait
        # for both lines rather than reading the log once.
        while time.monotonic() < deadline and not (
                "GET /health 200" in text and re.search(r"ro POST /q 200", text)):
            with open(self.server.log) as f:
                text = f.read()
            time.sleep(0.05)
        self.assertIn("GET /health 200", text)
        self.assertRegex(text, r"ro POST /q 200")


class LifecycleTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def seed(self, server):
        s, body, _ = server.request("POST", "/transact", {"tx-data": SCHEMA})
        self.assertEqual(s, 200, body)
        values = "[" + " ".join("{:n/v %d}" % i for i in range(400)) + "]"
        s, body, _ = server.request("POST", "/transact", {"tx-data": values})
        self.assertEqual(s, 200, body)

    def test_too_many_requests_is_429(self):
        server = Server(self.dir, "--max-concurrent", "1", "--timeout", "2000")
        try:
            self.seed(server)
            slow = {}

            def start_slow():
                t = threading.Thread(target=lambda: slow.update(
                    r=server.request("POST", "/q", {"query": SLOW_QUERY}, token=RO)))
                t.start()
                return t

            t = start_slow()
            # Until the slow query is in flight (on a loaded machine it may take a while to
            # get there), a short one is answered; then it is refused. The slow one may
            # itself be refused when it arrives while a short one is in flight: then it
            # is sent again.
            deadline = time.monotonic() + 10
            s = None
            while time.monotonic() < deadline:
                if not t.is_alive():
                    t.join()
                    self.assertEqual(slow["r"][0], 429, slow["r"][1])
                    t = start_slow()
                s, body, r = server.request("POST", "/q",
                                            {"query": "[:find ?e :where [?e :n/v 1]]"}, token=RO)
                if s == 429:
                    break
                self.assertEqual(s, 200, body)
                time.sleep(0.02)
            self.assertEqual(s, 429, body)
            self.assertEqual(r.getheader("Retry-After"), "1")
            t.join()
            self.assertIn(slow["r"][0], (200, 504))
            s, _, _ = server.request("POST", "/q", {"query": "[:find ?e :where [?e :n/v 1]]"},
                                     token=RO)
            self.assertEqual(s, 200)
        finally:
            server.stop()

    def test_shutdown_finishes_the_request_in_flight(self):
        server = Server(self.dir, "--timeout", "1500")
        self.seed(server)
        slow = {}
        t = threading.Thread(target=lambda: slow.update(
            r=server.request("POST", "/q", {"query": SLOW_QUERY}, token=RO)))
        t.start()
        time.sleep(0.4)
        server.proc.send_signal(signal.SIGTERM)
        t.join(30)
        self.assertIn("r", slow, "the request in flight got no answer")
        self.assertIn(slow["r"][0], (200, 504))
        self.assertEqual(server.proc.wait(30), 0)
        rest = server.proc.stderr.read()
        self.assertIn("stopped", rest)
        with self.assertRaises(OSError):
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            c.request("GET", "/health")
            c.getresponse()
        server.stop()

    def test_tls(self):
        cert, key = os.path.join(self.dir, "cert.pem"), os.path.join(self.dir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost"],
                       check=True, capture_output=True)
        server = Server(self.dir, tls=(cert, key))
        try:
            s, body, _ = server.request("GET", "/health", token=None)
            self.assertEqual(s, 200, body)
            self.seed(server)
            s, body, _ = server.request("POST", "/q",
                                        {"query": "[:find (count ?e) . :where [?e :n/v]]"},
                                        token=RO)
            self.assertEqual(json.loads(body)["result"], 400)
            # Plain HTTP to the TLS port gets no answer.
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            with self.assertRaises((OSError, http.client.HTTPException)):
                c.request("GET", "/health")
                c.getresponse().read()
        finally:
            server.stop()

    def test_no_auth_only_on_loopback(self):
        out = subprocess.run([MENTAT, "serve", "", "--listen", "0.0.0.0:0", "--no-auth"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 1)
        self.assertIn("loopback", out.stderr)
        server = Server(self.dir, "--no-auth", tokens=False)
        try:
            s, body, _ = server.request("POST", "/q", {"query": "[:find ?e . :where [?e :db/ident :db/ident]]"},
                                        token=None)
            self.assertEqual(s, 200, body)
        finally:
            server.stop()

    def test_bad_arguments(self):
        for args, message in [
            (["serve", "x.db"], "--tokens"),
            (["serve", "x.db", "--tokens", "/nonexistent/tokens"], "tokens file"),
            (["serve", "x.db", "--no-auth", "--listen", "nohostport"], "HOST:PORT"),
            (["serve", "x.db", "--no-auth", "--tls-cert", "c.pem"], "--tls-key"),
            (["serve", "x.db", "--no-auth", "--bogus"], "--bogus"),
        ]:
            out = subprocess.run([MENTAT] + args, capture_output=True, text=True, timeout=30,
                                 cwd=self.dir)
            self.assertEqual(out.returncode, 1, args)
            self.assertIn(message, out.stderr, args)
        bad = os.path.join(self.dir, "bad-tokens")
        with open(bad, "w") as f:
            f.write("good-token-123 read-write\nshort\n")
        out = subprocess.run([MENTAT, "serve", "x.db", "--tokens", bad], capture_output=True,
                             text=True, timeout=30, cwd=self.dir)
        self.assertEqual(out.returncode, 1)
        self.assertIn("bad-tokens:2", out.stderr)
        out = subprocess.run([MENTAT, "serve", "--help"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0)
        for word in ("--listen", "--tokens", "--no-auth", "--tls-cert", "--max-body", "--timeout",
                     "--max-concurrent", "--access-log"):
            self.assertIn(word, out.stdout)


if __name__ == "__main__":
    MENTAT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=1)
