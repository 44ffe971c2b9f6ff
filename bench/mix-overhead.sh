#!/usr/bin/env bash
# bench/mix-overhead.sh [BASE_REV]
#
# What the mixed-workload machinery (issue 26: a direction per block, per-direction tallies)
# costs a run that does not mix: `run -r 4K` through pread and io_uring on a warm file, built
# from BASE_REV (default: the merge base with main) and from the working tree, side by side.
# Also times a 70/30 mix of the same size, for scale. Prints one table of medians.
#
#   BENCH_DIR  where the test file lives (default /var/tmp); reused when present
#   SIZE_MIB   test file size (default 256)
#   RUNS       runs per contender (default 7)
#
# Contenders run interleaved (A B C A B C ..., the order rotated each round); each reads the
# file right before it is timed, so every read run is warm. The figure is the MiB/s the run
# itself reports (its measured part only). Both builds are release builds made here.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
ROOT=$PWD
BASE=${1:-$(git merge-base HEAD main)}
BENCH_DIR=${BENCH_DIR:-/var/tmp}
SIZE_MIB=${SIZE_MIB:-256}
RUNS=${RUNS:-7}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "building $BASE (base) and the working tree (new), release ..." >&2
mkdir -p "$WORK/base"
git archive "$BASE" | tar -x -C "$WORK/base"
(cd "$WORK/base" && CARGO_TARGET_DIR="$WORK/base-target" cargo build --release --quiet --bin diskscope)
cargo build --release --quiet --bin diskscope
OLD="$WORK/base-target/release/diskscope"
NEW="$ROOT/target/release/diskscope"

FILE="$BENCH_DIR/diskscope-mix-bench-${SIZE_MIB}M.bin"
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -ne $((SIZE_MIB << 20)) ]; then
  rm -f "$FILE"
  "$NEW" run "$FILE" -w 1M "$SIZE_MIB" --method pread >/dev/null 2>&1
fi
BLOCKS=$((SIZE_MIB * 256))

# One timed run of contender $1; prints its MiB/s.
run_one() {
  local out
  case "$1" in
    old-pread) out=$("$OLD" run "$FILE" -r 4K "$BLOCKS" --method pread 2>&1 >/dev/null) ;;
    new-pread) out=$("$NEW" run "$FILE" -r 4K "$BLOCKS" --method pread 2>&1 >/dev/null) ;;
    old-uring) out=$("$OLD" run "$FILE" -r 4K "$BLOCKS" --method io_uring --queue-depth 8 2>&1 >/dev/null) ;;
    new-uring) out=$("$NEW" run "$FILE" -r 4K "$BLOCKS" --method io_uring --queue-depth 8 2>&1 >/dev/null) ;;
    new-mix70)
      rm -f "$WORK/mix.bin"
      out=$("$NEW" run "$WORK/mix.bin" -m 70 4K "$BLOCKS" --pattern sequential 2>&1 >/dev/null)
      rm -f "$WORK/mix.bin"
      ;;
  esac
  grep -o '[0-9.]* MiB/s' <<<"$out" | head -1 | cut -d' ' -f1
}

CONTENDERS=(old-pread new-pread old-uring new-uring new-mix70)
declare -A RESULTS
for ((r = 0; r < RUNS; r++)); do
  n=${#CONTENDERS[@]}
  for ((i = 0; i < n; i++)); do
    c=${CONTENDERS[$(((i + r) % n))]}
    cat "$FILE" >/dev/null
    RESULTS[$c]+="$(run_one "$c") "
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
spread() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {print lo "-" hi}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, base $BASE"
printf '%-10s %12s %20s\n' contender "median MiB/s" "min-max"
for c in "${CONTENDERS[@]}"; do
  printf '%-10s %12s %20s\n' "$c" "$(median <<<"${RESULTS[$c]}")" "$(spread <<<"${RESULTS[$c]}")"
done
