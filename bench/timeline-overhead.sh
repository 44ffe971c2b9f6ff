#!/usr/bin/env bash
# bench/timeline-overhead.sh [--quick]
#
# What does the timeline cost? The same warm run with the timeline on (the default: per-interval
# histograms, device and CPU counters sampled every interval by the collecting thread) and off
# (DISKSCOPE_NO_TIMELINE=1), in interleaved pairs (on/off, then off/on, ...), for warm pread 4K
# (one thread) and io_uring 4K QD32 (one thread), random offsets over a cached file. Prints each
# pair's throughput ratio (on / off) and the median per workload; the issue asks for within 2%.
#
# Pairs of whole runs on a shared VM spread by several percent, more than the 2% to be shown. So
# the script also measures the cost where it is paid: every timeline operation (adding each
# worker's 100 ms snapshot to its interval, reading /sys/block/DEV/stat and /proc/stat once an
# interval) runs on the collecting thread (the process's main thread); the workers run the same
# code either way. `perf stat -e task-clock --per-thread` attached to the run gives that thread's
# CPU time with the timeline on and off; the difference, over the run's wall time, is the most
# the timeline can take from the workers (all of it, if the collector and a worker shared a core).
#
#   BENCH_DIR  where the test file lives (default /var/tmp); reused when present
#   SIZE_MIB   test file size (default 1024; --quick: 256)
#   PAIRS      pairs per workload (default 10; --quick: 4)
#   OPS        operations per run (default 4000000; --quick: 1000000)
#   INTERVAL   the timeline's --interval (default 1s; 100ms is the explorer's, the dearest)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

QUICK=0
case "${1:-}" in
  "") ;;
  --quick) QUICK=1 ;;
  -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "bench/timeline-overhead.sh: unknown argument '$1'; use --quick or no argument" >&2; exit 2 ;;
esac
BENCH_DIR=${BENCH_DIR:-/var/tmp}
if [ "$QUICK" = 1 ]; then
  SIZE_MIB=${SIZE_MIB:-256}; PAIRS=${PAIRS:-4}; OPS=${OPS:-1000000}
else
  SIZE_MIB=${SIZE_MIB:-1024}; PAIRS=${PAIRS:-10}; OPS=${OPS:-4000000}
fi
INTERVAL=${INTERVAL:-1s}
for v in SIZE_MIB PAIRS OPS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench/timeline-overhead.sh: $v must be a positive integer (got '${!v}')" >&2; exit 2; }
done
[ -d "$BENCH_DIR" ] || { echo "bench/timeline-overhead.sh: BENCH_DIR $BENCH_DIR is not a directory" >&2; exit 2; }

cargo build --release --quiet --bin run
RUN=$PWD/target/release/run
FILE=$BENCH_DIR/diskscope-timeline-bench-${SIZE_MIB}M.bin
if [ ! -f "$FILE" ]; then
  "$RUN" "$FILE" -w 1M "$SIZE_MIB" >/dev/null 2>&1
fi

# MiB/s of one run (from the summary line on stderr); $1: on|off, the rest: run's flags.
one() {
  local mode=$1; shift
  local env=()
  [ "$mode" = off ] && env=(env DISKSCOPE_NO_TIMELINE=1)
  "${env[@]}" "$RUN" "$FILE" -r 4K "$OPS" --pattern random --cache warm --interval "$INTERVAL" "$@" 2>&1 >/dev/null |
    sed -n 's/^read .* s: \([0-9.]*\) MiB\/s.*/\1/p'
}

# The collecting thread's CPU milliseconds and the run's wall seconds: "MS S". $1: on|off.
collector_cpu() {
  local mode=$1; shift
  local env=() log pid t0 t1
  [ "$mode" = off ] && env=(env DISKSCOPE_NO_TIMELINE=1)
  log=$(mktemp)
  # Warmed by another process, so the collecting thread's time is the run's alone.
  cat "$FILE" >/dev/null
  t0=$(date +%s.%N)
  "${env[@]}" "$RUN" "$FILE" -r 4K "$OPS" --pattern random --cache as-is --interval "$INTERVAL" "$@" >/dev/null 2>&1 &
  pid=$!
  perf stat -e task-clock --per-thread -x, -o "$log" -p "$pid" 2>/dev/null || true
  wait "$pid" || true
  t1=$(date +%s.%N)
  # The main thread's line is named "<comm>-<pid>".
  awk -F, -v p="-$pid" -v s="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
    'index($1, p) && substr($1, length($1) - length(p) + 1) == p {print $2, s}' "$log"
  rm -f "$log"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "timeline on vs off, $PAIRS interleaved pairs, $OPS random 4K reads of a warm $SIZE_MIB MiB file, interval $INTERVAL"
echo "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for workload in "pread:--method pread" "io_uring QD32:--method io_uring --queue-depth 32"; do
  name=${workload%%:*}; flags=${workload#*:}
  ratios=()
  for i in $(seq 1 "$PAIRS"); do
    # shellcheck disable=SC2086
    if [ $((i % 2)) = 1 ]; then on=$(one on $flags); off=$(one off $flags)
    else off=$(one off $flags); on=$(one on $flags); fi
    r=$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.4f", a / b}')
    ratios+=("$r")
    printf '  %-14s pair %2d: on %9.1f MiB/s, off %9.1f MiB/s, on/off %s\n' "$name" "$i" "$on" "$off" "$r"
  done
  med=$(printf '%s\n' "${ratios[@]}" | median)
  printf '%-16s median on/off %s (%+.2f%%)\n' "$name" "$med" "$(awk -v m="$med" 'BEGIN {print (m - 1) * 100}')"
done

if command -v perf >/dev/null && perf stat -e task-clock -x, true >/dev/null 2>&1; then
  echo
  echo "the collecting thread's CPU time (perf stat --per-thread), timeline on vs off, $PAIRS runs each"
  for workload in "pread:--method pread" "io_uring QD32:--method io_uring --queue-depth 32"; do
    name=${workload%%:*}; flags=${workload#*:}
    ons=(); offs=(); walls=()
    for i in $(seq 1 "$PAIRS"); do
      # shellcheck disable=SC2086
      read -r on_ms wall < <(collector_cpu on $flags)
      # shellcheck disable=SC2086
      read -r off_ms _ < <(collector_cpu off $flags)
      ons+=("$on_ms"); offs+=("$off_ms"); walls+=("$wall")
    done
    on_med=$(printf '%s\n' "${ons[@]}" | median)
    off_med=$(printf '%s\n' "${offs[@]}" | median)
    wall_med=$(printf '%s\n' "${walls[@]}" | median)
    printf '%-16s collector CPU: on %.1f ms, off %.1f ms per run of %.2f s: the timeline costs %.1f ms, %.3f%% of the run\n' \
      "$name" "$on_med" "$off_med" "$wall_med" "$(awk -v a="$on_med" -v b="$off_med" 'BEGIN {print a - b}')" \
      "$(awk -v a="$on_med" -v b="$off_med" -v w="$wall_med" 'BEGIN {print (a - b) / (w * 1000) * 100}')"
  done
else
  echo "(perf stat with task-clock is not available here: the collecting thread's CPU time is not measured)"
fi
