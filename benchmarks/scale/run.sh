#!/usr/bin/env bash
# The scale suite (shared/bench/SCALE_SUITE.md): generates the dataset, loads it, runs the
# correctness checks, times every scenario and writes a summary.
#
#   benchmarks/scale/run.sh                         # scale s, every backend and scenario
#   SCALES="xs s" BACKENDS=embedded REPS=1 MIN_S=2 benchmarks/scale/run.sh
#
# Environment (defaults in brackets):
#   SCALES         scales to run, of xs s m l                          [s]
#   BACKENDS       embedded embedded-cache embedded-nocounts sqlite-sql sqlite-ext duckdb
#                  pg (mentat on PostgreSQL: run.sh starts a private PostgreSQL 15 cluster
#                  under OUT/pg-cluster, unix socket only, and migrates each scale's store
#                  into it; reads, checks, variants, concurrency_sweep and write_mixed
#                  (on a copy migrated into schema write_mixed_SCALE), not cold_vs_warm;
#                  MENTAT_SCALE_PG names another database)
#                  pg-sql (hand-written SQL over the same PostgreSQL schema: pg's baseline,
#                  as sqlite-sql is embedded's; reads, checks and variants)
#                  (embedded-nocounts: embedded without the value_counts pass)
#                  [embedded sqlite-sql]
#   SCENARIOS      bulk_load and the read scenarios                    [all of them]
#   EXTRA          write_mixed concurrency_sweep cold_vs_warm variants [the first three]
#                  (variants: the `variants` family's checks and timed points, for the
#                  backends that run them: embedded embedded-cache sqlite-sql pg pg-sql)
#   GRAPH          1: the store has the graph phase (graph.edn, `mentat-scale load-graph`),
#                  which the variants read; a separate store file, embedded-graph.db, so
#                  the eight scenarios keep their dataset otherwise  [1 with variants, else 0]
#   VARIANTS       the variants to run: "variants" (all) or variant/NAME ... [variants]
#   INTERLEAVE     how the variants' timed points are ordered: "variant" (each variant on
#                  every backend in turn, one process per point, the backends' order
#                  reversed every other rep, so a slow spell of a shared machine hits both
#                  sides of a ratio) or "backend" (each backend runs every variant in one
#                  process, then the next backend)                      [variant]
#   VARIANT_TIMEOUT_S  a variant check's query still running after this is stopped and
#                  the check is SKIP, not FAIL (a slow query is measured, not wrong) [PROBE_S]
#   CLIENTS        client counts of concurrency_sweep                  [1 2 4 8 16]
#   REPS           repetitions of every timed point                    [3]
#   MIN_S MIN_N MAX_S  each point runs >= MIN_S s and >= MIN_N calls, <= MAX_S s [10 30 60]
#   PROBE_S        a first call slower than this marks the point "ceiling" [20]
#   MIXED_S        length of write_mixed                               [60]
#   MIXED_READERS  reader processes of write_mixed                     [8]
#   DATA_ROOT      generated datasets and loaded stores (reused)       [/tmp/mentat-scale-data]
#   OUT            results                                             [build/scale-results/<UTC time>]
#   SEED           generator seed                                      [20260509]
#   THREADS        1: clients as threads instead of processes          [0]
#   COLD_DROP      cold_vs_warm evicts: all (drop_caches where allowed, else file),
#                  file (the store's pages only), none                 [all]
#   ALLOW_UNAVAILABLE  1: a check the backend cannot run yet, or a backend this driver
#                  cannot run at all (not built, pg), is SKIP, not FAIL   [0]
#   MENTAT_SCALE_BIN   the driver                       [build/benchmarks/scale/mentat-scale]
#
# Outputs in OUT: raw.csv, timings.csv (median over reps), loads.csv, checks.txt, env.txt,
# plans/, meta-<scale>.json (the dataset's truth), summary.md with plots (*.svg). Exits 1 when a check failed, 2 on another error.
set -uo pipefail
# The whole script is one compound command, read before any of it runs: editing run.sh while
# a run is under way cannot change what that run does.
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

SCALES=${SCALES:-s}
BACKENDS=${BACKENDS:-embedded sqlite-sql}
ALL_READS="point_lookup ref_traversal aggregate predicate_scan pull as_of since input_bindings"
SCENARIOS=${SCENARIOS:-bulk_load $ALL_READS}
EXTRA=${EXTRA-write_mixed concurrency_sweep cold_vs_warm}
CLIENTS=${CLIENTS:-1 2 4 8 16}
REPS=${REPS:-3}
MIN_S=${MIN_S:-10}
MIN_N=${MIN_N:-30}
MAX_S=${MAX_S:-60}
PROBE_S=${PROBE_S:-20}
VARIANTS=${VARIANTS:-variants}
INTERLEAVE=${INTERLEAVE:-variant}
if [[ " $EXTRA " == *" variants "* ]]; then GRAPH=${GRAPH:-1}; else GRAPH=${GRAPH:-0}; fi
VARIANT_TIMEOUT_S=${VARIANT_TIMEOUT_S:-$PROBE_S}
MIXED_S=${MIXED_S:-60}
MIXED_READERS=${MIXED_READERS:-8}
DATA_ROOT=${DATA_ROOT:-/tmp/mentat-scale-data}
OUT=${OUT:-$ROOT/build/scale-results/$(date -u +%Y-%m-%dT%H%M%SZ)}
SEED=${SEED:-20260509}
THREADS=${THREADS:-0}
COLD_DROP=${COLD_DROP:-all}
ALLOW_UNAVAILABLE=${ALLOW_UNAVAILABLE:-0}
MENTAT_SCALE_BIN=${MENTAT_SCALE_BIN:-$ROOT/build/benchmarks/scale/mentat-scale}
GEN_VERSION=2  # kGenVersion in scale.h

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
has() { [[ " $1 " == *" $2 "* ]]; }

if [[ ! -x $MENTAT_SCALE_BIN ]]; then
  log "building mentat-scale in $ROOT/build"
  cmake -S "$ROOT" -B "$ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMENTAT_TESTS=ON \
    -DMENTAT_BENCHMARKS=ON -DMENTAT_DUCKDB=ON >/dev/null &&
    cmake --build "$ROOT/build" --target mentat_scale -j1 || exit 2
fi
BUILD_DIR=$(cd "$(dirname "$MENTAT_SCALE_BIN")/../.." && pwd)
for b in $BACKENDS; do
  case $b in
    embedded | embedded-cache | embedded-nocounts | sqlite-sql | pg | pg-sql) ;;
    sqlite-ext)
      # The SQLite extension, from the driver's build tree unless MENTAT_SQLITE_EXT is set.
      export MENTAT_SQLITE_EXT=${MENTAT_SQLITE_EXT:-$BUILD_DIR/libmentat_sqlite.so}
      if [[ ! -f $MENTAT_SQLITE_EXT ]]; then
        log "building mentat_sqlite in $BUILD_DIR"
        cmake --build "$BUILD_DIR" --target mentat_sqlite -j1 || exit 2
      fi ;;
    duckdb)
      # The DuckDB extension, from the driver's build tree unless MENTAT_DUCKDB_EXTENSION is
      # set; built when the driver was built with the DuckDB pieces (else: unavailable).
      DEFAULT_DUCKDB_EXT=$BUILD_DIR/mentat.duckdb_extension
      export MENTAT_DUCKDB_EXTENSION=${MENTAT_DUCKDB_EXTENSION:-$DEFAULT_DUCKDB_EXT}
      if [[ $MENTAT_DUCKDB_EXTENSION == "$DEFAULT_DUCKDB_EXT" && ! -f $MENTAT_DUCKDB_EXTENSION ]] &&
         [[ $("$MENTAT_SCALE_BIN" backends duckdb 2>/dev/null) != *'built without'* ]]; then
        log "building mentat_duckdb_extension in $BUILD_DIR"
        cmake --build "$BUILD_DIR" --target mentat_duckdb_extension -j1 || exit 2
      fi ;;
    *) log "unknown backend '$b' (embedded, embedded-cache, embedded-nocounts, sqlite-sql, sqlite-ext, duckdb, pg, pg-sql)"; exit 2 ;;
  esac
done
READS=()
for s in $SCENARIOS; do
  if has "$ALL_READS" "$s"; then READS+=("$s");
  elif [[ $s != bulk_load ]]; then log "unknown scenario '$s'"; exit 2; fi
done
[[ $INTERLEAVE == variant || $INTERLEAVE == backend ]] ||
  { log "INTERLEAVE is variant or backend, not '$INTERLEAVE'"; exit 2; }
for s in $EXTRA; do
  has "write_mixed concurrency_sweep cold_vs_warm variants" "$s" || { log "unknown extra '$s'"; exit 2; }
done
if has "$EXTRA" variants; then
  KNOWN_VARIANTS=$("$MENTAT_SCALE_BIN" variants)
  for v in $VARIANTS; do
    [[ $v == variants ]] || grep -qx -- "$v" <<<"$KNOWN_VARIANTS" ||
      { log "unknown variant '$v' (mentat-scale variants lists them)"; exit 2; }
  done
fi

mkdir -p "$OUT/plans" "$DATA_ROOT" || exit 2

# pg: a private cluster for this run (stopped and deleted at exit) unless MENTAT_SCALE_PG names a
# database; each scale's store is migrated into a schema of it below.
PG_BASE=${MENTAT_SCALE_PG:-}
if { has "$BACKENDS" pg || has "$BACKENDS" pg-sql; } && [[ -z $PG_BASE ]]; then
  PG_CLUSTER=$OUT/pg-cluster
  # The server's socket lives in the cluster's directory, and a unix socket's path is at
  # most 107 bytes: a deep OUT gets its cluster in /tmp, linked from OUT.
  PG_TMP=
  if ((${#PG_CLUSTER} > 70)); then
    PG_TMP=$(mktemp -d /tmp/mentat-scale-pg-XXXXXX) || exit 2
    ln -sfn "$PG_TMP" "$PG_CLUSTER"
    PG_CLUSTER=$PG_TMP
  fi
  PG_BASE=$("$ROOT/tools/pg-cluster.sh" start "$PG_CLUSTER" "${PG_PORT:-55432}") ||
    { log "cannot start a PostgreSQL cluster in $PG_CLUSTER"; exit 2; }
  # Stopped and deleted at exit: its data is a copy of the run's stores.
  trap '"$ROOT/tools/pg-cluster.sh" stop "$PG_CLUSTER" >/dev/null 2>&1; rm -rf "$PG_CLUSTER"; [[ -n $PG_TMP ]] && rm -f "$OUT/pg-cluster"' EXIT
  export MENTAT_SCALE_PG=$PG_BASE
fi
CHECK_FAILED=0
ERRORS=0
rm -f "$OUT"/{raw.csv,timings.csv,loads.csv,checks.txt,summary.md,*.svg,meta-*.json} "$OUT"/plans/*.txt

# A backend this driver cannot run (not built, its library missing, pg not written yet) is
# "unavailable": one SKIP line per scale in checks.txt with ALLOW_UNAVAILABLE=1, else a FAIL
# line (and exit 1); either way it is left out of the run.
RUN_BACKENDS=
for b in $BACKENDS; do
  why=$("$MENTAT_SCALE_BIN" backends "$b" 2>&1)
  if [[ $why == "$b available" ]]; then
    RUN_BACKENDS+="${RUN_BACKENDS:+ }$b"
    continue
  fi
  why=${why#"$b unavailable: "}
  verdict=FAIL
  ((ALLOW_UNAVAILABLE)) && verdict=SKIP
  log "backend $b is unavailable: $why ($verdict)"
  [[ $verdict == FAIL ]] && CHECK_FAILED=1
  for scale in $SCALES; do
    echo "check $b $scale before backend: $verdict expected=available actual=unavailable: $why" \
      >>"$OUT/checks.txt"
  done
done

# ---- env.txt: the machine, the versions, the commit and every variable ----
{
  echo "date_utc:      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host:          $(hostname)"
  echo "kernel:        $(uname -srm)"
  echo "cpu_model:     $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "cpus:          $(nproc)"
  echo "mem_total_gib: $(awk '/MemTotal/ {printf "%.1f", $2/1048576}' /proc/meminfo)"
  echo "loadavg_start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "data_fs:       $(df -h "$DATA_ROOT" | tail -1 | tr -s ' ')"
  echo "compiler:      $(${CXX:-c++} --version 2>/dev/null | head -1)"
  echo "python:        $(python3 --version 2>&1)"
  "$MENTAT_SCALE_BIN" version 2>/dev/null | sed '1s/^/driver:        /; 2s/^duckdb /duckdb:        /'
  echo "mentat_git:    $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null) ($(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l) files changed in the work tree)"
  echo "driver_bin:    $MENTAT_SCALE_BIN"
  echo "run_backends:  $RUN_BACKENDS"
  for v in SCALES BACKENDS SCENARIOS EXTRA GRAPH VARIANTS INTERLEAVE VARIANT_TIMEOUT_S CLIENTS REPS MIN_S MIN_N \
           MAX_S PROBE_S MIXED_S MIXED_READERS DATA_ROOT OUT SEED THREADS COLD_DROP \
           ALLOW_UNAVAILABLE; do
    printf '%-14s %s\n' "$v:" "${!v}"
  done
  env | grep -E '^MENTAT_' | sed 's/^/env:           /'
} >"$OUT/env.txt"

# Runs the driver; rc 1 (a failed check) and rc >= 2 (an error) are remembered.
drive() {
  "$MENTAT_SCALE_BIN" "$@"
  local rc=$?
  if ((rc == 1)); then CHECK_FAILED=1; elif ((rc != 0)); then ERRORS=1; log "failed: mentat-scale $*"; fi
  return $rc
}

for scale in $SCALES; do
  D=$DATA_ROOT/$scale
  STORE=$D/embedded.db
  ((GRAPH)) && STORE=$D/embedded-graph.db
  if ! grep -q "\"gen_version\": $GEN_VERSION," "$D/meta.json" 2>/dev/null ||
     ! grep -q "\"seed\": $SEED," "$D/meta.json" 2>/dev/null; then
    log "gen $scale"
    rm -rf "$D"
    drive gen --scale "$scale" --out "$D" --seed "$SEED" || continue
  fi
  # The dataset's description and truth (a few tens of KB) beside the results, so that
  # report.py can rebuild summary.md from OUT alone.
  cp "$D/meta.json" "$OUT/meta-$scale.json" || ERRORS=1
  if has "$SCENARIOS" bulk_load || [[ ! -f $STORE.load.json ]]; then
    log "bulk_load $scale"
    drive load --data "$D" --store "$STORE" --out "$OUT" || continue
  else
    python3 - "$STORE" "$OUT/loads.csv" <<'EOF'
import json, os, sys
l = json.load(open(sys.argv[1] + ".load.json"))
new = not os.path.exists(sys.argv[2])
with open(sys.argv[2], "a") as f:
    if new:
        f.write("backend,scale,n_datoms,n_tx,wall_s,datoms_per_s,store_bytes,note\n")
    f.write(f"embedded,{l['scale']},{l['n_datoms']},{l['n_tx']},{l['wall_s']:.3f},"
            f"{l['n_datoms'] / l['wall_s']:.0f},{l['store_bytes']},reused an earlier load\n")
EOF
  fi
  if ((GRAPH)) && ! grep -q '"graph"' "$STORE.load.json"; then
    log "load-graph $scale"
    drive load-graph --data "$D" --store "$STORE" || continue
  fi
  if has "$RUN_BACKENDS" pg || has "$RUN_BACKENDS" pg-sql; then
    # The same store (its ids, so the context files hold) in PostgreSQL.
    PG_SCHEMA=scale_$scale$( ((GRAPH)) && echo _graph)
    log "migrate $scale into PostgreSQL (schema $PG_SCHEMA)"
    psql "$PG_BASE" -qc "DROP SCHEMA IF EXISTS $PG_SCHEMA CASCADE" >/dev/null 2>&1
    t0=$(date +%s.%N)
    if "$BUILD_DIR/mentat" migrate "$STORE" "$PG_BASE schema=$PG_SCHEMA" >"$OUT/pg-migrate-$scale.txt"; then
      # The bulk load of the pg backend: the migrate (one transaction, verified), in loads.csv.
      t1=$(date +%s.%N)
      bytes=$(psql "$PG_BASE" -Atc "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$PG_SCHEMA' AND c.relkind = 'r'")
      python3 - "$OUT/loads.csv" "$scale" "$OUT/pg-migrate-$scale.txt" "$t0" "$t1" "${bytes:-0}" <<'EOF2'
import os, re, sys
out, scale, report, t0, t1, size = sys.argv[1:]
n = int(re.search(r":datoms (\d+)", open(report).read()).group(1))
wall = float(t1) - float(t0)
new = not os.path.exists(out)
with open(out, "a") as f:
    if new:
        f.write("backend,scale,n_datoms,n_tx,wall_s,datoms_per_s,store_bytes,note\n")
    f.write(f"pg,{scale},{n},1,{wall:.3f},{n / wall:.0f},{size},"
            "mentat migrate from the embedded store (verified)\n")
EOF2
    else
      ERRORS=1; log "migrate into PostgreSQL failed"
    fi
    export MENTAT_SCALE_PG="$PG_BASE schema=$PG_SCHEMA"
  fi
  COMMON=(--data "$D" --out "$OUT" --seed "$SEED")
  ((THREADS)) && COMMON+=(--threads)
  RULES=(--min-s "$MIN_S" --min-n "$MIN_N" --max-s "$MAX_S" --probe-s "$PROBE_S")
  ALLOW=()
  ((ALLOW_UNAVAILABLE)) && ALLOW=(--allow-unavailable)

  for b in $RUN_BACKENDS; do
    log "checks before writes: $b $scale"
    drive check --backend "$b" --store "$STORE" "${COMMON[@]}" --phase before "${ALLOW[@]}"
    drive explain --backend "$b" --store "$STORE" "${COMMON[@]}"
  done
  if ((${#READS[@]})); then
    for rep in $(seq 1 "$REPS"); do
      for b in $RUN_BACKENDS; do
        log "read scenarios: $b $scale rep $rep"
        drive bench --backend "$b" --store "$STORE" "${COMMON[@]}" --rep "$rep" \
          --scenarios "${READS[*]}" --clients 1 "${RULES[@]}"
      done
    done
  fi
  if has "$EXTRA" variants; then
    # The variants family: each backend's answers against sqlite-sql's and meta.json's,
    # then the timed points. The extension backends do not run variants (yet).
    VB=
    for b in $RUN_BACKENDS; do
      if has "embedded embedded-cache sqlite-sql pg pg-sql" "$b"; then VB+="${VB:+ }$b";
      else log "variants: $b does not run them, left out"; fi
    done
    for b in $VB; do
      log "variant checks: $b $scale"
      drive check --backend "$b" --store "$STORE" "${COMMON[@]}" --phase variants \
        --variants "$VARIANTS" --timeout-s "$VARIANT_TIMEOUT_S" "${ALLOW[@]}"
    done
    # A timed unit: every variant at once (INTERLEAVE=backend), or one variant, each on
    # every backend in turn, the backends' order reversed every other rep.
    UNITS=("$VARIANTS")
    if [[ $INTERLEAVE == variant ]]; then
      VLIST=$VARIANTS
      [[ " $VARIANTS " == *" variants "* ]] && VLIST=$("$MENTAT_SCALE_BIN" variants)
      read -ra UNITS <<<"$(tr '\n' ' ' <<<"$VLIST")"
    fi
    VB_REV=$(tr ' ' '\n' <<<"$VB" | tac | tr '\n' ' ')
    for rep in $(seq 1 "$REPS"); do
      log "variants: $VB $scale rep $rep (interleaved by $INTERLEAVE)"
      order=$VB
      [[ $INTERLEAVE == variant ]] && ((rep % 2 == 0)) && order=$VB_REV
      for u in "${UNITS[@]}"; do
        for b in $order; do
          drive bench --backend "$b" --store "$STORE" "${COMMON[@]}" --rep "$rep" \
            --scenarios "$u" --clients 1 "${RULES[@]}"
        done
      done
    done
  fi
  if has "$EXTRA" concurrency_sweep; then
    for rep in $(seq 1 "$REPS"); do
      for b in $RUN_BACKENDS; do
        log "concurrency_sweep: $b $scale rep $rep (clients $CLIENTS)"
        drive sweep --backend "$b" --store "$STORE" "${COMMON[@]}" --rep "$rep" \
          --clients "$CLIENTS" "${RULES[@]}"
      done
    done
  fi
  if has "$EXTRA" cold_vs_warm; then
    for rep in $(seq 1 "$REPS"); do
      for b in $RUN_BACKENDS; do
        [[ $b == pg || $b == pg-sql ]] && { log "cold_vs_warm: $b is not run (the cache is the server's)"; continue; }
        log "cold_vs_warm: $b $scale rep $rep"
        drive coldwarm --backend "$b" --store "$STORE" "${COMMON[@]}" --rep "$rep" \
          --drop "$COLD_DROP"
      done
    done
  fi
  if has "$EXTRA" write_mixed; then
    # Each run writes to a copy, so the loaded store stays as the generator described it.
    WM=$D/write_mixed.db
    for rep in $(seq 1 "$REPS"); do
      for b in $RUN_BACKENDS; do
        [[ $b == pg-sql ]] && { log "write_mixed: pg-sql is not run (its writes are not written for PostgreSQL)"; continue; }
        log "write_mixed: $b $scale rep $rep ($MIXED_S s, $MIXED_READERS readers)"
        rm -f "$WM" "$WM-wal" "$WM-shm"
        sqlite3 "$STORE" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null &&
          cp "$STORE" "$WM" && cp "$STORE.load.json" "$WM.load.json" &&
          cp "$STORE.issues" "$WM.issues" || { ERRORS=1; continue; }
        if [[ $b == pg ]]; then
          # The copy in a schema of its own, migrated from the copied file (same ids).
          WM_SCHEMA=write_mixed_$scale
          psql "$PG_BASE" -qc "DROP SCHEMA IF EXISTS $WM_SCHEMA CASCADE" >/dev/null 2>&1
          "$BUILD_DIR/mentat" migrate "$WM" "$PG_BASE schema=$WM_SCHEMA" >/dev/null ||
            { ERRORS=1; log "migrate the write_mixed copy into PostgreSQL failed"; continue; }
          SCALE_PG=$MENTAT_SCALE_PG
          export MENTAT_SCALE_PG="$PG_BASE schema=$WM_SCHEMA"
        fi
        drive mixed --backend "$b" --store "$WM" "${COMMON[@]}" --rep "$rep" \
          --seconds "$MIXED_S" --readers "$MIXED_READERS"
        log "checks after write_mixed: $b $scale rep $rep"
        drive check --backend "$b" --store "$WM" "${COMMON[@]}" --phase after "${ALLOW[@]}"
        if [[ $b == pg ]]; then
          psql "$PG_BASE" -qc "DROP SCHEMA IF EXISTS $WM_SCHEMA CASCADE" >/dev/null 2>&1
          export MENTAT_SCALE_PG=$SCALE_PG
        fi
        rm -f "$WM" "$WM-wal" "$WM-shm" "$WM.load.json" "$WM.issues"
      done
    done
  fi
done

echo "loadavg_end:   $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/env.txt"
python3 "$HERE/report.py" "$OUT" || ERRORS=1
log "results in $OUT"
if [[ -f $OUT/checks.txt ]]; then
  log "checks: $(grep -c ': PASS' "$OUT/checks.txt") PASS, $(grep -c ': FAIL' "$OUT/checks.txt") FAIL, $(grep -c ': SKIP' "$OUT/checks.txt") SKIP"
fi
((CHECK_FAILED)) && exit 1
((ERRORS)) && exit 2
exit 0
}
