#!/usr/bin/env bash
# Runs each fuzz target for a bounded time and summarises executions and findings.
#
#   fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
#
# Seeds: BUILD_DIR/corpus/<target> (fuzz/build_corpus.py). New inputs found are kept in
# BUILD_DIR/work/<target> (reused by the next run); crashes, leaks and timeouts go to
# BUILD_DIR/artifacts/<target>/. Exits non-zero when any target found a crash.
set -u
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$here"/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
printf '%-14s %10s %8s %8s %s\n' target execs cov corpus result
for t in "${targets[@]}"; do
  bin="$build/$t"
  [ -x "$bin" ] || { echo "$t: not built"; status=1; continue; }
  mkdir -p "$build/work/$t" "$build/artifacts/$t" "$build/corpus/$t"
  log="$build/artifacts/$t.log"
  "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -max_len=4096 \
    -print_final_stats=1 -dict="$here/mentat.dict" \
    -artifact_prefix="$build/artifacts/$t/" "$build/work/$t" "$build/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  corpus=$(ls "$build/work/$t" | wc -l)
  if [ $rc -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc, see $log)"
    status=1
  fi
  printf '%-14s %10s %8s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "$corpus" "$result"
  if [ $rc -ne 0 ]; then
    grep -m5 -E 'ERROR|invariant broken|runtime error|SUMMARY' "$log" | sed 's/^/    /'
    ls "$build/artifacts/$t" | sed 's/^/    artifact: /'
  fi
done
exit $status
