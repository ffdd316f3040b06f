#!/usr/bin/env bash
# ctest scale_smoke: the whole scale suite at scale xs with short points (generator, load,
# every scenario, the checks before and after write_mixed, the summary), then compare on
# its own output (which must find no regression). Well under two minutes.
#
#   smoke.sh MENTAT_SCALE_BIN WORK_DIR
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: smoke.sh MENTAT_SCALE_BIN WORK_DIR}
WORK=${2:?usage: smoke.sh MENTAT_SCALE_BIN WORK_DIR}
export MENTAT_SCALE_BIN=$BIN DATA_ROOT=$WORK/data OUT=$WORK/out
export SCALES=xs BACKENDS="embedded sqlite-sql" REPS=1 MIN_S=0.2 MIN_N=30 MAX_S=3 PROBE_S=20
export MIXED_S=1 MIXED_READERS=2 CLIENTS="1 2" EXTRA="write_mixed concurrency_sweep cold_vs_warm"
export ALLOW_UNAVAILABLE=0  # every check must PASS
# Evict only the store's own pages: the machine's whole page cache is not the test's.
export COLD_DROP=file
export SCENARIOS="bulk_load point_lookup ref_traversal aggregate predicate_scan pull as_of since input_bindings"
rm -rf "$OUT" "$DATA_ROOT"  # regenerate: the checksum below tests the generator itself
start=$(date +%s)
bash "$HERE/run.sh"
rc=$?
echo "scale_smoke: run.sh exited $rc after $(($(date +%s) - start)) s"
((rc == 0)) || exit "$rc"
for f in raw.csv timings.csv loads.csv checks.txt env.txt summary.md latency.svg throughput.svg; do
  [[ -s $OUT/$f ]] || { echo "scale_smoke: $OUT/$f is missing or empty"; exit 1; }
done
n=$(grep -c ': PASS' "$OUT/checks.txt")
((n == 2 * (18 + 8))) || { echo "scale_smoke: $n checks passed, expected $((2 * 26))"; exit 1; }
ls "$OUT"/plans/*.txt >/dev/null || exit 1
# The dataset is the same bytes on every machine (xs.sha256 pins generator version 1;
# a deliberate change of the dataset bumps kGenVersion and this file).
(cd "$DATA_ROOT/xs" && sha256sum --quiet -c "$HERE/xs.sha256") ||
  { echo "scale_smoke: the xs dataset differs from xs.sha256"; exit 1; }
"$HERE/compare" "$OUT" "$OUT" >/dev/null || { echo "scale_smoke: compare flagged itself"; exit 1; }
echo "scale_smoke: OK"
