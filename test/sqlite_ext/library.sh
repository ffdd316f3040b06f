#!/usr/bin/env bash
# The shared object itself: it links no SQLite (every sqlite3_* call goes through the
# host's routine table), exports only its entry points, and loads by every usual route.
source "$(dirname "$0")/lib.sh"
SO="$EXT.so"

exports="$(nm -D --defined-only "$SO" | awk '{print $3}' | sort | tr '\n' ' ')"
expect "exports only the entry points" "sqlite3_extension_init sqlite3_mentatsqlite_init " "$exports"
undefined="$(nm -D --undefined-only "$SO" | grep -c ' sqlite3' || true)"
expect "no sqlite3_* symbol from another library" "0" "$undefined"
if ldd "$SO" | grep -qi sqlite; then fail "links a SQLite library: $(ldd "$SO" | grep -i sqlite)"; else ok; fi
if readelf -d "$SO" | grep NEEDED | grep -qiE 'sqlite|stdc\+\+'; then
  fail "needs: $(readelf -d "$SO" | grep NEEDED)"; else ok; fi

expect ".load derives sqlite3_mentatsqlite_init" "0.1.0" "$(sq :memory: "SELECT mentat_version();")"
expect ".load FILE.so" "0.1.0" "$("$SQLITE3" :memory: ".load $SO" "SELECT mentat_version();" 2>&1)"
expect "load_extension()" "0.1.0" \
  "$("$SQLITE3" :memory: "SELECT load_extension('$EXT') IS NULL;" "SELECT mentat_version();" 2>&1 | tail -1)"
cp "$SO" "$TMP/renamed.so"
expect "explicit entry point" "0.1.0" \
  "$("$SQLITE3" :memory: ".load $TMP/renamed sqlite3_mentatsqlite_init" "SELECT mentat_version();" 2>&1)"
expect "loaded twice on one connection" "0.1.0" \
  "$("$SQLITE3" :memory: ".load $EXT" ".load $EXT" "SELECT mentat_version();" 2>&1)"
# Two connections in one process share the store cache; closing them closes the stores.
out="$("$SQLITE3" :memory: ".load $EXT" "ATTACH ':memory:' AS aux;" \
  "SELECT json_extract(edn_t('$TMP/two.db', '[{:db/ident :x/y}]'), '\$.tx_id');" \
  ".open $TMP/other-host.db" ".load $EXT" \
  "SELECT json_extract(edn_q('$TMP/two.db', '[:find ?e . :where [?e :db/ident :x/y]]', NULL), '\$.result') > 0;" 2>&1)"
expect "a second connection in the process" $'268435457\n1' "$out"
if [ ! -e "$TMP/two.db-wal" ]; then ok; else fail "store left open after the last connection closed"; fi

finish
