#!/usr/bin/env bash
# bench/kernel-cost.sh [--quick]
#
# What does the kernel view (`--kernel`) cost? Two workloads, each run without the view (off),
# with it on raw tracepoints (raw, the default where BTF is there) and on perf tracepoints
# (perf, the fallback), in interleaved rounds whose order rotates (off raw perf, raw perf off,
# perf off raw, ...), so a machine that speeds up or slows down during the bench weighs on
# every mode alike:
#   direct  4K random O_DIRECT io_uring, queue depth 32, one thread: the highest IOPS the disk
#           gives, every operation a block request (the view's programs run three or more
#           times per operation)
#   warm    4K random pread over a file in the page cache, one thread: no block request, so the
#           programs never run for the run (they still run for the rest of the machine's I/O)
# Prints each round's IOPS ratio (mode / off, from the same round) and per workload and mode
# the median, min and max of the ratios, and the process's CPU time per operation (user +
# system, from /usr/bin/time), which a machine shared with other work disturbs less than the
# rate. The issue asks for within 3% on `direct` and no measurable cost on `warm`.
#
# With BPF_STATS=1 the kernel's own accounting of the programs is turned on for the bench
# (sysctl kernel.bpf_stats_enabled=1, put back as it was at exit) and each run's JSON gives the
# time spent in the view's programs; the script prints it per request of the run (it includes
# the programs' runs for other processes' block I/O, which this shared machine has plenty of).
#
#   BENCH_DIR  where the test file lives (default /var/tmp); reused when present
#   SIZE_MIB   test file size (default 1024; --quick: 256)
#   ROUNDS     rounds per workload (default 9; --quick: 3)
#   OPS_DIRECT operations of a direct run (default 150000; --quick: 50000)
#   OPS_WARM   operations of a warm run (default 3000000; --quick: 1000000)
#   MODES      the modes to run (default "off raw perf")
#   BPF_STATS  1: report the programs' own time (needs root; changes a sysctl for the bench)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

QUICK=0
case "${1:-}" in
  "") ;;
  --quick) QUICK=1 ;;
  -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "bench/kernel-cost.sh: unknown argument '$1'; use --quick or no argument" >&2; exit 2 ;;
esac
BENCH_DIR=${BENCH_DIR:-/var/tmp}
if [ "$QUICK" = 1 ]; then
  SIZE_MIB=${SIZE_MIB:-256}; ROUNDS=${ROUNDS:-3}; OPS_DIRECT=${OPS_DIRECT:-50000}; OPS_WARM=${OPS_WARM:-1000000}
else
  SIZE_MIB=${SIZE_MIB:-1024}; ROUNDS=${ROUNDS:-9}; OPS_DIRECT=${OPS_DIRECT:-150000}; OPS_WARM=${OPS_WARM:-3000000}
fi
MODES=${MODES:-off raw perf}
for v in SIZE_MIB ROUNDS OPS_DIRECT OPS_WARM; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench/kernel-cost.sh: $v must be a positive integer (got '${!v}')" >&2; exit 2; }
done
for m in $MODES; do
  case $m in off | raw | perf) ;; *) echo "bench/kernel-cost.sh: MODES: '$m' is not off, raw or perf" >&2; exit 2 ;; esac
done
[ -d "$BENCH_DIR" ] || { echo "bench/kernel-cost.sh: BENCH_DIR $BENCH_DIR is not a directory" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/kernel-cost.sh: the kernel view needs root" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/kernel-cost.sh: needs python3 (to read the runs' JSON)" >&2; exit 2; }


command -v /usr/bin/time >/dev/null || { echo "bench/kernel-cost.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
cargo build --release --quiet --bin run
RUN=$PWD/target/release/run
tmp=$(mktemp -d)
was_stats=
cleanup() {
  rm -rf "$tmp"
  [ -n "$was_stats" ] && echo "$was_stats" >/proc/sys/kernel/bpf_stats_enabled
  return 0
}
trap cleanup EXIT
if [ "${BPF_STATS:-0}" = 1 ]; then
  was_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
  echo 1 >/proc/sys/kernel/bpf_stats_enabled
fi
FILE=$BENCH_DIR/diskscope-kernel-bench-${SIZE_MIB}M.bin
if [ ! -f "$FILE" ]; then
  "$RUN" "$FILE" -w 1M "$SIZE_MIB" --fsync >/dev/null 2>&1
fi

# "IOPS NS_PER_REQUEST CPU_US_PER_OP" of one run; $1: workload, $2: mode. The CPU time is
# the process's own (user + system, its threads and io_uring's workers), from /usr/bin/time.
one() {
  local work=$1 mode=$2 flags=() env=() ops
  case $work in
    direct) ops=$OPS_DIRECT; flags=(-r 4K "$ops" --method io_uring --queue-depth 32 --direct --pattern random) ;;
    warm) ops=$OPS_WARM; flags=(-r 4K "$ops" --method pread --pattern random --cache warm) ;;
  esac
  case $mode in
    raw) flags+=(--kernel); env=(env DISKSCOPE_KERNEL_ATTACH=raw) ;;
    perf) flags+=(--kernel); env=(env DISKSCOPE_KERNEL_ATTACH=perf) ;;
    off) env=(env) ;;
  esac
  "${env[@]}" /usr/bin/time -f "cpu %U %S" -o "$tmp/cpu" "$RUN" "$FILE" "${flags[@]}" --json 2>/dev/null >"$tmp/run.json"
  python3 - "$tmp/run.json" "$tmp/cpu" "$ops" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
k = (d.get("timeline") or {}).get("kernel") or {}
runs, ns = k.get("program_runs", 0), k.get("program_run_ns", 0)
req = ((k.get("total") or {}).get("requests") or 0)
cpu = [l.split() for l in open(sys.argv[2]) if l.startswith("cpu ")][-1]
cpu_us = (float(cpu[1]) + float(cpu[2])) * 1e6 / int(sys.argv[3])
print("%.1f %s %.2f" % (r["iops"], ("%.0f" % (ns / req)) if runs and req else "-", cpu_us))
EOF
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "kernel view cost: $FILE, $ROUNDS rounds, modes: $MODES"
echo "machine: $(nproc) CPUs, $(uname -r), $(cat /sys/block/"$(basename "$(df --output=source "$BENCH_DIR" | tail -1)")"/queue/scheduler 2>/dev/null || echo '?')"
read -r -a modes <<<"$MODES"
for work in direct warm; do
  [ "$work" = warm ] && cat "$FILE" >/dev/null
  declare -A ratios=() cpus=()
  for ((i = 0; i < ROUNDS; i++)); do
    declare -A iops=()
    line="$work round $((i + 1)):"
    for ((j = 0; j < ${#modes[@]}; j++)); do
      m=${modes[$(((i + j) % ${#modes[@]}))]}
      read -r v ns cpu < <(one "$work" "$m")
      iops[$m]=$v
      cpus[$m]+="$cpu "
      line+=" $m $v IOPS ${cpu} µs CPU/op"
      [ "$ns" != - ] && line+=" (${ns} ns in programs per request)"
    done
    for m in "${modes[@]}"; do
      [ "$m" = off ] && continue
      [ -n "${iops[off]:-}" ] || continue
      r=$(awk -v a="${iops[$m]}" -v b="${iops[off]}" 'BEGIN {printf "%.4f", a / b}')
      ratios[$m]+="$r "
      line+=" | $m/off $r"
    done
    echo "$line"
    unset iops
  done
  for m in "${modes[@]}"; do
    [ "$m" = off ] && continue
    [ -n "${ratios[$m]:-}" ] || continue
    vals=$(tr ' ' '\n' <<<"${ratios[$m]}" | grep .)
    echo "$work $m/off: median $(median <<<"$vals"), min $(sort -g <<<"$vals" | head -1), max $(sort -g <<<"$vals" | tail -1)"
  done
  for m in "${modes[@]}"; do
    vals=$(tr ' ' '\n' <<<"${cpus[$m]}" | grep .)
    echo "$work $m: CPU per operation median $(median <<<"$vals") µs (min $(sort -g <<<"$vals" | head -1), max $(sort -g <<<"$vals" | tail -1))"
  done
  unset ratios cpus
done
