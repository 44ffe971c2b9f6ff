#!/usr/bin/env bash
# bench/timeline-overhead.sh [--quick]
#
# What does the timeline cost? The same warm run with the timeline on (the default: per-interval
# histograms, device and CPU counters sampled every interval by the collecting thread) and off
# (DISKSCOPE_NO_TIMELINE=1), in interleaved pairs (on/off, then off/on, ...), for warm pread 4K
# (one thread) and io_uring 4K QD32 (one thread), random offsets over a cached file. Prints each
# pair's throughput ratio (on / off) and the median per workload; the issue asks for within 2%.
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
