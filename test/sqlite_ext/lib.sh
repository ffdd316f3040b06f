# Helpers for the SQLite extension's shell tests: each test script sources this file and
# runs the real sqlite3 shell with the extension loaded.
#
#   usage: SCRIPT.sh EXTENSION [SQLITE3]    (EXTENSION: build/libmentat_sqlite.so)
set -uo pipefail

EXT="${1:?usage: $0 path/to/libmentat_sqlite.so [sqlite3]}"
EXT="$(cd "$(dirname "$EXT")" && pwd)/$(basename "${EXT%.so}")"  # absolute; .load adds .so
SQLITE3="${2:-sqlite3}"
TMP="$(mktemp -d /tmp/mentat-sqlite-ext.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
PASSED=0
FAILED=0

# sq DB [SQL...]: runs SQL (the arguments, else standard input) in a fresh shell on DB
# with the extension loaded; prints stdout and stderr, returns the shell's exit status.
sq() {
  local db="$1"
  shift
  if [ $# -gt 0 ]; then
    "$SQLITE3" -bail -noheader -list "$db" ".load $EXT" "$@" 2>&1
  else
    "$SQLITE3" -bail -noheader -list -cmd ".load $EXT" "$db" 2>&1
  fi
}

ok() {
  PASSED=$((PASSED + 1))
}

fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL: $*"
}

# expect NAME EXPECTED ACTUAL
expect() {
  if [ "$2" == "$3" ]; then ok; else fail "$1: expected [$2], got [$3]"; fi
}

# expect_match NAME REGEX ACTUAL
expect_match() {
  if [[ "$3" =~ $2 ]]; then ok; else fail "$1: expected to match /$2/, got [$3]"; fi
}

# expect_error NAME TEXT DB SQL: the statement must fail (exit status 1, not a crash)
# with an error containing TEXT.
expect_error() {
  local name="$1" text="$2" db="$3" sql="$4" out rc
  out="$(sq "$db" "$sql")"
  rc=$?
  if [ $rc -eq 0 ]; then
    fail "$name: expected an error containing [$text], but it succeeded: [$out]"
  elif [ $rc -gt 1 ]; then
    fail "$name: the shell died (status $rc): [$out]"
  elif [[ "$out" != *"$text"* ]]; then
    fail "$name: expected an error containing [$text], got [$out]"
  else
    ok
  fi
}

# find_python: sets PY to a Python whose sqlite3 module loads extensions (Debian's
# /usr/bin/python3 does; a Python built without it does not), or to "".
find_python() {
  PY=""
  for p in /usr/bin/python3 python3; do
    if "$p" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
      PY="$p"
      return
    fi
  done
}

# skip NAME WHY
skip() {
  echo "SKIP: $1 ($2)"
}

finish() {
  echo "$(basename "$0"): $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

SCHEMA='[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
         {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
         {:db/ident :person/score :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
         {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
         {:db/ident :person/born :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
         {:db/ident :person/id :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}
         {:db/ident :person/photo :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
         {:db/ident :person/role :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
         {:db/ident :person/admin :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}]'

# has_line NAME LINE OUTPUT: OUTPUT (of a batch of labelled SELECTs) has the exact LINE.
has_line() {
  if grep -qxF -- "$2" <<<"$3"; then ok; else fail "$1: no line [$2] in output:"$'\n'"$3"; fi
}
