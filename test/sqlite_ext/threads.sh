#!/usr/bin/env bash
# Another host and many threads: Python's sqlite3 module loads the extension with
# load_extension(); eight threads, each with its own connection, transact and query one
# store file at once. Every transaction lands once, ids never collide, nothing crashes.
source "$(dirname "$0")/lib.sh"
find_python
if [ -z "$PY" ]; then
  skip "threads" "no Python with sqlite3 extension loading"
  finish
  exit $?
fi
# Under AddressSanitizer (make test-asan) the extension is instrumented and Python is not:
# CMake passes the runtime to preload; Python's own allocations are not ours to leak-check.
if [ -n "${MENTAT_ASAN_PRELOAD:-}" ]; then
  export LD_PRELOAD="$MENTAT_ASAN_PRELOAD"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi

out="$("$PY" - "$EXT" "$TMP/threads.db" <<'PY' 2>&1
import sqlite3, sys, threading
ext, db = sys.argv[1], sys.argv[2]
def conn():
    c = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    c.enable_load_extension(True)
    c.load_extension(ext)
    return c
conn().execute("SELECT edn_t(?, ?)", (db, "[{:db/ident :n/v :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]")).fetchone()
errors, ids = [], []
def work(k):
    try:
        c = conn()
        for i in range(25):
            r = c.execute("SELECT json_extract(edn_t(?, ?), '$.tempids.x')", (db, '[{:db/id "x" :n/v %d}]' % (k * 100 + i))).fetchone()[0]
            ids.append(r)
            n = c.execute("SELECT json_extract(edn_q(?, '[:find (count ?e) . :where [?e :n/v]]', NULL), '$.result')", (db,)).fetchone()[0]
            assert n >= 1, n
            rows = c.execute("SELECT count(*) FROM edn_rows(?, '[:find ?e ?v :where [?e :n/v ?v]]')", (db,)).fetchone()[0]
            assert rows >= n, (rows, n)
        c.close()
    except Exception as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
c = conn()
print("errors=%d %s" % (len(errors), errors[:2]))
print("ids=%d distinct=%d" % (len(ids), len(set(ids))))
print("count=" + c.execute("SELECT edn_q(?, '[:find (count ?e) . :where [?e :n/v]]', NULL)", (db,)).fetchone()[0])
print("sum=" + c.execute("SELECT edn_q(?, '[:find (sum ?v) . :where [_ :n/v ?v]]', NULL)", (db,)).fetchone()[0])
PY
)"
has_line "no errors" "errors=0 []" "$out"
has_line "every transaction got its own entity" "ids=200 distinct=200" "$out"
has_line "all 200 entities" 'count={"result":200}' "$out"
expected_sum=0
for k in $(seq 0 7); do for i in $(seq 0 24); do expected_sum=$((expected_sum + k * 100 + i)); done; done
has_line "all values" "sum={\"result\":$expected_sum}" "$out"

# Host mode from several threads, each with its own connection to one application
# database (the host's busy timeout, Python's 5 s, makes writers wait their turn).
out="$("$PY" - "$EXT" "$TMP/app.db" <<'PY' 2>&1
import sqlite3, sys, threading
ext, db = sys.argv[1], sys.argv[2]
def conn():
    c = sqlite3.connect(db, isolation_level=None, check_same_thread=False, timeout=30)
    c.enable_load_extension(True)
    c.load_extension(ext)
    return c
c0 = conn()
c0.execute("CREATE TABLE app(x)")
c0.execute("SELECT edn_t(NULL, '[{:db/ident :n/v :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]')").fetchone()
errors = []
def work(k):
    try:
        c = conn()
        for i in range(10):
            c.execute("SELECT edn_t(NULL, ?)", ('[{:n/v %d}]' % (k * 10 + i),)).fetchone()
            c.execute("INSERT INTO app VALUES (?)", (k,))
        c.close()
    except Exception as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("host_errors=%d %s" % (len(errors), errors[:2]))
print("host_count=" + c0.execute("SELECT edn_q(NULL, '[:find (count ?e) . :where [?e :n/v]]', NULL)").fetchone()[0])
print("app=%d" % c0.execute("SELECT count(*) FROM app").fetchone()[0])
PY
)"
has_line "host mode: no errors" "host_errors=0 []" "$out"
has_line "host mode: all entities" 'host_count={"result":40}' "$out"
has_line "host mode: the application's rows" "app=40" "$out"

finish
