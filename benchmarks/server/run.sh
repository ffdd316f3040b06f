#!/usr/bin/env bash
# The HTTP server benchmark: q1 (point_lookup) through `mentat serve` with wrk at 1, 8 and
# 64 connections, beside q1 in process (mentat-inproc-q1) at 1 and 8 threads, on one store
# of the scale suite's dataset (SCALE, default s). Writes OUT/results.md.
#
#   benchmarks/server/run.sh [BUILD_DIR]     (env: SCALE=s SECONDS_EACH=10 OUT=... DATA_ROOT=...)
#
# Needs wrk (Debian: installed here when missing).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
SCALE=${SCALE:-s}
SECS=${SECONDS_EACH:-10}
OUT=${OUT:-$ROOT/benchmarks/results/$(date -u +%Y-%m-%d)-server-$SCALE}
DATA_ROOT=${DATA_ROOT:-/tmp/mentat-server-bench}
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if ! command -v wrk >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk
fi
ninja -C "$BUILD" mentat_cli mentat_scale mentat_inproc_q1 >/dev/null
SCALE_BIN=$BUILD/benchmarks/scale/mentat-scale
mkdir -p "$OUT" "$DATA_ROOT"
DATA=$DATA_ROOT/data-$SCALE
STORE=$DATA_ROOT/store-$SCALE.db
if [ ! -f "$STORE" ]; then
  log "generating and loading scale $SCALE"
  rm -rf "$DATA"
  "$SCALE_BIN" gen --scale "$SCALE" --out "$DATA" >/dev/null
  "$SCALE_BIN" load --data "$DATA" --store "$STORE" >/dev/null
fi
USERS=$("$BUILD/mentat" "$STORE" --read-only --format edn '.q [:find (count ?u) . :where [?u :user/email]]')
export USERS
log "store $STORE: $USERS users"

{
  echo "# q1 through mentat serve (wrk) and in process"
  echo
  echo "Scale $SCALE ($USERS users), $SECS s per point, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)."
  echo "Command: \`SCALE=$SCALE SECONDS_EACH=$SECS benchmarks/server/run.sh\`"
  echo
  echo "| way | clients | requests/s | p50 ms | p99 ms |"
  echo "|---|---:|---:|---:|---:|"
} >"$OUT/results.md"

for threads in 1 8; do
  line=$("$BUILD/benchmarks/server/mentat-inproc-q1" "$STORE" "$USERS" "$threads" "$SECS")
  log "in process: $line"
  rps=$(sed -E 's/.*rps=([0-9.]+).*/\1/' <<<"$line")
  p50=$(sed -E 's/.*p50_ms=([0-9.]+).*/\1/' <<<"$line")
  p99=$(sed -E 's/.*p99_ms=([0-9.]+).*/\1/' <<<"$line")
  echo "| in process | $threads | $rps | $p50 | $p99 |" >>"$OUT/results.md"
  eval "INPROC_$threads=$rps"
done

TOKENS=$DATA_ROOT/tokens
echo "bench-token-0123456789 read-only" >"$TOKENS"
PORT=$((20000 + RANDOM % 20000))
"$BUILD/mentat" serve "$STORE" --read-only --listen "127.0.0.1:$PORT" --tokens "$TOKENS" \
  --access-log "" --max-concurrent 128 2>"$OUT/server.log" &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
for conns in 1 8 64; do
  t=$((conns < 2 ? 1 : 2))
  TOKEN=bench-token-0123456789 wrk -t"$t" -c"$conns" -d"${SECS}s" --latency \
    -s "$ROOT/benchmarks/server/q1.lua" "http://127.0.0.1:$PORT" >"$OUT/wrk-$conns.txt" 2>&1
  rps=$(awk '/Requests\/sec/ {print $2}' "$OUT/wrk-$conns.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$OUT/wrk-$conns.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$OUT/wrk-$conns.txt")
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$OUT/wrk-$conns.txt")
  log "http, $conns connections: $rps req/s, p50 $p50, p99 $p99${non2xx:+, $non2xx non-2xx}"
  echo "| HTTP (wrk) | $conns | $rps | $p50 | $p99 |" >>"$OUT/results.md"
  eval "HTTP_$conns=$rps"
done
kill -TERM $SERVER
wait $SERVER || true
trap - EXIT
ratio=$(python3 -c "print('%.2f' % ($HTTP_8 / $INPROC_8))")
{
  echo
  echo "HTTP at 8 connections / in process at 8 threads: $ratio (goal: at least 0.70)."
  echo "wrk's latencies carry their unit (us, ms); in-process ones are ms."
} >>"$OUT/results.md"
cat "$OUT/results.md"
