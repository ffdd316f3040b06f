#!/usr/bin/env bash
# Errors become SQL errors carrying mentat's message (prefixed with the function's name);
# a failed transaction writes nothing; bad input never crashes the host.
source "$(dirname "$0")/lib.sh"
DB="$TMP/err.db"
sq :memory: "SELECT edn_t('$DB', '$SCHEMA');" "SELECT edn_t('$DB', '[{:person/name \"Alice\" :person/age 30}]');" >/dev/null
count() { sq :memory: "SELECT edn_datoms('$DB', ':eavt');" | md5sum; }
before="$(count)"

# Transactions.
expect_error "malformed EDN names line:column" "edn_t: parse error: 1:1: unterminated vector" :memory: "SELECT edn_t('$DB', '[{:person/name \"x\"}
');"
expect_error "unknown attribute" "edn_t: schema error: 1:14: unknown attribute :person/nope" :memory: \
  "SELECT edn_t('$DB', '[{:db/id \"x\" :person/nope 1}]');"
expect_error "wrong value type" "expected a string" :memory: "SELECT edn_t('$DB', '[{:person/name 42}]');"
expect_error "uniqueness conflict" "edn_t: conflict" :memory: \
  "SELECT edn_t('$DB', '[[:db/add \"x\" :person/name \"Bo\"] [:db/add \"y\" :person/name \"Bo\"] [:db/add \"x\" :person/age 1] [:db/add \"y\" :person/age 2]]');"
expect_error "cas mismatch" "edn_t: cas mismatch" :memory: \
  "SELECT edn_t('$DB', '[[:db/cas [:person/name \"Alice\"] :person/age 29 31]]');"
expect "failed transactions wrote nothing" "$before" "$(count)"

# Queries and options.
expect_error "query parse error" "edn_q: parse error" :memory: "SELECT edn_q('$DB', '[:find ?n :where', '{}');"
expect_error "unbound find variable" "edn_q:" :memory: "SELECT edn_q('$DB', '[:find ?x :where [?e :person/name ?n]]', NULL);"
expect_error "unknown option" 'unknown option "bogus"' :memory: \
  "SELECT edn_q('$DB', '[:find ?n :where [_ :person/name ?n]]', '{\"bogus\":1}');"
expect_error "options not JSON" "not valid JSON" :memory: \
  "SELECT edn_q('$DB', '[:find ?n :where [_ :person/name ?n]]', '{nope');"
expect_error "options not an object" "must be a JSON object" :memory: \
  "SELECT edn_q('$DB', '[:find ?n :where [_ :person/name ?n]]', '[1]');"
expect_error "missing input" "edn_q:" :memory: \
  "SELECT edn_q('$DB', '[:find ?e :in ?a ?b :where [?e :person/name ?a]]', '{\"inputs\":[\"x\"]}');"
expect_error "bad format" "format must be 'json' or 'edn'" :memory: \
  "SELECT edn_q('$DB', '[:find ?n :where [_ :person/name ?n]]', NULL, 'xml');"

# Pull.
expect_error "pattern not a vector" "must be an EDN vector" :memory: "SELECT edn_pull('$DB', '[*]] :where [(x)]', 1);"
expect_error "entity not an integer" "entity must be an INTEGER" :memory: "SELECT edn_pull('$DB', '[*]', 'x');"
expect_error "entity a REAL" "entity must be an INTEGER" :memory: "SELECT edn_pull('$DB', '[*]', 1.5);"
expect_error "lookup ref on a non-unique attribute" "edn_pull:" :memory: \
  "SELECT edn_pull('$DB', '[*]', '[:person/age 30]');"

# edn_rows and datoms.
expect_error "edn_rows without a query" "edn_rows: needs a query" :memory: "SELECT * FROM edn_rows;"
expect_error "edn_rows query error" "edn_rows: parse error" :memory: "SELECT * FROM edn_rows('$DB', '[:find');"
expect_error "edn_rows wider than c0..c7" "more than the 8 value columns" :memory: \
  "SELECT * FROM edn_rows('$DB', '[:find ?e ?e ?e ?e ?e ?e ?e ?e ?e :where [?e :person/name]]');"
expect_error "CREATE VIRTUAL TABLE without a query" "expected USING edn_rows(db_path, query" :memory: \
  "CREATE VIRTUAL TABLE temp.t USING edn_rows('$DB');"
expect_error "CREATE VIRTUAL TABLE with a bad query" "parse error" :memory: \
  "CREATE VIRTUAL TABLE temp.t USING edn_rows('$DB', '[:find');"
expect_error "unknown index" "edn_datoms: invalid argument: unknown index" :memory: "SELECT edn_datoms('$DB', ':xyz');"

# Stores that are not stores.
echo "this is not a database" > "$TMP/garbage.db"
expect_error "a file that is not a database" "not a mentat store" :memory: "SELECT edn_q('$TMP/garbage.db', '[:find ?e :where [?e :db/ident]]', NULL);"
"$SQLITE3" "$TMP/foreign.db" "CREATE TABLE t(x);"
expect_error "a foreign SQLite file" "not a mentat store" :memory: "SELECT edn_t('$TMP/foreign.db', '[]');"
expect_error "a directory" "edn_t:" :memory: "SELECT edn_t('$TMP', '[]');"
expect_error "a missing directory" "edn_t:" :memory: "SELECT edn_t('$TMP/no/such/dir/x.db', '[]');"
expect_error "wrong number of arguments" "wrong number of arguments" :memory: "SELECT edn_t('$DB');"

# Scripts are sandboxed: no file functions (the Rust extension's wording).
expect "edn_eval runs" "1" "$(sq :memory: "SELECT edn_eval('$DB', '1');")"
expect_error "sandboxed script" "unbound symbol: slurp" :memory: "SELECT edn_eval('$DB', '(slurp \"/etc/passwd\")');"
expect_error "script error" "edn_eval:" :memory: "SELECT edn_eval('$DB', '(throw (ex-info \"boom\" {}))');"
expect_error "script opening another file" "edn_eval:" :memory: "SELECT edn_eval('$DB', '(mentat.store/open \"$TMP/x.db\")');"
if [ ! -e "$TMP/x.db" ]; then ok; else fail "a script opened a file"; fi

# SQLITE_DIRECTONLY: not callable from views or triggers (an untrusted schema).
expect_error "function in a view" "unsafe use of edn_q" :memory: \
  "CREATE VIEW v AS SELECT edn_q('$DB', '[:find ?e :where [?e :person/name]]', NULL) AS r; SELECT * FROM v;"
expect_error "function in a trigger" "unsafe use of edn_t" :memory: \
  "CREATE TABLE t(x); CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT edn_t('$DB', '[]'); END; INSERT INTO t VALUES (1);"
expect_error "edn_rows in a view" "unsafe use of virtual table" :memory: \
  "CREATE VIEW v AS SELECT * FROM edn_rows('$DB', '[:find ?e :where [?e :person/name]]'); SELECT * FROM v;"

# Hostile input: deep nesting, huge literals, binary garbage. An error, never a crash.
deep="$(printf '[%.0s' $(seq 1 100000))"
expect_error "deeply nested EDN" "edn_t:" :memory: "SELECT edn_t('$DB', '$deep');"
expect_error "deeply nested query" "edn_q:" :memory: "SELECT edn_q('$DB', '$deep', NULL);"
expect_error "binary garbage" "edn_t:" :memory: "SELECT edn_t('$DB', CAST(randomblob(4096) AS TEXT));"
out="$(sq :memory: "SELECT length(edn_q('$DB', '[:find ?n . :in ?n :where]', json_object('inputs', json_array(printf('%.*c', 1000000, 'x')))));")"
expect_match "a large input value" '^[0-9]+$|edn_q:' "$out"

# After all that, the store still works and holds what it held.
expect "store intact" "$before" "$(count)"
expect "store usable" '{"result":30}' "$(sq :memory: "SELECT edn_q('$DB', '[:find ?a . :where [_ :person/age ?a]]', NULL);")"

finish
