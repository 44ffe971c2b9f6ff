#!/usr/bin/env bash
# bench/knee.sh [TARGET]
#
# The knee search against a brute-force sweep of rates, on the same file, same setup (by default
# pread 1M random over a cached file, one thread, Poisson arrivals), each point the same seconds:
#   1. `diskscope knee FILE --p99 TARGET --json`: its answer (knee_iops, a rate measured to
#      pass), its crossing (where the p99 crosses the target, interpolated in the bracket) and
#      its wall time;
#   2. brute force: `run --rate R` at 5%, 10%, ..., 100% of the closed-loop ceiling the search
#      measured, each point as long as one of the search's, judged by the search's rule (step 5
#      of src/lab/knee/search.rs): a run that misses the target only because of one burst (its
#      `resp_p99_no_burst_us`, the p99 without the run's worst tenth, meets the target and is at
#      most half its p99 (RERUN_BURST_RATIO in search.rs), and it kept up or the burst reached
#      its end) runs once more at once, and the second run decides the rate. Its answer is
#      the highest rate that passes (brute_iops), and the highest under the first rate that
#      fails (brute_below: every rate up to it passed), and where the p99 crosses the target
#      between its answer and the next rate, by the search's rule on the p99 of the run that
#      decided each rate (brute_cross); its wall time, the second runs included. answer% and
#      cross% compare the search's answer and crossing with the brute force's answer; xcross%
#      compares crossing with crossing.
# Interleaved: search, brute force, search, brute force (REPS pairs), so a load that comes and
# goes hits both. Prints each pair and the ratios (answer and time). The issue asks the search
# to land within 10% of the brute force in at most a third of its time.
#
#   DISKSCOPE_BIN  a diskscope binary to use instead of building target/release/diskscope
#   BENCH_DIR  where the test file lives (default /var/tmp); created once, reused, never removed
#   TARGET     response p99 target (default 5ms, or the first argument: on the lab VM of
#              2026-11-25 afternoon the 1M curve was shallow at 1 ms, p99 0.8-1.2 ms from 2400
#              to 3350 IOPS, and steep at 5 ms, 2.5 ms at 60% load, 6 ms at 70%; `knee` calls
#              a shallow bracket so)
#   SECONDS_   seconds per point (default 2)
#   REPS       pairs (default 2)
#   BLOCK      bytes per read (default 1M: a cached 1 MiB copy takes ~0.1-0.3 ms, so a few-ms
#              target sits where the queue's curve is steep; with 4K reads (~2 us) any target
#              of a millisecond or more is reached only at ~99% load, where the p99 is the
#              scheduler's noise rather than a curve: see docs/openloop.md)
#   SETUP      the knee's and the runs' flags (default "--method pread --pattern random --cache warm",
#              each point warms the file first, as the VM pages out idle cache within a minute; add
#              --direct for the device itself, whose stalls on a shared VM reach 100 ms)
#   SIZE_MIB   the test file's size (default 1024)
#   KEEP       a directory to keep each search's JSON document in (search-PAIR.json: every
#              point it measured), to see why a pair missed
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
TARGET=${1:-${TARGET:-5ms}}
BLOCK=${BLOCK:-1M}
SECS=${SECONDS_:-2}
REPS=${REPS:-2}
DIR=${BENCH_DIR:-/var/tmp}
SIZE_MIB=${SIZE_MIB:-1024}
FILE=$DIR/diskscope-knee-${SIZE_MIB}M.bin
command -v jq >/dev/null || { echo "bench/knee.sh: jq is not installed" >&2; exit 1; }
if [ -n "${DISKSCOPE_BIN:-}" ]; then
  DS=$DISKSCOPE_BIN
else
  cargo build --release --quiet
  DS=target/release/diskscope
fi
[ -e "$FILE" ] || "$DS" run "$FILE" -w 1M "$SIZE_MIB" >/dev/null 2>&1
read -r -a SETUP <<<"${SETUP:---method pread --pattern random --cache warm}"
case " ${SETUP[*]} " in
  *" --direct "*) ;;
  *) "$DS" run "$FILE" -r 1M "$SIZE_MIB" --method pread >/dev/null 2>&1 ;; # warm it
esac
case "$TARGET" in
  *ms) TARGET_US=$(echo "${TARGET%ms} * 1000" | bc -l) ;;
  *us) TARGET_US=${TARGET%us} ;;
  *s) TARGET_US=$(echo "${TARGET%s} * 1000000" | bc -l) ;;
  *) echo "bench/knee.sh: give the target with its unit (2ms, 500us), got '$TARGET'" >&2; exit 2 ;;
esac
# One brute-force run at RATE: prints whether it met the target (true/false), whether it missed
# only because of one burst (true/false) and its p99, µs. The knee's rule: p99 under the target,
# and no more operations due at the end than the target's (or 10 ms's) worth of the schedule.
brute_point() { # RATE
  local ops
  ops=$(echo "$1 * $SECS" | bc -l | cut -d. -f1)
  [ "$ops" -ge 2000 ] || ops=2000
  "$DS" run "$FILE" -r "$BLOCK" "$ops" "${SETUP[@]}" --rate "$1" --arrival poisson --json \
    2>/dev/null | jq -r --argjson t "$TARGET_US" '
    (.timeline.reading.burst.at_end // false) as $at_end |
    .results[0] |
    ((.backlog_ops / .rate_iops_asked) <= ([$t / 1e6, 0.01] | max)) as $kept |
    ($kept and .resp_p99_us <= $t) as $ok |
    (.resp_p99_no_burst_us // 1e18) as $calm |
    "\($ok) \((.resp_p99_us > $t) and ($kept or $at_end) and ($calm <= $t) and (2 * $calm <= .resp_p99_us)) \(.resp_p99_us)"'
}
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); target p99 $TARGET; ${SECS}s a point; $BLOCK reads, ${SETUP[*]}"
printf '%-4s %12s %9s %10s %12s %12s %12s %10s %10s %9s %9s %10s\n' pair search_iops crossing search_s brute_iops brute_below brute_cross brute_s answer% cross% xcross% time%
KNEES=(); CROSSES=(); BESTS=(); BCROSSES=(); TIMES=(); BURSTS=0; SEARCH_BURSTS=0
for rep in $(seq 1 "$REPS"); do
  t0=$(date +%s.%N)
  doc=$("$DS" knee "$FILE" --p99 "$TARGET" --block "$BLOCK" "${SETUP[@]}" --seconds "$SECS" --tolerance 8 \
    --json 2>/dev/null || true)
  t1=$(date +%s.%N)
  search_s=$(echo "$t1 - $t0" | bc -l)
  [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && echo "$doc" >"$KEEP/search-$rep.json"; }
  knee=$(echo "$doc" | jq '.knee_iops // 0')
  again=$(echo "$doc" | jq '.points_remeasured // 0' 2>/dev/null || true)
  SEARCH_BURSTS=$((SEARCH_BURSTS + ${again:-0}))
  cross=$(echo "$doc" | jq '.crossing_iops // .knee_iops // 0')
  ceiling=$(echo "$doc" | jq '.ceiling.iops')
  best=0
  below=0 # the highest rate under the first one that failed (every rate up to it passed)
  failed=0 # a rate failed: brute_below stops there
  RATES=(); P99S=(); OKS=()
  t0=$(date +%s.%N)
  for pct in $(seq 5 5 100); do
    rate=$(echo "$ceiling * $pct / 100" | bc -l | cut -d. -f1)
    [ "$rate" -ge 1 ] || continue
    res=$(brute_point "$rate")
    read -r ok burst p99 <<<"$res"
    if [ "$burst" = true ]; then
      # A miss on one burst: one more run at once, which decides (as in the search).
      res=$(brute_point "$rate")
      read -r ok burst p99 <<<"$res"
      BURSTS=$((BURSTS + 1))
    fi
    RATES+=("$rate"); P99S+=("$p99"); OKS+=("$ok")
    if [ "$ok" = true ]; then
      best=$rate
      [ "$failed" = 1 ] || below=$rate
    else
      failed=1
    fi
  done
  t1=$(date +%s.%N)
  brute_s=$(echo "$t1 - $t0" | bc -l)
  # The brute force's own crossing, by the search's rule: between its highest passing rate and
  # the next rate (which failed), where the p99 of their deciding runs crosses the target on a
  # log scale; the next rate itself where that one failed on its backlog alone. Its steps are
  # 5% of the ceiling, 7-10% of a knee at half to two thirds of it, too coarse to judge a 10%
  # answer by.
  bcross=$best
  for i in "${!RATES[@]}"; do
    [ "${RATES[$i]}" = "$best" ] || continue
    j=$((i + 1))
    [ "$j" -lt "${#RATES[@]}" ] || break
    bcross=$(awk -v r0="${RATES[$i]}" -v r1="${RATES[$j]}" -v p0="${P99S[$i]}" -v p1="${P99S[$j]}" -v t="$TARGET_US" 'BEGIN {
      if (p1 <= t || p0 <= 0 || p1 <= p0) { print r1; exit }
      f = (log(t) - log(p0)) / (log(p1) - log(p0)); if (f < 0) f = 0; if (f > 1) f = 1
      printf "%.0f", r0 + f * (r1 - r0) }')
  done
  answer=$(echo "if ($best > 0) 100 * ($knee - $best) / $best else 0" | bc -l)
  xanswer=$(echo "if ($best > 0) 100 * ($cross - $best) / $best else 0" | bc -l)
  xx=$(echo "if ($bcross > 0) 100 * ($cross - $bcross) / $bcross else 0" | bc -l)
  time=$(echo "100 * $search_s / $brute_s" | bc -l)
  KNEES+=("$knee"); CROSSES+=("$cross"); BESTS+=("$best"); BCROSSES+=("$bcross"); TIMES+=("$time")
  printf '%-4s %12.0f %9.0f %10.1f %12.0f %12.0f %12.0f %10.1f %+9.1f%% %+8.1f%% %+8.1f%% %9.0f%%\n' "$rep" "$knee" "$cross" \
    "$search_s" "$best" "$below" "$bcross" "$brute_s" "$answer" "$xanswer" "$xx" "$time"
done
# Over all pairs: each answer's median and spread. Two brute-force runs disagree with each other
# as well: where the brute force spreads by 10% or more, no single pair can judge the 10%, and
# the medians are the fairer comparison.
summary() { # NAME VALUES...
  local name=$1; shift
  printf '%s\n' "$@" | sort -n | awk -v n="$name" '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%s median %.0f, range %.0f-%.0f (%.0f%% of the median)\n", n, m, v[1], v[NR], (m > 0 ? 100 * (v[NR] - v[1]) / m : 0)
  }'
}
if [ "$REPS" -gt 1 ]; then
  summary "search answer:     " "${KNEES[@]}"
  summary "search crossing:   " "${CROSSES[@]}"
  summary "brute force answer:" "${BESTS[@]}"
  summary "brute crossing:    " "${BCROSSES[@]}"
  summary "search time %:     " "${TIMES[@]}"
fi
echo "misses on one burst measured again: $SEARCH_BURSTS in the searches, $BURSTS in the brute force"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
