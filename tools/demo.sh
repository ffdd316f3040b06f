#!/usr/bin/env bash
# `make demo`: creates a small store, transacts a schema and data, queries it, and shows
# history and time travel, all through the mentat CLI.
set -euo pipefail
MENTAT=${1:-build/mentat}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
STORE="$DIR/demo.db"

run() {
  echo
  echo "mentat> $*"
  "$MENTAT" --format table "$STORE" "$@"
}

echo "== mentat demo: an embedded, Datomic-style store in $STORE"
run '.transact [{:db/ident :person/name  :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                {:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
                {:db/ident :person/likes :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
                {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]'
run '.transact [{:db/id "ada" :person/name "Ada" :person/email "ada@example.com" :person/likes ["math" "poetry"]}
                {:db/id "alan" :person/name "Alan" :person/likes ["chess"] :person/friend "ada"}
                {:person/name "Grace" :person/friend ["ada" "alan"]}]'
run '.schema'
run '.query [:find ?name ?email :where [?p :person/name ?name] [(get-else $ ?p :person/email "-") ?email]]'
run '.query [:find ?who (count ?friend) :where [?p :person/name ?who] [?p :person/friend ?f] [?f :person/name ?friend]]'
# Upsert through the unique identity, then look at history.
run '.transact [{:person/name "Ada" :person/email "ada@lovelace.org"}]'
run '.query [:find ?email ?tx ?added :where [?p :person/name "Ada"] [?p :person/email ?email ?tx ?added]] {"history": true}'
run '.query [:find ?email . :where [?p :person/name "Ada"] [?p :person/email ?email]] {"asOf": 268435458}'
run '.pull [:person/name {:person/friend [:person/name]}] [:person/name "Grace"]'
run '.datoms :eavt [:person/name "Ada"]'
echo
echo "== done"
