#!/usr/bin/env bash
# Inputs that once crashed a sqlite3 host or escaped its control: a recursive pull down a
# long chain and a regex over a long string (SIGSEGV in the shell), strings that are not
# UTF-8, the host's interrupt not reaching a query on a store file, and host mode removing
# the application's progress handler.
source "$(dirname "$0")/lib.sh"
DB="$TMP/hostile.db"
SCHEMA2='[{:db/ident :p/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
          {:db/ident :p/next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
          {:db/ident :p/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]'
sq :memory: "SELECT edn_t('$DB', '$SCHEMA2');" >/dev/null
# A 3,000-long chain whose first entity holds a 50 KB string.
python3 - "$TMP/chain.edn" <<'PY'
import sys
n = 3000
items = []
for i in range(n):
    name = "a" * 50000 if i == 0 else "n%d" % i
    nxt = ' :p/next "n%d"' % (i + 1) if i + 1 < n else ""
    items.append('{:db/id "n%d" :p/name "%s"%s}' % (i, name, nxt))
open(sys.argv[1], "w").write("[" + " ".join(items) + "]")
PY
sq :memory: "SELECT length(edn_t('$DB', readfile('$TMP/chain.edn'))) > 0;" >/dev/null
ROOT="$(sq :memory: "SELECT json_extract(edn_q('$DB', '[:find ?e . :where [?e :p/name] (not [_ :p/next ?e])]', NULL), '\$.result');")"

expect_error "a recursive pull deeper than the limit, in a query" \
  "pull result nested deeper than 2000 levels following :p/next" :memory: \
  "SELECT edn_q('$DB', '[:find (pull ?e [:p/name {:p/next ...}]) . :in \$ ?e]', '{\"inputs\": [$ROOT]}');"
expect_error "a recursive pull deeper than the limit, with edn_pull" \
  "nested deeper than 2000 levels" :memory: "SELECT edn_pull('$DB', '[:p/name {:p/next ...}]', $ROOT);"
out="$(sq :memory: "SELECT length(edn_pull('$DB', '[:p/name {:p/next 1500}]', $ROOT)) > 1500;")"
expect "a recursive pull within the limit" "1" "$out"
out="$(sq :memory: "SELECT edn_q('$DB', '[:find (count ?n) . :where [_ :p/name ?n] [(re-find \"(a|b)*c\" ?n)]]', NULL);")"
expect "re-find over a 50 KB string" '{"result":null}' "$out"
out="$(sq :memory: "SELECT edn_q('$DB', '[:find (count ?n) . :where [_ :p/name ?n] [(re-matches \"(a|b)*\" ?n)]]', NULL);")"
expect "re-matches over a 50 KB string" '{"result":1}' "$out"
out="$(sq :memory: "SELECT edn_eval(NULL, '(count (re-matches #\"(a|b)*\" (apply str (repeat 15000 \"a\"))))');")"
expect "a script regex over 15,000 characters" "2" "$out"
out="$(sq :memory: "SELECT edn_eval(NULL, '(re-find #\"(a*)*b\" \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\")');")"
expect "catastrophic backtracking in a script" "nil" "$out"

# Strings are UTF-8: edn_t refuses other bytes with the position, in file and host mode,
# and writes nothing; so does a script's transaction.
count() { sq :memory: "SELECT edn_datoms('$DB', ':aevt', ':p/name');" | md5sum; }
before="$(count)"
expect_error "a string that is not UTF-8" "edn_t: parse error: 1:14: invalid UTF-8 in string: byte 0xFF" :memory: \
  "SELECT edn_t('$DB', CAST(X'5B7B3A702F6E616D6520226162FF225D7D' AS TEXT));"
expect "nothing written" "$before" "$(count)"
expect_error "a host-mode string that is not UTF-8" "invalid UTF-8 in string" "$TMP/app.db" \
  "SELECT edn_t(NULL, CAST(X'5B7B3A64622F646F632022FE227D5D' AS TEXT));"
expect_error "a script's string that is not UTF-8" "the string is not valid UTF-8" :memory: \
  "SELECT edn_eval(NULL, '(let [c (mentat.store/open)] (mentat.store/transact c [{:db/ident :x/s :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]) (mentat.store/transact c [{:x/s (str \"a\" (char 55296))}]))');"

# Another host, Python: its interrupt and progress handler.
find_python
if [ -z "$PY" ]; then
  fail "no Python with sqlite3 extension loading (/usr/bin/python3 from Debian's python3 has it)"
  finish
  exit $?
fi
if [ -n "${MENTAT_ASAN_PRELOAD:-}" ]; then
  export LD_PRELOAD="$MENTAT_ASAN_PRELOAD"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
out="$("$PY" - "$EXT" "$TMP/slow.db" "$TMP/app2.db" <<'PY' 2>&1
import sqlite3, sys, threading, time
ext, store, app = sys.argv[1:4]
def conn(path):
    c = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    c.enable_load_extension(True)
    c.load_extension(ext)
    return c
tx = "[" + " ".join('{:p/n %d}' % i for i in range(400)) + "]"
schema = "[{:db/ident :p/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"
slow = "[:find (count ?a) . :where [?a :p/n ?x] [?b :p/n ?y] [?c :p/n ?z] [?d :p/n ?w] [(< ?x ?y)] [(< ?z ?w)]]"

# The host's interrupt stops a query on a store file (mentat's own connection).
c = conn(":memory:")
c.execute("SELECT edn_t(?, ?)", (store, schema)).fetchone()
c.execute("SELECT edn_t(?, ?)", (store, tx)).fetchone()
threading.Timer(0.3, c.interrupt).start()
t0 = time.time()
try:
    c.execute("SELECT edn_q(?, ?, NULL)", (store, slow)).fetchone()
    print("file: not interrupted")
except sqlite3.OperationalError as e:
    print("file: %s after %s" % (e, "<3s" if time.time() - t0 < 3 else "%.1fs" % (time.time() - t0)))
print("file then: " + c.execute("SELECT edn_q(?, '[:find (count ?e) . :where [?e :p/n]]', NULL)", (store,)).fetchone()[0])
# The same through edn_rows.
threading.Timer(0.3, c.interrupt).start()
t0 = time.time()
try:
    c.execute("SELECT count(*) FROM edn_rows(?, ?)", (store, slow.replace("(count ?a) .", "?a ?b ?c ?d"))).fetchone()
    print("rows: not interrupted")
except sqlite3.OperationalError as e:
    print("rows: %s after %s" % (e, "<3s" if time.time() - t0 < 3 else "%.1fs" % (time.time() - t0)))

# Host mode: the application's progress handler survives mentat's calls, a timeout still
# stops a host-mode query, and the host's interrupt stops one too.
h = conn(app)
calls = [0]
def progress():
    calls[0] += 1
    return 0
h.set_progress_handler(progress, 100)
h.execute("CREATE TABLE t(x)")
h.execute("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5000) INSERT INTO t SELECT i FROM r")
h.execute("SELECT edn_t(NULL, ?)", (schema,)).fetchone()
h.execute("SELECT edn_t(NULL, ?)", (tx,)).fetchone()
h.execute("SELECT edn_q(NULL, '[:find (count ?e) . :where [?e :p/n]]', NULL)").fetchone()
try:
    h.execute("SELECT edn_q(NULL, ?, '{\"timeout\": 200}')", (slow,)).fetchone()
    print("host timeout: not stopped")
except sqlite3.OperationalError as e:
    print("host timeout: %s" % e)
threading.Timer(0.3, h.interrupt).start()
try:
    h.execute("SELECT edn_q(NULL, ?, NULL)", (slow,)).fetchone()
    print("host interrupt: not stopped")
except sqlite3.OperationalError as e:
    print("host interrupt: %s" % e)
calls[0] = 0
h.execute("SELECT sum(x) FROM t").fetchone()
print("progress handler after: %s" % ("called" if calls[0] > 0 else "gone"))
print("host then: " + h.execute("SELECT edn_q(NULL, '[:find (count ?e) . :where [?e :p/n]]', NULL)").fetchone()[0])
PY
)"
has_line "the host's interrupt stops a query on a store file" "file: edn_q: interrupted: interrupted after <3s" "$out"
has_line "the store works after the interrupt" 'file then: {"result":400}' "$out"
has_line "the host's interrupt stops edn_rows" "rows: edn_rows: interrupted: interrupted after <3s" "$out"
has_line "a timeout stops a host-mode query" "host timeout: edn_q: interrupted: interrupted: query timed out after 200 ms" "$out"
has_line "the host's interrupt stops a host-mode query" "host interrupt: edn_q: interrupted: interrupted" "$out"
has_line "the application's progress handler is still installed" "progress handler after: called" "$out"
has_line "the host store works after" 'host then: {"result":400}' "$out"
finish
