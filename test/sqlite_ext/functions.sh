#!/usr/bin/env bash
# Every SQL function of the extension through the sqlite3 shell: the JSON shapes of the
# Rust mentat's extension, value encodings, query options, edn_rows, the EDN format, and
# NULL arguments.
source "$(dirname "$0")/lib.sh"
DB="$TMP/people.db"

out="$(sq :memory: "SELECT 'schema=' || json_extract(edn_t('$DB', '$SCHEMA'), '\$.tx_id');" \
  "SELECT 'tx=' || edn_t('$DB', '[{:db/id \"a\" :person/name \"Alice\" :person/age 30 :person/score 1.5
      :person/born #inst \"2024-01-02T03:04:05.123456Z\" :person/id #uuid \"3e0b4c8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b\"
      :person/photo #bytes \"cafe\" :person/role :role/admin :person/admin true}
    {:db/id \"b\" :person/name \"Bob\" :person/age 25 :person/friend \"a\"}]');")"
has_line "schema tx id" "schema=268435457" "$out"
tx="$(sed -n 's/^tx=//p' <<<"$out")"
expect_match "tx report shape" '^\{"tempids":\{"a":[0-9]+,"b":[0-9]+\},"tx_id":268435458,"tx_instant":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{3}|\.[0-9]{6})?\+00:00"\}$' "$tx"
A="$(sed -E 's/.*"a":([0-9]+).*/\1/' <<<"$tx")"
B="$(sed -E 's/.*"b":([0-9]+).*/\1/' <<<"$tx")"

out="$(sq :memory: <<SQL
SELECT 'rel=' || edn_q('$DB', '[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a] [(< ?a 26)]]', NULL);
SELECT 'rel_rows=' || group_concat(value, ';') FROM (SELECT value FROM json_each(edn_q('$DB', '[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]', '{}'), '\$.results') ORDER BY 1);
SELECT 'same=' || (json_extract(r, '\$.result') = json_extract(r, '\$.results')) FROM (SELECT edn_q('$DB', '[:find ?n :where [_ :person/name ?n]]', '') AS r);
SELECT 'agg=' || edn_q('$DB', '[:find (count ?e) :where [?e :person/name]]', NULL);
SELECT 'agg2=' || edn_q('$DB', '[:find (count ?e) (max ?a) :where [?e :person/age ?a]]', NULL);
SELECT 'coll=' || edn_q('$DB', '[:find [?a ...] :where [_ :person/age ?a] [(> ?a 26)]]', 'null');
SELECT 'tuple=' || edn_q('$DB', '[:find [?n ?a] :where [?e :person/name "Alice"] [?e :person/name ?n] [?e :person/age ?a]]', NULL);
SELECT 'tuple_none=' || edn_q('$DB', '[:find [?n ?a] :where [?e :person/name "Zed"] [?e :person/age ?a] [?e :person/name ?n]]', NULL);
SELECT 'scalar=' || edn_q('$DB', '[:find ?a . :where [?e :person/name "Bob"] [?e :person/age ?a]]', NULL);
SELECT 'scalar_none=' || edn_q('$DB', '[:find ?a . :where [?e :person/name "Zed"] [?e :person/age ?a]]', NULL);
SELECT 'values=' || edn_q('$DB', '[:find [?s ?b ?u ?p ?r ?adm] :where [?e :person/name "Alice"] [?e :person/score ?s] [?e :person/born ?b] [?e :person/id ?u] [?e :person/photo ?p] [?e :person/role ?r] [?e :person/admin ?adm]]', NULL);
SELECT 'ref=' || edn_q('$DB', '[:find ?f . :where [?e :person/name "Bob"] [?e :person/friend ?f]]', NULL);
SELECT 'in_scalar=' || edn_q('$DB', '[:find ?a . :in ?n :where [?e :person/name ?n] [?e :person/age ?a]]', '{"inputs":["Bob"]}');
SELECT 'in_coll=' || edn_q('$DB', '[:find [?a ...] :in [?n ...] :where [?e :person/name ?n] [?e :person/age ?a]]', '{"inputs":[["Alice","Zed"]]}');
SELECT 'in_mixed=' || edn_q('$DB', '[:find [?n ...] :in ?age [?name ...] :where [?e :person/name ?name] [?e :person/age ?age] [?e :person/name ?n]]', '{"inputs":[25, ["Alice","Bob"]]}');
SELECT 'in_ref=' || edn_q('$DB', '[:find ?n . :in ?e :where [?e :person/name ?n]]', json_object('inputs', json_array($B)));
SELECT 'in_kw=' || edn_q('$DB', '[:find ?n . :in ?r :where [?e :person/role ?r] [?e :person/name ?n]]', '{"inputs":[":role/admin"]}');
SELECT 'edn=' || edn_q('$DB', '[:find ?a . :where [?e :person/name "Alice"] [?e :person/age ?a]]', NULL, 'edn');
SELECT 'edn_rel=' || edn_q('$DB', '[:find ?r ?b :where [?e :person/name "Alice"] [?e :person/role ?r] [?e :person/born ?b]]', NULL, 'edn');
SELECT 'two_args=' || edn_q('$DB', '[:find ?a . :where [?e :person/name "Bob"] [?e :person/age ?a]]');
SQL
)"
has_line "relation" 'rel={"columns":["?n","?a"],"result":[["Bob",25]],"results":[["Bob",25]]}' "$out"
has_line "relation rows" 'rel_rows=["Alice",30];["Bob",25]' "$out"
has_line "result = results" 'same=1' "$out"
has_line "lone aggregate" 'agg={"result":2}' "$out"
has_line "two aggregates" 'agg2={"columns":["(count ?e)","(max ?a)"],"result":[[2,30]],"results":[[2,30]]}' "$out"
has_line "collection" 'coll={"result":[30]}' "$out"
has_line "tuple" 'tuple={"result":["Alice",30]}' "$out"
has_line "tuple, no match" 'tuple_none={"result":null}' "$out"
has_line "scalar" 'scalar={"result":25}' "$out"
has_line "scalar, no match" 'scalar_none={"result":null}' "$out"
has_line "value encodings" 'values={"result":[1.5,"2024-01-02T03:04:05.123456Z","3e0b4c8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b","cafe",":role/admin",true]}' "$out"
has_line "ref as integer" "ref={\"result\":$A}" "$out"
has_line "scalar input" 'in_scalar={"result":25}' "$out"
has_line "collection input" 'in_coll={"result":[30]}' "$out"
has_line "scalar and collection inputs" 'in_mixed={"result":["Bob"]}' "$out"
has_line "integer input in an entity position" 'in_ref={"result":"Bob"}' "$out"
has_line "keyword input" 'in_kw={"result":"Alice"}' "$out"
has_line "EDN format" 'edn=30' "$out"
has_line "EDN format keeps types" 'edn_rel=[[:role/admin #inst "2024-01-02T03:04:05.123456Z"]]' "$out"
has_line "options may be omitted" 'two_args={"result":25}' "$out"

# Time travel: asOf includes its tx, since excludes it; history through options.
out="$(sq :memory: <<SQL
CREATE TEMP TABLE t AS SELECT json_extract(edn_t('$DB', '[[:db/add $A :person/age 31]]'), '\$.tx_id') AS tx2;
SELECT 'now=' || edn_q('$DB', '[:find ?a . :in ?e :where [?e :person/age ?a]]', json_object('inputs', json_array($A)));
SELECT 'asof=' || edn_q('$DB', '[:find ?a . :in ?e :where [?e :person/age ?a]]', json_object('inputs', json_array($A), 'asOf', 268435458));
SELECT 'since=' || edn_q('$DB', '[:find ?a ?added :where [?e :person/age ?a ?tx ?added]]', json_object('since', 268435458));
SELECT 'history=' || group_concat(value, ';') FROM (SELECT value FROM json_each(edn_q('$DB', '[:find ?a ?added :in ?e :where [?e :person/age ?a ?tx ?added]]', json_object('inputs', json_array($A), 'history', json('true'))), '\$.results') ORDER BY 1);
SQL
)"
has_line "current" 'now={"result":31}' "$out"
has_line "asOf" 'asof={"result":30}' "$out"
has_line "since" 'since={"columns":["?a","?added"],"result":[[31,true]],"results":[[31,true]]}' "$out"
has_line "history" 'history=[30,false];[30,true];[31,true]' "$out"

# edn_pull: keys ":ns/name", always :db/id, refs {":db/id":n}, instants in microseconds.
out="$(sq :memory: <<SQL
SELECT 'pull=' || edn_pull('$DB', '[:person/name :person/age :person/born :person/role]', $A);
SELECT 'pull_ref=' || edn_pull('$DB', '[:person/friend]', $B);
SELECT 'pull_star=' || (json_extract(edn_pull('$DB', '[*]', $B), '\$.":person/name"') = 'Bob');
SELECT 'pull_lookup=' || edn_pull('$DB', '[:person/age]', '[:person/name "Bob"]');
SELECT 'pull_text_id=' || edn_pull('$DB', '[:person/age]', '$B');
SELECT 'pull_missing=' || edn_pull('$DB', '[:person/name]', 999999);
SELECT 'pull_edn=' || edn_pull('$DB', '[:person/name :person/born]', $A, 'edn');
SQL
)"
has_line "pull" "pull={\":db/id\":$A,\":person/age\":31,\":person/born\":1704164645123456,\":person/name\":\"Alice\",\":person/role\":\":role/admin\"}" "$out"
has_line "pull ref" "pull_ref={\":db/id\":$B,\":person/friend\":[{\":db/id\":$A}]}" "$out"
has_line "pull [*]" 'pull_star=1' "$out"
has_line "pull by lookup ref" "pull_lookup={\":db/id\":$B,\":person/age\":25}" "$out"
has_line "pull by id as text" "pull_text_id={\":db/id\":$B,\":person/age\":25}" "$out"
has_line "pull of nothing" 'pull_missing={":db/id":999999}' "$out"
has_line "pull EDN" 'pull_edn={:person/born #inst "2024-01-02T03:04:05.123456Z", :person/name "Alice"}' "$out"
# edn_entity: the entity touched, JSON as edn_pull's (many values as arrays) or EDN.
out="$(sq :memory: <<SQL
SELECT 'entity=' || edn_entity('$DB', $B);
SELECT 'entity_lookup=' || edn_entity('$DB', '[:person/name "Bob"]', 'edn');
SELECT 'entity_null=' || coalesce(edn_entity('$DB', NULL), 'NULL');
SQL
)"
has_line "entity" "entity={\":db/id\":$B,\":person/age\":25,\":person/friend\":[{\":db/id\":$A}],\":person/name\":\"Bob\"}" "$out"
has_line "entity by lookup ref, EDN" "entity_lookup={:db/id $B, :person/age 25, :person/friend #{{:db/id $A}}, :person/name \"Bob\"}" "$out"
has_line "entity of NULL" 'entity_null=NULL' "$out"
out="$(sq :memory: "SELECT edn_q('$DB', '[:find (pull ?e [:person/name :person/born {:person/friend [:person/age]}]) . :where [?e :person/name \"Bob\"]]', NULL);" \
  "SELECT c1 FROM edn_rows('$DB', '[:find ?e (pull ?e [:person/name]) :where [?e :person/name \"Bob\"]]');")"
expect "(pull ...) in :find: nested objects, pull encoding" \
  '{"result":{":person/friend":[{":person/age":31}],":person/name":"Bob"}}'$'\n''{":person/name":"Bob"}' "$out"

# edn_rows: real rows, typed columns, joins with ordinary tables.
out="$(sq :memory: <<SQL
CREATE TABLE ages(name TEXT PRIMARY KEY, nick TEXT);
INSERT INTO ages VALUES ('Alice', 'Al'), ('Bob', 'Bobby');
SELECT 'rows=' || group_concat(c0 || '|' || c1 || '|' || ifnull(c2, 'NULL'), ';') FROM (SELECT * FROM edn_rows('$DB', '[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]') ORDER BY c0);
SELECT 'types=' || typeof(c0) || ',' || typeof(c1) || ',' || typeof(c2) || ',' || typeof(c3) || ',' || typeof(c4) || ',' || typeof(c5) || ',' || typeof(c6) || ',' || typeof(c7)
  FROM edn_rows('$DB', '[:find ?e ?s ?b ?u ?p ?r ?adm ?n :where [?e :person/name "Alice"] [?e :person/score ?s] [?e :person/born ?b] [?e :person/id ?u] [?e :person/photo ?p] [?e :person/role ?r] [?e :person/admin ?adm] [?e :person/name ?n]]');
SELECT 'values=' || c1 || ',' || c2 || ',' || c3 || ',' || hex(c4) || ',' || c5 || ',' || c6
  FROM edn_rows('$DB', '[:find ?e ?s ?b ?u ?p ?r ?adm :where [?e :person/name "Alice"] [?e :person/score ?s] [?e :person/born ?b] [?e :person/id ?u] [?e :person/photo ?p] [?e :person/role ?r] [?e :person/admin ?adm]]');
SELECT 'join=' || group_concat(a.nick || '=' || r.c1, ',') FROM edn_rows('$DB', '[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]') r JOIN ages a ON a.name = r.c0;
SELECT 'join2=' || group_concat(c0, ',') FROM (SELECT r.c0 FROM ages a JOIN edn_rows('$DB', '[:find ?a :in ?n :where [?e :person/name ?n] [?e :person/age ?a]]', json_object('inputs', json_array(a.name))) r ORDER BY 1);
SELECT 'coll=' || group_concat(c0, ',') FROM (SELECT c0 FROM edn_rows('$DB', '[:find [?n ...] :where [_ :person/name ?n]]') ORDER BY 1);
SELECT 'scalar=' || count(*) || ':' || max(c0) FROM edn_rows('$DB', '[:find ?a . :where [?e :person/name "Bob"] [?e :person/age ?a]]');
SELECT 'scalar_none=' || count(*) FROM edn_rows('$DB', '[:find ?a . :where [?e :person/name "Zed"] [?e :person/age ?a]]');
SELECT 'hidden=' || db_path || ',' || query || ',' || ifnull(options, 'NULL') FROM edn_rows('$DB', '[:find ?a . :where [?e :person/name "Bob"] [?e :person/age ?a]]');
SELECT 'null_query=' || count(*) FROM edn_rows('$DB', NULL);
SELECT 'asof_rows=' || c0 FROM edn_rows('$DB', '[:find ?a . :where [?e :person/name "Alice"] [?e :person/age ?a]]', '{"asOf": 268435458}');
SELECT 'star=' || count(*) FROM pragma_table_info('edn_rows');
CREATE VIRTUAL TABLE temp.people USING edn_rows('$DB', '[:find ?e ?n (max ?a) :where [?e :person/name ?n] [?e :person/age ?a]]');
SELECT 'columns=' || group_concat(name || ':' || type, ',') FROM pragma_table_info('people');
SELECT 'people=' || group_concat(n || '/' || max_a, ',') FROM (SELECT * FROM people ORDER BY n);
CREATE VIRTUAL TABLE temp.nicknamed USING edn_rows('$DB', '[:find ?nick ?age :keys nick age :in [[?n ?nick]] :where [?e :person/name ?n] [?e :person/age ?age]]', '{"inputs":[[["Alice","Al"],["Bob","Bobby"]]]}');
SELECT 'keys=' || group_concat(name, ',') FROM pragma_table_info('nicknamed');
SELECT 'nicknamed=' || group_concat(nick || '/' || age, ',') FROM (SELECT * FROM nicknamed ORDER BY nick);
SQL
)"
has_line "rows" 'rows=Alice|31|NULL;Bob|25|NULL' "$out"
has_line "typed columns" 'types=integer,real,text,text,blob,text,integer,text' "$out"
has_line "typed values" 'values=1.5,2024-01-02T03:04:05.123456Z,3e0b4c8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b,CAFE,:role/admin,1' "$out"
has_line "join" 'join=Al=31,Bobby=25' "$out"
has_line "lateral join with inputs" 'join2=25,31' "$out"
has_line "collection rows" 'coll=Alice,Bob' "$out"
has_line "scalar row" 'scalar=1:25' "$out"
has_line "scalar, no row" 'scalar_none=0' "$out"
has_line "hidden argument columns" "hidden=$DB,[:find ?a . :where [?e :person/name \"Bob\"] [?e :person/age ?a]],NULL" "$out"
has_line "NULL query, no rows" 'null_query=0' "$out"
has_line "rows with options" 'asof_rows=30' "$out"
has_line "SELECT * columns: c0..c7" 'star=8' "$out"
has_line "CREATE VIRTUAL TABLE columns" 'columns=e:INTEGER,n:TEXT,max_a:INTEGER' "$out"
has_line "CREATE VIRTUAL TABLE rows" 'people=Alice/31,Bob/25' "$out"
has_line "return-map keys name columns" 'keys=nick,age' "$out"
has_line "CREATE VIRTUAL TABLE with options" 'nicknamed=Al/31,Bobby/25' "$out"

# edn_datoms, edn_explain, the EDN tx report, NULL arguments, in-memory stores.
out="$(sq :memory: <<SQL
SELECT 'datoms=' || edn_datoms('$DB', ':eavt', '$B :person/age');
SELECT 'datoms_edn=' || edn_datoms('$DB', ':avet', ':person/name "Bob"', 'edn');
SELECT 'explain=' || (length(edn_explain('$DB', '[:find ?n :where [_ :person/name ?n]]', NULL)) > 0);
SELECT 'tx_edn=' || (r LIKE '{:tempids {}, :tx-data [%:person/name "Carol"%], :tx-id 268435460, :tx-instant #inst "%"}') FROM (SELECT edn_t('$DB', '[{:person/name "Carol"}]', 'edn') AS r);
SELECT 'null_edn=' || (edn_t('$DB', NULL) IS NULL);
SELECT 'null_query=' || (edn_q('$DB', NULL, NULL) IS NULL);
SELECT 'null_pattern=' || (edn_pull('$DB', NULL, 1) IS NULL);
SELECT 'null_eid=' || (edn_pull('$DB', '[*]', NULL) IS NULL);
SELECT 'null_datoms=' || (edn_datoms('$DB', NULL) IS NULL);
SELECT 'null_script=' || (edn_eval('$DB', NULL) IS NULL);
SELECT 'memory=' || edn_q('', '[:find ?e . :where [?e :db/ident :db/ident]]', NULL);
SELECT 'memory_tx=' || json_extract(edn_t('', '[{:db/ident :x/y}]'), '\$.tx_id');
SELECT 'memory_fresh=' || edn_q(':memory:', '[:find ?e . :where [?e :db/ident :x/y]]', NULL);
SELECT 'version=' || mentat_version();
SELECT 'log=' || (edn_log('$DB', 2, 3, 'edn') LIKE '[{:data [%[$B :person/name "Bob" 268435458 true]%], :t 2, :tx-id 268435458, :tx-instant #inst "%"}]');
SELECT 'log_json=' || json_extract(edn_log('$DB', '#inst "2000-01-01T00:00:00Z"'), '\$[0].":t"');
SELECT 'log_open=' || json_array_length(edn_log('$DB'));
SQL
)"
has_line "edn_log: one transaction, EDN" 'log=1' "$out"
has_line "edn_log: from an instant" 'log_json=1' "$out"
has_line "datoms JSON" "datoms=[[$B,\":person/age\",25,268435458,true]]" "$out"
has_line "datoms EDN" "datoms_edn=[[$B :person/name \"Bob\" 268435458 true]]" "$out"
has_line "explain" 'explain=1' "$out"
has_line "tx report as EDN" 'tx_edn=1' "$out"
for what in edn query pattern eid datoms script; do
  has_line "NULL $what gives NULL" "null_$what=1" "$out"
done
has_line "'' is an in-memory store" 'memory={"result":1}' "$out"
has_line "in-memory transact" 'memory_tx=268435457' "$out"
has_line "each in-memory call is a fresh store" 'memory_fresh={"result":null}' "$out"
expect_match "mentat_version" '^version=[0-9]+\.[0-9]+\.[0-9]+' "$(grep '^version=' <<<"$out")"

# edn_eval: the store named by db_path is the script's default connection.
out="$(sq :memory: "SELECT edn_eval('$DB', '(def c (mentat.store/open)) (mentat.store/transact c [{:person/name \"Dora\"}]) (count (mentat.store/q (mentat.store/db c) (quote [:find ?n :where [_ :person/name ?n]])))');")"
expect "edn_eval" "4" "$out"
out="$(sq :memory: "SELECT edn_q('$DB', '[:find ?e . :where [?e :person/name \"Dora\"]]', NULL) IS NOT NULL;")"
expect "edn_eval wrote to db_path" "1" "$out"

finish
