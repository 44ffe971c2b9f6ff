#!/usr/bin/env bash
# bench/openloop-vs-fio.sh [RATE_IOPS]
#
# Open loop side by side: diskscope `run --rate` and fio `rate_iops` + `rate_process=poisson`,
# the same 4 KiB random preads at the same rate on the same cached file. Prints fio's latency
# percentiles (from the issue) and diskscope's service and response percentiles (from the issue
# and from the intended start, see docs/openloop.md). Short: ~10 s per tool.
#
#   BENCH_DIR  where the test file lives (default /var/tmp); created once, reused, never removed
#   RATE       operations per second (default 2000, or the first argument)
#   SECONDS_   seconds per tool (default 10)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
RATE=${1:-${RATE:-2000}}
SECS=${SECONDS_:-10}
DIR=${BENCH_DIR:-/var/tmp}
FILE=$DIR/diskscope-openloop-256M.bin
case "$RATE" in
  '' | *[!0-9]*) echo "bench/openloop-vs-fio.sh: RATE must be a whole number of IOPS, got '$RATE'" >&2; exit 2 ;;
esac
command -v fio >/dev/null || { echo "bench/openloop-vs-fio.sh: fio is not installed" >&2; exit 1; }
cargo build --release --quiet
DS=target/release/diskscope
if [ ! -e "$FILE" ]; then
  "$DS" run "$FILE" -w 1M 256 >/dev/null
fi
"$DS" run "$FILE" -r 1M 256 --method pread >/dev/null 2>&1 # warm it
OPS=$((RATE * SECS))

echo "== fio: rate_iops=$RATE rate_process=poisson, psync 4K randread, ${SECS}s"
fio --name=openloop --filename="$FILE" --rw=randread --bs=4k --ioengine=psync \
  --rate_iops="$RATE" --rate_process=poisson --runtime="$SECS" --time_based \
  --percentile_list=50:90:99:99.9 --output-format=normal 2>&1 |
  grep -E 'iops|clat percentiles|^ +\|| lat \(' || true

echo
echo "== diskscope: run --rate $RATE --arrival poisson, pread 4K random, $OPS ops"
"$DS" run "$FILE" -r 4K "$OPS" --method pread --pattern random --rate "$RATE" \
  --arrival poisson 2>&1 >/dev/null | grep -E '^(read|open loop|kept up|fell behind)'
