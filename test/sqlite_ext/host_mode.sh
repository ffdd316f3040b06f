#!/usr/bin/env bash
# Host mode: db_path NULL or 'main' keeps the datoms in the host connection's own database,
# beside the application's tables, inside the host's transaction.
source "$(dirname "$0")/lib.sh"
HOST="$TMP/app.db"
"$SQLITE3" "$HOST" "CREATE TABLE ages(name TEXT PRIMARY KEY, age INT);" \
  "INSERT INTO ages VALUES ('Alice', 30), ('Bob', 25);"

# Reads never create a store in the host database: they return NULL (or no rows).
out="$(sq "$HOST" <<SQL
SELECT 'q=' || ifnull(edn_q(NULL, '[:find ?e :where [?e :db/ident]]', NULL), 'NULL');
SELECT 'pull=' || ifnull(edn_pull(NULL, '[*]', 1), 'NULL');
SELECT 'datoms=' || ifnull(edn_datoms('main', ':eavt'), 'NULL');
SELECT 'rows=' || count(*) FROM edn_rows(NULL, '[:find ?e :where [?e :db/ident]]');
CREATE VIRTUAL TABLE temp.names USING edn_rows(NULL, '[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]');
SELECT 'created=' || count(*) FROM names;
SELECT 'tables=' || count(*) FROM sqlite_master;
SQL
)"
for l in q=NULL pull=NULL datoms=NULL rows=0 created=0 tables=2; do has_line "read without a store: $l" "$l" "$out"; done

out="$(sq "$HOST" <<SQL
SELECT 'schema=' || json_extract(edn_t(NULL, '$SCHEMA'), '\$.tx_id');
SELECT 'data=' || json_extract(edn_t('main', '[{:person/name "Alice" :person/age 30} {:person/name "Bob" :person/age 25}]'), '\$.tx_id');
SELECT 'join=' || group_concat(a.name || '=' || r.c1, ',') FROM (SELECT * FROM edn_rows(NULL, '[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]') ORDER BY c0) r JOIN ages a ON a.name = r.c0 AND a.age = r.c1;
SELECT 'tables=' || group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('ages', 'datoms', 'meta', 'mentat_datoms', 'mentat_meta') ORDER BY name);
CREATE VIRTUAL TABLE temp.names USING edn_rows(NULL, '[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]');
SELECT 'created=' || group_concat(n || ':' || a, ',') FROM (SELECT * FROM names ORDER BY n);
SELECT 'journal=' || journal_mode FROM pragma_journal_mode;
SELECT 'user_version=' || user_version FROM pragma_user_version;
SELECT 'version=' || value FROM mentat_meta WHERE key = 'format_version';
SQL
)"
has_line "schema in the host database" 'schema=268435457' "$out"
has_line "data in the host database" 'data=268435458' "$out"
has_line "edn_rows joins the host's table" 'join=Alice=30,Bob=25' "$out"
has_line "mentat tables beside the host's, under mentat_" 'tables=ages,mentat_datoms,mentat_meta' "$out"
has_line "CREATE VIRTUAL TABLE in host mode" 'created=Alice:30,Bob:25' "$out"
has_line "the host's journal mode is left alone" 'journal=delete' "$out"
has_line "user_version left to the host" 'user_version=0' "$out"
has_line "format version in mentat_meta" 'version=6' "$out"

names() { echo "names=$(sq "$HOST" "SELECT group_concat(value, ',') FROM (SELECT value FROM json_each(edn_q(NULL, '[:find [?n ...] :where [_ :person/name ?n]]', NULL), '\$.result') ORDER BY 1);")"; }

# ROLLBACK undoes an edn_t; reads inside the transaction see it.
out="$(sq "$HOST" <<SQL
BEGIN;
SELECT 'tx=' || json_extract(edn_t(NULL, '[{:person/name "Carol"}]'), '\$.tx_id');
INSERT INTO ages VALUES ('Carol', 41);
SELECT 'inside=' || (json_extract(edn_q(NULL, '[:find ?e . :where [?e :person/name "Carol"]]', NULL), '\$.result') IS NOT NULL);
ROLLBACK;
SELECT 'after=' || ifnull(json_extract(edn_q(NULL, '[:find ?e . :where [?e :person/name "Carol"]]', NULL), '\$.result'), 'none');
SELECT 'app=' || count(*) FROM ages;
SQL
)"
has_line "edn_t inside BEGIN" 'tx=268435459' "$out"
has_line "visible inside the transaction" 'inside=1' "$out"
has_line "gone after ROLLBACK" 'after=none' "$out"
has_line "the host's own row rolled back too" 'app=2' "$out"

# A schema change rolled back: the attribute is unknown again, in this session and after.
out="$(sq "$HOST" <<SQL
BEGIN;
SELECT 'attr=' || (edn_t(NULL, '[{:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]') IS NOT NULL);
SELECT 'use=' || (edn_t(NULL, '[{:person/name "Dave" :person/email "d@x"}]') IS NOT NULL);
ROLLBACK;
SELECT 'tx=' || json_extract(edn_t(NULL, '[{:person/name "Eve"}]'), '\$.tx_id');
SQL
)"
has_line "schema change inside BEGIN" 'attr=1' "$out"
has_line "new attribute usable inside" 'use=1' "$out"
has_line "tx ids reused after ROLLBACK" 'tx=268435459' "$out"
expect_error "rolled-back attribute is unknown" "unknown attribute :person/email" "$HOST" \
  "SELECT edn_t(NULL, '[{:person/name \"Fay\" :person/email \"f@x\"}]');"

# COMMIT keeps it, and another process sees it.
sq "$HOST" "BEGIN;" "SELECT edn_t(NULL, '[{:person/name \"Gus\"}]');" "COMMIT;" >/dev/null
expect "COMMIT keeps it, other processes see it" "names=Alice,Bob,Eve,Gus" "$(names)"

# Savepoints nest: ROLLBACK TO undoes only the work after it.
out="$(sq "$HOST" <<SQL
BEGIN;
SELECT edn_t(NULL, '[{:person/name "Hal"}]') IS NOT NULL;
SAVEPOINT s1;
SELECT edn_t(NULL, '[{:person/name "Ida"}]') IS NOT NULL;
ROLLBACK TO s1;
RELEASE s1;
COMMIT;
SQL
)"
expect "ROLLBACK TO a savepoint" "names=Alice,Bob,Eve,Gus,Hal" "$(names)"

# A failed edn_t inside the host's transaction leaves the transaction and its other work.
out="$("$SQLITE3" -noheader -list -cmd ".load $EXT" "$HOST" 2>&1 <<SQL
BEGIN;
INSERT INTO ages VALUES ('Jo', 9);
SELECT edn_t(NULL, '[{:person/name 42}]');
SELECT 'still=' || count(*) FROM ages;
COMMIT;
SQL
)"
has_line "failed edn_t keeps the host's transaction" 'still=3' "$out"
expect_match "failed edn_t reports the error" 'edn_t: schema error' "$out"
expect "failed edn_t wrote nothing" "names=Alice,Bob,Eve,Gus,Hal" "$(names)"

# Inside a statement that writes, SQLite allows no nested transaction: reads join it,
# writes are refused.
out="$(sq "$HOST" "CREATE TABLE counts(n);" \
  "INSERT INTO counts SELECT json_extract(edn_q(NULL, '[:find (count ?e) :where [?e :person/name]]', NULL), '\$.result');" \
  "SELECT 'count=' || n FROM counts;")"
has_line "read inside INSERT ... SELECT" 'count=5' "$out"
expect_error "write inside INSERT ... SELECT" "cannot transact while the host runs a statement that writes" \
  "$HOST" "INSERT INTO counts SELECT edn_t(NULL, '[{:person/name \"Kim\"}]');"

# The host's own file named by path is refused: host mode is the way to use it.
expect_error "db_path naming the host's file" "host's own database" "$HOST" "SELECT edn_t('$HOST', '[]');"

# Read-only host: reads work, writes fail cleanly.
out="$("$SQLITE3" -readonly -noheader -list "$HOST" ".load $EXT" "SELECT json_extract(edn_q(NULL, '[:find (count ?e) :where [?e :person/name]]', NULL), '\$.result');" 2>&1)"
expect "read-only host: reads" "5" "$out"
out="$("$SQLITE3" -readonly -noheader -list "$HOST" ".load $EXT" "SELECT edn_t(NULL, '[{:person/name \"Lu\"}]');" 2>&1)"
expect_match "read-only host: writes fail" 'edn_t: .*(read-only|readonly)' "$out"

# An in-memory host database works the same.
out="$(sq :memory: "SELECT edn_t(NULL, '$SCHEMA') IS NOT NULL;" \
  "SELECT edn_t(NULL, '[{:person/name \"Mo\"}]') IS NOT NULL;" \
  "SELECT edn_q(NULL, '[:find ?n . :where [_ :person/name ?n]]', NULL);")"
expect "in-memory host" $'1\n1\n{"result":"Mo"}' "$out"

# The host store keeps its prepared statements between calls, and the host still closes
# its connection cleanly (mentat_close_hook finalizes them first).
out="$("$SQLITE3" -noheader -list "$HOST" ".load $EXT" \
  "SELECT edn_q(NULL, '[:find ?n . :where [_ :person/name ?n] [(= ?n \"Eve\")]]', NULL);" \
  "SELECT 'cached=' || (count(*) > 2) FROM sqlite_stmt;" ".open :memory:" "SELECT 'reopened';" 2>&1)"
rc=$?
expect "clean close after host-mode calls" $'{"result":"Eve"}\ncached=1\nreopened' "$out"
expect "shell exit status" "0" "$rc"

# A host with its own user_version and tables named like mentat's unprefixed ones: the
# store goes beside them under mentat_, and the host's user_version and tables stay.
OTHER="$TMP/versioned.db"
"$SQLITE3" "$OTHER" "CREATE TABLE meta(k, v);" "CREATE TABLE datoms(x);" \
  "INSERT INTO meta VALUES ('app', 'mine');" "PRAGMA user_version = 7;"
out="$(sq "$OTHER" "SELECT edn_t(NULL, '$SCHEMA') IS NOT NULL;" \
  "SELECT edn_t(NULL, '[{:person/name \"Ann\"}]') IS NOT NULL;")"
expect "store beside a versioned host" $'1\n1' "$out"
out="$("$SQLITE3" "$OTHER" "PRAGMA user_version;" "SELECT k || '=' || v FROM meta;" \
  "SELECT count(*) FROM datoms;" "SELECT count(*) > 0 FROM mentat_datoms;")"
expect "the host's user_version and tables are untouched" $'7\napp=mine\n0\n1' "$out"
out="$(sq "$OTHER" "SELECT edn_q(NULL, '[:find ?n . :where [_ :person/name ?n]]', NULL);")"
expect "reopened beside a versioned host" '{"result":"Ann"}' "$out"

# A store file (user_version and unprefixed tables) opened in host mode keeps its layout.
FILE="$TMP/store-file.db"
sq "$TMP/other.db" "SELECT edn_t('$FILE', '$SCHEMA') IS NOT NULL;" \
  "SELECT edn_t('$FILE', '[{:person/name \"Bo\"}]') IS NOT NULL;" >/dev/null
out="$(sq "$FILE" "SELECT edn_t(NULL, '[{:person/name \"Cy\"}]') IS NOT NULL;" \
  "SELECT group_concat(value, ',') FROM (SELECT value FROM json_each(edn_q(NULL, '[:find [?n ...] :where [_ :person/name ?n]]', NULL), '\$.result') ORDER BY 1);" \
  "SELECT 'prefixed=' || count(*) FROM sqlite_master WHERE name LIKE 'mentat\\_%' ESCAPE '\\';")"
expect "a store file in host mode keeps its layout" $'1\nBo,Cy\nprefixed=0' "$out"

# Databases mentat must not take over: an application table with one of mentat's names.
CLASH="$TMP/clash.db"
"$SQLITE3" "$CLASH" "CREATE TABLE mentat_meta(k, v);"
expect_error "host with a table named like mentat's" "already has a table named 'mentat_meta'" \
  "$CLASH" "SELECT edn_t(NULL, '[]');"
CLASH2="$TMP/clash2.db"
"$SQLITE3" "$CLASH2" "CREATE TABLE mentat_datoms(x);"
expect_error "host with a table named like mentat's datoms" \
  "already has a table named 'mentat_datoms'" "$CLASH2" "SELECT edn_t(NULL, '[]');"
expect "refused host databases are unchanged" "1 1" \
  "$("$SQLITE3" "$CLASH" "SELECT count(*) FROM sqlite_master;") $("$SQLITE3" "$CLASH2" "SELECT count(*) FROM sqlite_master;")"

finish
