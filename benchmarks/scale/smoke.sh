#!/usr/bin/env bash
# ctest scale_smoke: the whole scale suite at scale xs with short points (generator, load,
# every scenario, the checks before and after write_mixed, the summary) for every backend
# this build has, then compare on its own output (which must find no regression), clients
# as threads, the ceiling rule, the variants family (its checks against the hand-written
# SQL and meta.json, short timed points), and the exit status of a run whose check fails or
# whose backend is unavailable. About a minute.
#
#   smoke.sh MENTAT_SCALE_BIN WORK_DIR [SQLITE_EXT [DUCKDB_EXT]]
#
# SQLITE_EXT (libmentat_sqlite.so) and DUCKDB_EXT (mentat.duckdb_extension) add the
# sqlite-ext and duckdb backends; "" leaves one out (CMake passes what the build has).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: smoke.sh MENTAT_SCALE_BIN WORK_DIR [SQLITE_EXT [DUCKDB_EXT]]}
WORK=${2:?usage: smoke.sh MENTAT_SCALE_BIN WORK_DIR [SQLITE_EXT [DUCKDB_EXT]]}
SQLITE_EXT=${3:-}
DUCKDB_EXT=${4:-}
fail() { echo "scale_smoke: $*"; exit 1; }
export MENTAT_SCALE_BIN=$BIN DATA_ROOT=$WORK/data OUT=$WORK/out
BACKENDS="embedded sqlite-sql"
if [[ -n $SQLITE_EXT ]]; then
  [[ -f $SQLITE_EXT ]] || fail "no SQLite extension at $SQLITE_EXT"
  export MENTAT_SQLITE_EXT=$SQLITE_EXT
  BACKENDS+=" sqlite-ext"
fi
if [[ -n $DUCKDB_EXT ]]; then
  [[ -f $DUCKDB_EXT ]] || fail "no DuckDB extension at $DUCKDB_EXT"
  export MENTAT_DUCKDB_EXTENSION=$DUCKDB_EXT
  BACKENDS+=" duckdb"
fi
export SCALES=xs BACKENDS REPS=1 MIN_S=0.2 MIN_N=30 MAX_S=3 PROBE_S=20
export MIXED_S=1 MIXED_READERS=2 CLIENTS="1 2" EXTRA="write_mixed concurrency_sweep cold_vs_warm"
export ALLOW_UNAVAILABLE=0  # every check must PASS
# Evict only the store's own pages: the machine's whole page cache is not the test's.
export COLD_DROP=file
export SCENARIOS="bulk_load point_lookup ref_traversal aggregate predicate_scan pull as_of since input_bindings"
rm -rf "$WORK"  # regenerate: the checksum below tests the generator itself
mkdir -p "$WORK" || exit 2
start=$(date +%s)
echo "scale_smoke: backends $BACKENDS"
bash "$HERE/run.sh"
rc=$?
echo "scale_smoke: run.sh exited $rc after $(($(date +%s) - start)) s"
((rc == 0)) || exit "$rc"
for f in raw.csv timings.csv loads.csv checks.txt env.txt summary.md latency.svg throughput.svg; do
  [[ -s $OUT/$f ]] || fail "$OUT/$f is missing or empty"
done
nb=$(wc -w <<<"$BACKENDS")
n=$(grep -c ': PASS' "$OUT/checks.txt")
((n == nb * (18 + 8))) || fail "$n checks passed, expected $((nb * 26))"
grep -q ': FAIL\|: SKIP' "$OUT/checks.txt" && fail "a check did not pass"
for b in $BACKENDS; do
  ls "$OUT/plans/$b-xs-"*.txt >/dev/null || fail "no plans of $b"
  # Every point of the backend was measured: a row per read scenario with samples, no errors.
  for s in point_lookup ref_traversal aggregate predicate_scan pull as_of since input_bindings; do
    awk -F, -v b="$b" -v s="$s" '$1 == s && $2 == b && $7 > 0 && $13 == 0 { ok = 1 }
      END { exit !ok }' "$OUT/raw.csv" || fail "no clean $s row of $b in raw.csv"
  done
done
# The dataset is the same bytes on every machine (xs.sha256 pins generator version 2;
# a deliberate change of the dataset bumps kGenVersion and this file).
(cd "$DATA_ROOT/xs" && sha256sum --quiet -c "$HERE/xs.sha256") ||
  fail "the xs dataset differs from xs.sha256"
"$HERE/compare" "$OUT" "$OUT" >/dev/null || fail "compare flagged itself"

D=$DATA_ROOT/xs
COMMON=(--backend embedded --data "$D" --store "$D/embedded.db")

# The variants family (variants.cc): the ones mentat answers in well under a second at xs,
# checked against sqlite-sql's SQL and meta.json (every check PASS), then timed with very
# short points through run.sh's EXTRA=variants. The slow ones (deep and mutual recursion,
# tens of seconds at xs today) are left to the benchmark runs.
SMOKE_VARIANTS=$("$BIN" variants | grep -vx 'variant/chain_ancestors\|variant/mutual_parity\|variant/mutual_parity_chain' | tr '\n' ' ')
((${#SMOKE_VARIANTS} > 0)) || fail "mentat-scale variants listed none"
DATA_ROOT=$DATA_ROOT OUT=$WORK/variants SCENARIOS=" " EXTRA=variants VARIANTS="$SMOKE_VARIANTS" \
  BACKENDS="embedded sqlite-sql" MIN_S=0.01 MIN_N=3 MAX_S=1 VARIANT_TIMEOUT_S=20 \
  bash "$HERE/run.sh" 2>/dev/null
rc=$?
((rc == 0)) || fail "the variants run exited $rc (see $WORK/variants/checks.txt)"
nv=$(wc -w <<<"$SMOKE_VARIANTS")
grep -q ': FAIL\|: SKIP' "$WORK/variants/checks.txt" && fail "a variant check did not pass"
((($(grep -c '^check embedded xs variants variant/' "$WORK/variants/checks.txt")) >= nv)) ||
  fail "fewer variant checks than variants"
for b in embedded sqlite-sql; do
  n=$(awk -F, -v b="$b" '$1 ~ /^variant\// && $2 == b && $7 > 0 && $13 == 0' "$WORK/variants/raw.csv" | wc -l)
  ((n == nv)) || fail "$n clean variant rows of $b in raw.csv, expected $nv"
done
grep -q '^## Variants' "$WORK/variants/summary.md" || fail "summary.md has no variants table"
# pg, mentat on PostgreSQL (run.sh starts a private cluster under OUT and migrates the
# store into it), and pg-sql, the hand-written SQL on the same schema: the checks before
# writes, two read scenarios and the same variants, checked against sqlite-sql's answers
# and meta.json.
PG_VARIANTS=$SMOKE_VARIANTS
DATA_ROOT=$DATA_ROOT OUT=$WORK/pg SCENARIOS="point_lookup ref_traversal" EXTRA=variants \
  VARIANTS="$PG_VARIANTS" BACKENDS="pg pg-sql" MIN_S=0.01 MIN_N=3 MAX_S=0.5 PROBE_S=5 \
  VARIANT_TIMEOUT_S=20 PG_PORT=55433 bash "$HERE/run.sh" 2>/dev/null
rc=$?
((rc == 0)) || fail "the pg run exited $rc (see $WORK/pg/checks.txt)"
grep -q ': FAIL\|: SKIP' "$WORK/pg/checks.txt" && fail "a pg check did not pass"
npv=$(wc -w <<<"$PG_VARIANTS")
for b in pg pg-sql; do
  ((($(grep -c "^check $b xs before .*: PASS" "$WORK/pg/checks.txt")) == 18)) ||
    fail "$b did not pass the 18 checks before writes"
  ((($(grep -c "^check $b xs variants variant/" "$WORK/pg/checks.txt")) >= npv)) ||
    fail "fewer $b variant checks than variants"
done
grep -q '| pg / pg-sql xs |' "$WORK/pg/summary.md" || fail "summary.md has no pg / pg-sql ratios"
[[ -s $WORK/pg/pg-migrate-xs.txt ]] || fail "no record of the migration into PostgreSQL"
# A wrong truth is a FAIL and exit 1: meta.json says the probe issue blocks one more issue.
mkdir -p "$WORK/badv" && cp -r "$D" "$WORK/badv/" || exit 2
python3 - "$WORK/badv/xs/meta.json" <<'PY' || exit 2
import json, sys
m = json.load(open(sys.argv[1]))
g = m["truth"]["graph"]
g["by_probe"][str(g["probes"][0])]["blocks_reach"] += 1
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
"$BIN" check --backend embedded --data "$WORK/badv/xs" --store "$WORK/badv/xs/embedded-graph.db" \
  --out "$WORK/badv/out" --phase variants --variants variant/blocks_from 2>/dev/null
rc=$?
((rc == 1)) || fail "a variant check against a wrong truth exited $rc, not 1"
grep -q "^check embedded xs variants variant/blocks_from\[issue [0-9]*\].truth: FAIL" \
  "$WORK/badv/out/checks.txt" || fail "checks.txt lacks the failed variant truth"
# Clients as threads (THREADS=1): one row for 2 clients, with samples and no errors.
"$BIN" sweep "${COMMON[@]}" --out "$WORK/threads" --threads --clients 2 --min-s 0.1 --min-n 10 \
  --max-s 2 2>/dev/null || fail "sweep --threads failed"
awk -F, '$1 == "concurrency_sweep" && $5 == 2 && $7 >= 10 && $13 == 0 { ok = 1 } END { exit !ok }' \
  "$WORK/threads/raw.csv" || fail "sweep --threads wrote no clean 2-client row"
# The ceiling: a first call slower than --probe-s marks the point and skips it.
"$BIN" bench "${COMMON[@]}" --out "$WORK/ceiling" --scenarios aggregate --probe-s 0.000001 \
  2>/dev/null || fail "bench --probe-s failed"
awk -F, '$1 == "aggregate" && $7 == 0 && $15 ~ /^ceiling/ { ok = 1 } END { exit !ok }' \
  "$WORK/ceiling/raw.csv" || fail "a first call over --probe-s did not mark the point ceiling"

# A failed check makes the run exit 1: the truth says one open issue with priority >= 4 more.
# (SCENARIOS=" ": checks only, reusing the loaded store.) duckdb is unavailable (no
# extension at the path given): SKIP, allowed.
mkdir -p "$WORK/bad" && cp -r "$D" "$WORK/bad/" || exit 2
python3 - "$WORK/bad/xs/meta.json" <<'PY' || exit 2
import json, sys
m = json.load(open(sys.argv[1]))
m["truth"]["open_priority_ge_4"] += 1
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
NO_EXT=$WORK/no-such.duckdb_extension
DATA_ROOT=$WORK/bad OUT=$WORK/bad/out BACKENDS="embedded duckdb" SCENARIOS=" " EXTRA="" \
  MENTAT_DUCKDB_EXTENSION=$NO_EXT ALLOW_UNAVAILABLE=1 bash "$HERE/run.sh" 2>/dev/null
rc=$?
((rc == 1)) || fail "a run with a failed check exited $rc, not 1"
grep -q '^check embedded xs before predicate_scan: FAIL' "$WORK/bad/out/checks.txt" ||
  fail "checks.txt lacks the failed predicate_scan"
((($(grep -c ': FAIL' "$WORK/bad/out/checks.txt")) == 1)) || fail "more than one check failed"
grep -q '^check duckdb xs before backend: SKIP expected=available actual=unavailable' \
  "$WORK/bad/out/checks.txt" || fail "duckdb is not reported unavailable"
# An unavailable backend without ALLOW_UNAVAILABLE: a FAIL, exit 1.
DATA_ROOT=$DATA_ROOT OUT=$WORK/unavail BACKENDS=duckdb SCENARIOS=" " EXTRA="" \
  MENTAT_DUCKDB_EXTENSION=$NO_EXT ALLOW_UNAVAILABLE=0 bash "$HERE/run.sh" 2>/dev/null
rc=$?
((rc == 1)) || fail "a run of an unavailable backend exited $rc, not 1"
grep -q '^check duckdb xs before backend: FAIL' "$WORK/unavail/checks.txt" ||
  fail "duckdb is not a FAIL without ALLOW_UNAVAILABLE"
echo "scale_smoke: OK after $(($(date +%s) - start)) s"
