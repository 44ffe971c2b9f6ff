#!/usr/bin/env bash
# bench/compare-load.sh [ROWS]
#
# How long `diskscope compare OLD NEW` takes to load and match large inputs (issue 21 #12: the
# loader and the matcher were quadratic: 80k rows with distinct hosts took 55.6 s, 100k distinct
# points 21.4 s). Generates per-repetition CSVs of ROWS rows per side (default 1000000) in a
# temporary directory, removed at exit, and times `compare --csv` (wall and CPU seconds, peak
# memory) on four shapes:
#
#   distinct-hosts    one point, every row from another host (the hosts/files lists)
#   distinct-points   ROWS/10 points of 10 repetitions (matching points; the statistics per point)
#   single-reps       ROWS points of 1 repetition each (matching points only)
#   one-point         ROWS repetitions of one point (the rank statistics on a huge sample)
#
# Uses target/release/diskscope: run `cargo build --release --bin diskscope` first. Each side's
# CSV is about 100 bytes a row (~100 MB at the default), one shape at a time. On a shared machine
# the CPU seconds are the figure to compare; wall time grows with the load.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

ROWS=${1:-1000000}
BIN=target/release/diskscope
[[ -x $BIN ]] || { echo "bench/compare-load.sh: $BIN missing; run cargo build --release --bin diskscope" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/diskscope-compare-load.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT

HEADER=experiment,host,file,file_size_bytes,operation,method,pattern,cache,direct,block_size_bytes,block_count,threads,queue_depth,rep,bytes,seconds,mib_s,ops,iops,lat_p50_us,lat_p90_us,lat_p99_us,lat_p999_us,lat_max_us,residency_before_pct,xor,error

# gen SHAPE SEED SCALE > file: ROWS rows; MiB/s around 100*SCALE with 10 % noise.
gen() {
  awk -v shape="$1" -v seed="$2" -v scale="$3" -v rows="$ROWS" -v header="$HEADER" 'BEGIN {
    srand(seed); print header
    for (i = 0; i < rows; i++) {
      ex = "e"; host = "h"; rep = i + 1
      if (shape == "distinct-hosts") host = "h" i
      else if (shape == "distinct-points") { ex = "e" int(i / 10); rep = i % 10 + 1 }
      else if (shape == "single-reps") { ex = "e" i; rep = 1 }
      mib = 100 * scale * (0.9 + 0.2 * rand()); p99 = 50 * (0.9 + 0.2 * rand())
      printf "%s,%s,/f,100,read,pread,sequential,warm,false,4096,1,1,1,%d,1,1,%.3f,1,1,1,1,%.3f,1,1,100,00000000,\n", ex, host, rep, mib, p99
    }
  }'
}

printf '%-16s %13s %8s %8s %11s %s\n' shape rows_per_side wall_s cpu_s max_rss_MiB verdicts
for shape in distinct-hosts distinct-points single-reps one-point; do
  gen "$shape" 1 1.0 > "$WORK/old.csv"
  gen "$shape" 2 0.95 > "$WORK/new.csv"
  /usr/bin/time -f '%e %U %S %M' -o "$WORK/time" "$BIN" compare "$WORK/old.csv" "$WORK/new.csv" --csv > "$WORK/out.csv"
  read -r wall user sys rss_kib < <(tail -1 "$WORK/time")
  verdicts=$(awk -F, 'NR > 1 && $11 == "mib_s" { n[$21]++ } END { for (v in n) printf "%s=%d ", v, n[v] }' "$WORK/out.csv")
  printf '%-16s %13d %8.2f %8.2f %11d %s\n' "$shape" "$ROWS" "$wall" "$(echo "$user + $sys" | bc -l)" $((rss_kib / 1024)) "$verdicts"
  rm -f -- "$WORK/old.csv" "$WORK/new.csv" "$WORK/out.csv"
done
