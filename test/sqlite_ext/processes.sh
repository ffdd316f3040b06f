#!/usr/bin/env bash
# Several processes on one store file, and the per-path store cache: transact in one
# sqlite3 process, query in another; a cached store sees (and never collides with) what
# other processes commit; the cache reuses one connection, or none with
# MENTAT_STORE_CACHE=0.
source "$(dirname "$0")/lib.sh"
DB="$TMP/shared.db"

sq :memory: "SELECT edn_t('$DB', '$SCHEMA');" >/dev/null
sq :memory: "SELECT edn_t('$DB', '[{:person/name \"Alice\" :person/age 30}]');" >/dev/null
expect "transact in one process, query in another" '{"result":30}' \
  "$(sq :memory: "SELECT edn_q('$DB', '[:find ?a . :where [?e :person/name \"Alice\"] [?e :person/age ?a]]', NULL);")"

# A session with a cached store; meanwhile another process adds an attribute and an
# entity. The session must see both, and allocate a different entity id and a later tx.
OTHER="$TMP/other.sh"
cat > "$OTHER" <<SH
#!/bin/sh
case "\$1" in
  fds) # the sqlite3 process that ran .system: our parent, or the sh -c in between
    p=\$PPID
    [ "\$(cat /proc/\$p/comm)" = sqlite3 ] || p=\$(cut -d' ' -f4 /proc/\$p/stat)
    echo "fds=\$(ls -l /proc/\$p/fd | grep -c -- '-> $DB\$')" ;;
  *) "$SQLITE3" -bail -noheader -list :memory: ".load $EXT" \
       "SELECT 'other_attr=' || (edn_t('$DB', '[{:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]') IS NOT NULL);" \
       "SELECT 'other=' || edn_t('$DB', '[{:db/id \"o\" :person/name \"Olga\" :person/email \"o@x\"}]');" ;;
esac
SH
chmod +x "$OTHER"
out="$(sq :memory: <<SQL
SELECT 'before=' || json_extract(edn_q('$DB', '[:find (count ?e) :where [?e :person/name]]', NULL), '\$.result');
.system $OTHER
SELECT 'mine=' || edn_t('$DB', '[{:db/id "m" :person/name "Mona" :person/email "m@x"}]');
SELECT 'emails=' || group_concat(value, ',') FROM (SELECT value FROM json_each(edn_q('$DB', '[:find [?m ...] :where [_ :person/email ?m]]', ''), '\$.result') ORDER BY value);
SELECT 'count=' || json_extract(edn_q('$DB', '[:find (count ?e) :where [?e :person/name]]', NULL), '\$.result');
SQL
)"
has_line "cached store before" 'before=1' "$out"
has_line "other process wrote" 'other_attr=1' "$out"
has_line "cached store sees the other process's attribute and data" 'emails=m@x,o@x' "$out"
has_line "count after both" 'count=3' "$out"
other_e="$(sed -nE 's/^other=.*"o":([0-9]+).*/\1/p' <<<"$out")"
mine_e="$(sed -nE 's/^mine=.*"m":([0-9]+).*/\1/p' <<<"$out")"
other_tx="$(sed -nE 's/^other=.*"tx_id":([0-9]+).*/\1/p' <<<"$out")"
mine_tx="$(sed -nE 's/^mine=.*"tx_id":([0-9]+).*/\1/p' <<<"$out")"
if [ -n "$other_e" ] && [ -n "$mine_e" ] && [ "$other_e" != "$mine_e" ]; then ok; else
  fail "entity ids must differ: other=$other_e mine=$mine_e"; fi
if [ -n "$other_tx" ] && [ -n "$mine_tx" ] && [ "$mine_tx" -gt "$other_tx" ]; then ok; else
  fail "tx ids must increase: other=$other_tx mine=$mine_tx"; fi

# Twenty calls in one session use one cached connection to the file...
out="$(sq :memory: "SELECT 'many=' || count(edn_q('$DB', '[:find ?n :where [_ :person/name ?n]]', '')) FROM generate_series(1, 20);" ".system $OTHER fds")"
has_line "20 calls" 'many=20' "$out"
has_line "one cached connection" 'fds=1' "$out"
# ...and none stays open with MENTAT_STORE_CACHE=0.
out="$(MENTAT_STORE_CACHE=0 sq :memory: "SELECT 'many=' || count(edn_q('$DB', '[:find ?n :where [_ :person/name ?n]]', '')) FROM generate_series(1, 20);" ".system $OTHER fds")"
has_line "20 uncached calls" 'many=20' "$out"
has_line "no connection kept with MENTAT_STORE_CACHE=0" 'fds=0' "$out"
# Cached stores are closed with the last host connection: the WAL is checkpointed away.
if [ ! -e "$DB-wal" ]; then ok; else fail "the WAL is left behind after the session"; fi

# A store file deleted and created again under the same path is a new store.
out="$(sq :memory: <<SQL
SELECT 'old=' || json_extract(edn_q('$DB', '[:find (count ?e) :where [?e :person/name]]', NULL), '\$.result');
.system rm -f $DB $DB-wal $DB-shm
SELECT 'new=' || json_extract(edn_t('$DB', '[{:db/ident :x/y}]'), '\$.tx_id');
SELECT 'fresh=' || json_extract(edn_q('$DB', '[:find (count ?e) :where [?e :db/ident :x/y]]', NULL), '\$.result');
SQL
)"
has_line "old store" 'old=3' "$out"
has_line "recreated file starts over" 'new=268435457' "$out"
has_line "recreated file is read" 'fresh=1' "$out"

# Host mode across processes: one process's uncommitted edn_t is invisible to another
# until COMMIT.
HOST="$TMP/host.db"
sq "$HOST" "SELECT edn_t(NULL, '$SCHEMA');" >/dev/null
READER="$TMP/reader.sh"
cat > "$READER" <<SH
#!/bin/sh
"$SQLITE3" -noheader -list "$HOST" ".load $EXT" \
  "SELECT '\$1=' || ifnull(json_extract(edn_q(NULL, '[:find (count ?e) . :where [?e :person/name]]', NULL), '\\\$.result'), 0);"
SH
chmod +x "$READER"
out="$(sq "$HOST" <<SQL
BEGIN;
SELECT edn_t(NULL, '[{:person/name "Pia"}]') IS NOT NULL;
.system $READER uncommitted
COMMIT;
.system $READER committed
SQL
)"
has_line "uncommitted host-mode write is invisible to others" 'uncommitted=0' "$out"
has_line "committed host-mode write is visible to others" 'committed=1' "$out"

finish
