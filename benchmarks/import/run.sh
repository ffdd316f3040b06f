#!/usr/bin/env bash
# The import benchmark: a CSV of ROWS rows x 10 columns (1,000,000 cells by default: longs,
# doubles, booleans, instants, strings) into a new store with the schema inferred
# (`mentat import STORE FILE --as bench`, the default batch of 1,000 records per
# transaction unless BATCH says otherwise), REPS times; prints datoms/s per run and the
# median, and writes OUT/results.md. Goal (issue 25): at least 250,000 datoms/s.
#
#   benchmarks/import/run.sh [BUILD_DIR]     (env: ROWS=100000 REPS=3 BATCH= OUT=...)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
ROWS=${ROWS:-100000}
REPS=${REPS:-3}
BATCH=${BATCH:-}
BATCH_ARGS=()
[ -n "$BATCH" ] && BATCH_ARGS=(--batch "$BATCH")
OUT=${OUT:-$ROOT/benchmarks/results/$(date -u +%Y-%m-%d)-import}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
python3 - "$WORK/data.csv" "$ROWS" <<'PY'
import random, sys
path, rows = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
with open(path, "w") as f:
    f.write("id,name,age,score,active,born,city,team,level,note\n")
    for i in range(rows):
        f.write("%d,user %d,%d,%.3f,%s,2024-%02d-%02dT10:00:00Z,city-%d,team-%d,%d,note %d\n" % (
            i, i, rng.randrange(18, 90), rng.random() * 100, "true" if i % 2 else "false",
            1 + i % 12, 1 + i % 28, i % 500, i % 40, i % 7, rng.randrange(10**6)))
PY
cells=$((ROWS * 10))
rates=()
for rep in $(seq "$REPS"); do
  rm -f "$WORK/s.db"*
  start=$(date +%s.%N)
  "$BUILD/mentat" --format edn import "$WORK/s.db" "$WORK/data.csv" --as bench "${BATCH_ARGS[@]}" \
    >"$WORK/summary.edn"
  end=$(date +%s.%N)
  datoms=$(python3 -c "import re,sys; print(re.search(r':datoms (\d+)', open(sys.argv[1]).read()).group(1))" "$WORK/summary.edn")
  rate=$(python3 -c "print(int($datoms / ($end - $start)))")
  echo "run $rep: $datoms datoms in $(python3 -c "print('%.2f' % ($end - $start))") s: $rate datoms/s" >&2
  rates+=("$rate")
done
median=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
{
  echo "# Import: CSV with an inferred schema"
  echo
  echo "$ROWS rows x 10 columns ($cells cells), \`mentat import STORE FILE --as bench ${BATCH_ARGS[*]}\`"
  echo "into a new store, $REPS runs, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)."
  echo "Command: \`ROWS=$ROWS REPS=$REPS BATCH=$BATCH benchmarks/import/run.sh\`"
  echo
  echo "datoms/s per run: ${rates[*]}; median $median (goal: 250,000)."
} >"$OUT/results.md"
cat "$OUT/results.md"
