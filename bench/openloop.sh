#!/usr/bin/env bash
# bench/openloop.sh [RATE_IOPS]
#
# Open loop, diskscope against fio, with a stall both see: the same 4 KiB random preads of the
# same cached file at the same Poisson rate, and every STALL_EVERY seconds the tool's processes
# are stopped for STALL_MS (SIGSTOP, then SIGCONT, by process id), the same pause for both. The
# pause stops the issuing thread, as a stalled device would stop a synchronous issuer: the
# operations due during it are issued late. fio reports latency from the issue (clat, lat), so
# its percentiles leave the wait out; diskscope's response time counts from the intended start
# and keeps it (docs/openloop.md). Interleaved: fio, diskscope, fio, diskscope (REPS pairs).
#
#   DISKSCOPE_BIN  a diskscope binary to use instead of building target/release/diskscope
#   BENCH_DIR    where the test file lives (default /var/tmp); created once, reused
#   RATE         operations per second (default 1000, or the first argument)
#   SECONDS_     seconds per run (default 10)
#   STALL_MS     length of each pause (default 100; 0: no pause)
#   STALL_EVERY  seconds between pauses (default 2)
#   REPS         pairs (default 2)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
RATE=${1:-${RATE:-1000}}
SECS=${SECONDS_:-10}
STALL_MS=${STALL_MS:-100}
STALL_EVERY=${STALL_EVERY:-2}
REPS=${REPS:-2}
DIR=${BENCH_DIR:-/var/tmp}
FILE=$DIR/diskscope-openloop-256M.bin
case "$RATE" in
  '' | *[!0-9]*) echo "bench/openloop.sh: RATE must be a whole number of IOPS, got '$RATE'" >&2; exit 2 ;;
esac
command -v fio >/dev/null || { echo "bench/openloop.sh: fio is not installed" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench/openloop.sh: jq is not installed" >&2; exit 1; }
if [ -n "${DISKSCOPE_BIN:-}" ]; then
  DS=$DISKSCOPE_BIN
else
  cargo build --release --quiet
  DS=target/release/diskscope
fi
[ -e "$FILE" ] || "$DS" run "$FILE" -w 1M 256 >/dev/null 2>&1
"$DS" run "$FILE" -r 1M 256 --method pread >/dev/null 2>&1 # warm it
OPS=$((RATE * SECS))
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

# Pauses process $1 and its children every STALL_EVERY s for STALL_MS, until $1 exits.
stall() {
  local pid=$1
  [ "$STALL_MS" -gt 0 ] || return 0
  while kill -0 "$pid" 2>/dev/null; do
    sleep "$STALL_EVERY"
    local pids="$pid $(pgrep -P "$pid" | tr '\n' ' ')"
    kill -STOP $pids 2>/dev/null || true
    sleep "$(echo "$STALL_MS / 1000" | bc -l)"
    kill -CONT $pids 2>/dev/null || true
  done
}

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $RATE IOPS Poisson, ${SECS}s," \
  "a ${STALL_MS} ms pause every ${STALL_EVERY} s"
printf '%-4s %-10s %10s %10s %10s %10s\n' pair tool p50_us p99_us p99.9_us iops
for rep in $(seq 1 "$REPS"); do
  fio --name=openloop --filename="$FILE" --rw=randread --bs=4k --ioengine=psync \
    --rate_iops="$RATE" --rate_process=poisson --runtime="$SECS" --time_based \
    --percentile_list=50:99:99.9 --output-format=json >"$TMPD/fio.json" 2>/dev/null &
  pid=$!
  stall "$pid" &
  spid=$!
  wait "$pid"
  wait "$spid" 2>/dev/null || true
  jq -r --arg rep "$rep" '.jobs[0].read as $r | ($r.lat_ns.percentile // $r.clat_ns.percentile) as $p
    | [$rep, "fio lat", ($p["50.000000"]/1000), ($p["99.000000"]/1000), ($p["99.900000"]/1000),
       $r.iops] | @tsv' "$TMPD/fio.json" |
    awk -F'\t' '{printf "%-4s %-10s %10.1f %10.1f %10.1f %10.0f\n", $1, $2, $3, $4, $5, $6}'

  "$DS" run "$FILE" -r 4K "$OPS" --method pread --pattern random --rate "$RATE" \
    --arrival poisson --json >"$TMPD/ds.json" 2>/dev/null &
  pid=$!
  stall "$pid" &
  spid=$!
  wait "$pid"
  wait "$spid" 2>/dev/null || true
  jq -r --arg rep "$rep" '.results[0] |
    ([$rep, "ds service", .lat_p50_us, .lat_p99_us, .lat_p999_us, .iops] | @tsv),
    ([$rep, "ds response", .resp_p50_us, .resp_p99_us, .resp_p999_us, .rate_iops_achieved] | @tsv)' \
    "$TMPD/ds.json" |
    awk -F'\t' '{printf "%-4s %-11s %10.1f %10.1f %10.1f %10.0f\n", $1, $2, $3, $4, $5, $6}'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
