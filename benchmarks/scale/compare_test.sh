#!/usr/bin/env bash
# ctest scale_compare: `compare OLD NEW [--threshold N] [--min-ms M]` on small made-up runs.
# Checks the exit status (0 no regression, 1 a regression, 2 bad input) and the verdict of
# each row: p50, p99 and ops/s beyond the threshold, the threshold itself, --min-ms, rows
# matched by (scenario, backend, scale, clients, op), ceiling rows left out, medians over
# the repetitions of raw.csv, a directory's timings.csv preferred to its raw.csv.
#
#   compare_test.sh WORK_DIR
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${1:?usage: compare_test.sh WORK_DIR}
rm -rf "$WORK" && mkdir -p "$WORK" || exit 2
FAILS=0
HEAD="scenario,backend,scale,n_datoms,clients,op,count,p50_ms,p95_ms,p99_ms,max_ms,throughput_ops_s,errors,rep,note,cpu_p50_ms"

# row SCENARIO CLIENTS P50 P99 OPS [REP] [NOTE]
row() { echo "$1,embedded,xs,100000,$2,read,100,$3,$3,$4,$4,$5,0,${6:-1},${7:-},"; }

# expect WANT_RC WANT_TEXT_OR_EMPTY -- compare ARGS...
expect() {
  local want_rc=$1 want_text=$2
  shift 3
  local out rc
  out=$("$HERE/compare" "$@" 2>&1)
  rc=$?
  if ((rc != want_rc)); then
    echo "FAIL: compare $* exited $rc, expected $want_rc"; echo "$out"; FAILS=$((FAILS + 1))
  elif [[ -n $want_text && $out != *"$want_text"* ]]; then
    echo "FAIL: compare $* does not print '$want_text'"; echo "$out"; FAILS=$((FAILS + 1))
  else
    echo "ok: compare $* -> $rc"
  fi
}

mkdir -p "$WORK/old" "$WORK/same" "$WORK/p50" "$WORK/p99" "$WORK/ops" "$WORK/tiny" "$WORK/reps"
{ echo "$HEAD"; row point_lookup 1 1.0 2.0 1000; row aggregate 1 50 60 20
  row concurrency_sweep 4 2.0 4.0 2000; row predicate_scan 1 0 0 0 1 ceiling; } >"$WORK/old/timings.csv"
cp "$WORK/old/timings.csv" "$WORK/same/timings.csv"
# p50 of aggregate +20%; the ceiling row of OLD is a point in NEW (ignored: not comparable).
{ echo "$HEAD"; row point_lookup 1 1.0 2.0 1000; row aggregate 1 60 60 20
  row concurrency_sweep 4 2.0 4.0 2000; row predicate_scan 1 900 950 1; } >"$WORK/p50/timings.csv"
# p99 of point_lookup +50%, p50 +5% (within the threshold).
{ echo "$HEAD"; row point_lookup 1 1.05 3.0 1000; row aggregate 1 50 60 20
  row concurrency_sweep 4 2.0 4.0 2000; } >"$WORK/p99/timings.csv"
# throughput of the sweep point -25%.
{ echo "$HEAD"; row point_lookup 1 1.0 2.0 1000; row aggregate 1 50 60 20
  row concurrency_sweep 4 2.0 4.0 1500; } >"$WORK/ops/timings.csv"
# the same file as timings.csv, which a directory prefers to its raw.csv (a regression here).
cp "$WORK/old/timings.csv" "$WORK/tiny/timings.csv"
{ echo "$HEAD"; row point_lookup 1 9.0 9.0 10; } >"$WORK/tiny/raw.csv"
# raw.csv with three repetitions: the medians (1.0, 2.0, 1000) equal OLD despite an outlier.
{ echo "$HEAD"; row point_lookup 1 1.0 2.0 1000 1; row point_lookup 1 7.0 9.0 100 2
  row point_lookup 1 0.9 1.9 1100 3; } >"$WORK/reps/raw.csv"

expect 0 "4 points compared, 0 regressed" -- "$WORK/old" "$WORK/same"
expect 0 "ok (ceiling in both)" -- "$WORK/old" "$WORK/same/timings.csv" --threshold 10
expect 1 "REGRESSION p50" -- "$WORK/old" "$WORK/p50"
expect 1 "4 points compared, 1 regressed beyond 10%" -- "$WORK/old" "$WORK/p50"
expect 1 "ok (was ceiling)" -- "$WORK/old" "$WORK/p50"
# A point that hits the ceiling in NEW and did not in OLD is a regression.
expect 1 "REGRESSION ceiling" -- "$WORK/p50" "$WORK/old"
expect 0 "0 regressed beyond 25%" -- "$WORK/old" "$WORK/p50" --threshold 25
expect 1 "REGRESSION p99" -- "$WORK/old" "$WORK/p99" --threshold 10
expect 0 "" -- "$WORK/old" "$WORK/p99" --threshold 60
# Both p99s (2 and 3 ms) are below --min-ms 5: timer noise, not flagged.
expect 0 "" -- "$WORK/old" "$WORK/p99" --min-ms 5
expect 1 "REGRESSION ops/s" -- "$WORK/old" "$WORK/ops"
expect 0 "" -- "$WORK/old" "$WORK/ops" --threshold 30
# An improvement in NEW is no regression.
expect 0 "0 regressed" -- "$WORK/p99" "$WORK/old"
# Errors where there were none.
{ echo "$HEAD"; row point_lookup 1 1.0 2.0 1000 | sed 's/,100,1.0,1.0,2.0,2.0,1000,0,/,100,1.0,1.0,2.0,2.0,1000,3,/'
} >"$WORK/errors.csv"
expect 1 "REGRESSION errors" -- "$WORK/old" "$WORK/errors.csv"
echo "not,a,suite,csv" >"$WORK/bad.csv"
expect 2 "not a scale-suite CSV" -- "$WORK/old" "$WORK/bad.csv"
expect 0 "0 regressed" -- "$WORK/old" "$WORK/tiny"
expect 0 "1 points compared, 0 regressed" -- "$WORK/reps" "$WORK/old"
expect 2 "" -- "$WORK/old"
expect 2 "" -- "$WORK/old" "$WORK/p50" --threshold
expect 2 "" -- "$WORK/old" "$WORK/p50" --threshold ten
expect 2 "no such file" -- "$WORK/old" "$WORK/nowhere"
{ echo "$HEAD"; row point_lookup 16 1.0 2.0 1000; } >"$WORK/disjoint.csv"
expect 2 "no point in common" -- "$WORK/old" "$WORK/disjoint.csv"
mkdir -p "$WORK/empty"
expect 2 "no timings.csv or raw.csv" -- "$WORK/old" "$WORK/empty"

if ((FAILS)); then
  echo "scale_compare: $FAILS FAILED"
  exit 1
fi
echo "scale_compare: OK"
