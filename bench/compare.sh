#!/usr/bin/env bash
# bench/compare.sh [--quick]
#
# How fast is `fast`? Side by side with dd, fio, plain C loops and the RAM ceiling, on a cached
# (warm) and an evicted (cold) file, plus what diskscope's per-operation measurement costs.
# Prints one table and writes it to bench/results.md with a description of the machine.
#
#   BENCH_DIR  where the test files live (default /var/tmp); reused when present
#   SIZE_MIB   test file size (default 4096; --quick: 512)
#   RUNS       runs per contender (default 7; --quick: 3)
#   SETTLE_S   seconds to wait after a cold run's eviction freed page cache, before it is timed (default 20 where
#              the VM gives free memory back to its host, virtio-balloon free page reporting, else
#              0). On such a VM memory freed a moment ago is still backed and memory free for a few
#              seconds is not, so a buffered cold read right after the last run's eviction fills
#              the page cache 3x faster than one on a machine that has been idle (lab VM: 2.2-2.5
#              against 0.7-0.8 GiB/s; back-to-back runs alternate between the two), and while the
#              host takes the freed memory back (5-15 s after a 4 GiB eviction) O_DIRECT slows
#              down (the race's direct probe: 340-1000 against 2100-2600 MiB/s). Waiting times
#              every cold run on settled memory, as a user's first read on an idle machine finds
#              it; SETTLE_S=0 measures the back-to-back case.
#   HUGEPAGES  hugetlb pages (2 MiB) to reserve for the run on top of those reserved, restored at exit (default 64 as root,
#              enough for fio's huge-page contenders: --iomem=mmaphuge, io_uring O_DIRECT QD32 1M
#              and QD8 4M; 0 leaves them out); `fast` then gets hugetlb O_DIRECT buffers too
#
# Contenders (issue 20): warm: fast, C mmap+XOR on 1 thread and on every core, C pread+XOR
# (every core, 256 KiB and 1 MiB), dd, fio psync and io_uring, and the RAM ceiling (an in-process
# XOR over anonymous memory); cold: fast, fio io_uring O_DIRECT QD32 1M (malloc and huge-page
# buffers) and QD8 4M (huge pages), fio psync, dd, C buffered pread+XOR on 2 threads with 256 KiB
# reads, on every core, on 4 threads (fast's buffered streams) and on 1 thread with 1 MiB reads. The table ends with
# fast's ratio to the best contender of each kind: warm, the best C loop (target >= 0.95); cold,
# the best of fio and the buffered C loops (target >= 1.0).
#
# Every contender runs RUNS times, interleaved (A B C A B C ..., the order rotated each round), and
# is timed as a whole process. Warm runs read the file right before they are timed (the VM evicts
# page cache idle for about a minute) and cold runs evict it first; the residency measured before
# each run is reported. Every XOR printed is checked against an independent C implementation.
# The load average before and after is written with the table: figures taken while other work
# ran on the machine are marked "loaded" and carry no speed claim.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
ROOT=$PWD

QUICK=0
case "${1:-}" in
  "") ;;
  --quick) QUICK=1 ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "bench/compare.sh: unknown argument '$1'; use --quick or no argument" >&2; exit 2 ;;
esac
BENCH_DIR=${BENCH_DIR:-/var/tmp}
if [ "$QUICK" = 1 ]; then
  SIZE_MIB=${SIZE_MIB:-512}; RUNS=${RUNS:-3}; BYTE_READS=${BYTE_READS:-1000000}
else
  SIZE_MIB=${SIZE_MIB:-4096}; RUNS=${RUNS:-7}; BYTE_READS=${BYTE_READS:-4000000}
fi
# Whether this VM gives free memory back to its host (virtio-balloon free page reporting).
FPR=$(bash bench/free-page-reporting.sh)
SETTLE_S=${SETTLE_S:-$([ "$FPR" = 1 ] && echo 20 || echo 0)}
for v in SIZE_MIB RUNS BYTE_READS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench/compare.sh: $v must be a positive integer (got '${!v}')" >&2; exit 2; }
done
[[ $SETTLE_S =~ ^[0-9]+$ ]] || { echo "bench/compare.sh: SETTLE_S must be whole seconds (got '$SETTLE_S')" >&2; exit 2; }
[ -d "$BENCH_DIR" ] || { echo "bench/compare.sh: BENCH_DIR $BENCH_DIR is not a directory; create it or point BENCH_DIR elsewhere" >&2; exit 2; }

# --- tools ---------------------------------------------------------------------------------------
missing=()
command -v fio >/dev/null || missing+=(fio)
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v cc >/dev/null || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: installing ${missing[*]} with apt" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi

echo "bench: building (cargo build --release, cc -O3 bench/xorloops.c)" >&2
cargo build --release --quiet
mkdir -p target/bench
cc -O3 -march=native -pthread -o target/bench/xorloops bench/xorloops.c
FAST=$ROOT/target/release/fast
RUN=$ROOT/target/release/run
XL=$ROOT/target/bench/xorloops
CORES=$(nproc)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/diskscope-bench.XXXXXX")
HUGEPAGES=${HUGEPAGES:-$([ "$(id -u)" = 0 ] && echo 64 || echo 0)}
[[ $HUGEPAGES =~ ^[0-9]+$ ]] || { echo "bench/compare.sh: HUGEPAGES must be a page count (got '$HUGEPAGES')" >&2; exit 2; }
OLD_HUGEPAGES=$(cat /proc/sys/vm/nr_hugepages)
cleanup() {
  rm -rf "$TMP"
  [ "$HUGEPAGES" = 0 ] || echo "$OLD_HUGEPAGES" >/proc/sys/vm/nr_hugepages
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ "$HUGEPAGES" != 0 ]; then
  echo $((OLD_HUGEPAGES + HUGEPAGES)) >/proc/sys/vm/nr_hugepages
  echo "bench: reserved $(cat /proc/sys/vm/nr_hugepages) hugetlb pages (was $OLD_HUGEPAGES)" >&2
fi

# --- test files ----------------------------------------------------------------------------------
make_file() { # PATH MIB: deterministic data from `run -w`, reused when the size matches
  local path=$1 mib=$2
  if [ "$(stat -c %s "$path" 2>/dev/null || echo 0)" != $((mib << 20)) ]; then
    echo "bench: writing $path ($mib MiB)" >&2
    "$RUN" "$path" -w 1M "$mib" --force >/dev/null 2>&1
  fi
}
FILE=$BENCH_DIR/diskscope-bench-${SIZE_MIB}M.dat
SMALL=$BENCH_DIR/diskscope-bench-64M.dat
make_file "$FILE" "$SIZE_MIB"
make_file "$SMALL" 64
SIZE_BYTES=$((SIZE_MIB << 20))

# Warm = read through an MADV_HUGEPAGE mapping: what is cached stays as it is, what the VM has
# evicted since comes back in 2 MiB folios (as cold readahead would mostly make them), so every
# warm run sees the same cache. Small folios are what `cat` makes of holes, see docs/speed.md.
warm() { "$XL" hugewarm "$1"; }

"$XL" evict "$FILE"
warm "$FILE"
EXPECTED=$("$XL" mmap "$FILE" 1 2>/dev/null)

# --- timing --------------------------------------------------------------------------------------
SECS=0
timed() { # runs "$@", stdout to $TMP/out, stderr to $TMP/err; wall seconds in SECS
  local t0=$EPOCHREALTIME t1
  if ! "$@" >"$TMP/out" 2>"$TMP/err"; then
    echo "bench: failed: $*" >&2; cat "$TMP/err" >&2; exit 1
  fi
  t1=$EPOCHREALTIME
  SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
}
check_xor() { # NAME: the XOR on stdout must be the expected one
  local got
  got=$(head -c 8 "$TMP/out")
  [ "$got" = "$EXPECTED" ] || { echo "bench: $1 printed XOR '$got', expected $EXPECTED" >&2; exit 1; }
}

label() {
  case $1 in
    fast) echo "fast (diskscope, picks its road)" ;;
    dd) echo "dd if=FILE of=/dev/null bs=1M" ;;
    fio_uring) echo "fio io_uring O_DIRECT QD32 1M (malloc buffers)" ;;
    fio_psync) echo "fio psync 1M (buffered)" ;;
    fio_huge) echo "fio io_uring O_DIRECT QD32 1M, huge-page buffers (--iomem=mmaphuge)" ;;
    fio_huge4m) echo "fio io_uring O_DIRECT QD8 4M, huge-page buffers (--iomem=mmaphuge)" ;;
    c_pread) echo "C pread+XOR, $CORES threads, 1M aligned" ;;
    c_pread256) echo "C pread+XOR, $CORES threads, 256K aligned" ;;
    c_pread2_256) echo "C buffered pread+XOR, 2 threads, 256K" ;;
    c_pread1) echo "C buffered pread+XOR, 1 thread, 1M" ;;
    c_pread4) echo "C buffered pread+XOR, 4 threads, 1M" ;;
    c_mmap) echo "C mmap+XOR, $CORES threads" ;;
    c_mmap1) echo "C mmap+XOR, 1 thread" ;;
    ram) echo "RAM ceiling: XOR of an in-memory buffer, $CORES threads" ;;
  esac
}

run_contender() { # NAME
  local fio_args=(--name=seq --filename="$FILE" --rw=read --bs=1M --readonly --invalidate=0 --output=/dev/null)
  case $1 in
    fast) timed "$FAST" -v "$FILE"; check_xor fast; cp "$TMP/err" "$TMP/fast-$SECTION.txt" ;;
    dd) timed dd if="$FILE" of=/dev/null bs=1M ;;
    fio_uring) timed fio "${fio_args[@]}" --ioengine=io_uring --direct=1 --iodepth=32 ;;
    fio_psync) timed fio "${fio_args[@]}" --ioengine=psync ;;
    fio_huge) timed fio "${fio_args[@]}" --ioengine=io_uring --direct=1 --iodepth=32 --iomem=mmaphuge ;;
    fio_huge4m) timed fio "${fio_args[@]/--bs=1M/--bs=4M}" --ioengine=io_uring --direct=1 --iodepth=8 --iomem=mmaphuge ;;
    c_pread) timed "$XL" pread "$FILE" "$CORES" 1048576; check_xor c_pread ;;
    c_pread256) timed "$XL" pread "$FILE" "$CORES" 262144; check_xor c_pread256 ;;
    c_pread2_256) timed "$XL" pread "$FILE" 2 262144; check_xor c_pread2_256 ;;
    c_pread1) timed "$XL" pread "$FILE" 1 1048576; check_xor c_pread1 ;;
    c_pread4) timed "$XL" pread "$FILE" 4 1048576; check_xor c_pread4 ;;
    c_mmap) timed "$XL" mmap "$FILE" "$CORES"; check_xor c_mmap ;;
    c_mmap1) timed "$XL" mmap "$FILE" 1; check_xor c_mmap1 ;;
    ram) timed "$XL" ram "$SIZE_BYTES" "$CORES"; SECS=$(awk '{ print $1; exit }' "$TMP/err") ;;
  esac
}

RECORDS=$TMP/records
: >"$RECORDS"
measure() { # SECTION CONTENDER...: RUNS interleaved rounds
  SECTION=$1; shift
  local names=("$@") n=$# r i k name res
  for ((r = 0; r < RUNS; r++)); do
    for ((i = 0; i < n; i++)); do
      k=$(((i + r) % n)); name=${names[$k]}
      if [ "$SECTION" = warm ]; then
        [ "$name" = ram ] || warm "$FILE"
      else
        # Only an eviction that freed page cache starts the host's reclaim: wait when the last
        # contender left some of the file cached (a direct reader leaves none).
        was=$("$XL" resident "$FILE")
        "$XL" evict "$FILE"
        if [ "$SETTLE_S" != 0 ] && awk -v r="$was" 'BEGIN { exit !(r > 0.1) }'; then sleep "$SETTLE_S"; fi
      fi
      res=$("$XL" resident "$FILE")
      run_contender "$name"
      printf '%s\t%s\t%s\t%s\n' "$SECTION" "$name" "$SECS" "$res" >>"$RECORDS"
      printf '  %s %-10s %8.4f s (%5.1f%% cached before)\n' "$SECTION" "$name" "$SECS" "$res" >&2
    done
  done
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: $SIZE_MIB MiB file $FILE, $RUNS runs per contender, interleaved; load average $LOAD_BEFORE" >&2
WARM_C=(c_mmap c_mmap1 c_pread c_pread256)
COLD_BEST=(fio_uring fio_psync c_pread c_pread2_256 c_pread1 c_pread4)
measure warm fast dd fio_psync fio_uring "${WARM_C[@]}" ram
if [ "$HUGEPAGES" != 0 ]; then
  COLD_BEST+=(fio_huge fio_huge4m)
  measure cold fast dd fio_uring fio_huge fio_huge4m fio_psync c_pread c_pread2_256 c_pread1 c_pread4
else
  measure cold fast dd fio_uring fio_psync c_pread c_pread2_256 c_pread1 c_pread4
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --- instrumentation overhead --------------------------------------------------------------------
BLOCKS_4K=$((SIZE_MIB * 256)) # the whole file: ~1M operations keep run-to-run noise under the 3% being measured
XOR_1B=$("$XL" read "$SMALL" 1 "$BYTE_READS" 2>/dev/null)
XOR_4K=$("$XL" read "$FILE" 4096 "$BLOCKS_4K" 2>/dev/null)
overhead() { # NAME: interleaved with the others; all of a group must print the same XOR
  case $1 in
    run_1b) timed "$RUN" "$SMALL" -r 1 "$BYTE_READS" ;;
    run_1b_untimed) timed env DISKSCOPE_NO_LATENCY=1 "$RUN" "$SMALL" -r 1 "$BYTE_READS" ;;
    c_read_1b) timed "$XL" read "$SMALL" 1 "$BYTE_READS" ;;
    run_4k) timed "$RUN" "$FILE" -r 4K "$BLOCKS_4K" ;;
    run_4k_untimed) timed env DISKSCOPE_NO_LATENCY=1 "$RUN" "$FILE" -r 4K "$BLOCKS_4K" ;;
    c_read_4k) timed "$XL" read "$FILE" 4096 "$BLOCKS_4K" ;;
  esac
  local want=$XOR_4K
  [[ $1 == *_1b* ]] && want=$XOR_1B
  [ "$(head -c 8 "$TMP/out")" = "$want" ] || { echo "bench: $1 printed a wrong XOR" >&2; exit 1; }
}
OH=(run_1b c_read_1b run_1b_untimed run_4k run_4k_untimed c_read_4k)
warm "$SMALL"
for ((r = 0; r < RUNS; r++)); do
  warm "$FILE"
  for ((i = 0; i < ${#OH[@]}; i++)); do
    name=${OH[$(((i + r) % ${#OH[@]}))]}
    overhead "$name"
    printf 'overhead\t%s\t%s\t100\n' "$name" "$SECS" >>"$RECORDS"
    printf '  overhead %-15s %8.4f s\n' "$name" "$SECS" >&2
  done
done
# A second opinion from hyperfine (sequential runs, no shell): the 1-byte pair.
hyperfine -N -w 2 -r "$RUNS" --export-csv "$TMP/hf.csv" \
  "$RUN $SMALL -r 1 $BYTE_READS" "$XL read $SMALL 1 $BYTE_READS" >/dev/null 2>&1 || true

# --- report --------------------------------------------------------------------------------------
stat_of() { # SECTION NAME -> "median min max maxres minres"
  awk -F'\t' -v s="$1" -v n="$2" '$1 == s && $2 == n { print $3, $4 }' "$RECORDS" | sort -n |
    awk '{ t[NR] = $1; if (NR == 1 || $2 > hi) hi = $2; if (NR == 1 || $2 < lo) lo = $2 }
         END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2;
               printf "%.4f %.4f %.4f %.1f %.1f", m, t[1], t[NR], hi, lo }'
}
gib_s() { awk -v b="$SIZE_BYTES" -v s="$1" 'BEGIN { printf "%.2f", b / s / 1073741824 }'; }

OUT=$TMP/table.md
SHORT_S=0.25
SHORT_ROWS=0
{
  if [ "$QUICK" = 1 ]; then
    echo "**--quick: a smoke test, not a measurement.** Whole processes are timed on a $SIZE_MIB MiB file, so"
    echo "start-up (fio's job parsing and threads, dd's exec) weighs on every row; run without --quick."
    echo
  fi
  echo "| cache | contender | median s | min s | max s | GiB/s (median) | fast's speed ÷ this |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for section in warm cold; do
    read -r fm _ _ _ _ <<<"$(stat_of "$section" fast)"
    names=(fast dd fio_uring fio_huge fio_huge4m fio_psync c_pread c_pread256 c_pread2_256 c_pread1 c_pread4 c_mmap c_mmap1 ram)
    for name in "${names[@]}"; do
      grep -q "^$section	$name	" "$RECORDS" || continue
      read -r m lo hi _ _ <<<"$(stat_of "$section" "$name")"
      ratio=$(awk -v a="$m" -v f="$fm" 'BEGIN { printf "%.2f×", a / f }')
      # A whole process timed for less than SHORT_S is mostly its start-up (fio parses its job
      # and starts threads, dd and sh exec): marked, and said below the table.
      if awk -v a="$m" -v f="$fm" -v t="$SHORT_S" 'BEGIN { exit !(a < t || f < t) }'; then
        ratio="$ratio †"
        SHORT_ROWS=1
      fi
      echo "| $section | $(label "$name") | $m | $lo | $hi | $(gib_s "$m") | $ratio |"
    done
  done
} >"$OUT"
if [ "$SHORT_ROWS" = 1 ]; then
  echo "† a run under $SHORT_S s: whole-process timing, so start-up dominates and the ratio says little about reading; use a bigger SIZE_MIB." >>"$OUT"
fi

# fast against the best contender of each kind (medians): the targets of issue 20.
best_of() { # SECTION NAME...: "name median" of the fastest median
  local section=$1 best="" bm="" m; shift
  for n in "$@"; do
    grep -q "^$section	$n	" "$RECORDS" || continue
    read -r m _ <<<"$(stat_of "$section" "$n")"
    if [ -z "$bm" ] || awk -v a="$m" -v b="$bm" 'BEGIN { exit !(a < b) }'; then best=$n; bm=$m; fi
  done
  echo "$best $bm"
}
ratio_line() { # SECTION TARGET WHAT NAME...
  local section=$1 target=$2 what=$3 fm best bm; shift 3
  read -r fm _ <<<"$(stat_of "$section" fast)"
  read -r best bm <<<"$(best_of "$section" "$@")"
  [ -n "$best" ] || return 0
  awk -v f="$fm" -v b="$bm" -v t="$target" -v s="$section" -v w="$what" -v l="$(label "$best")" 'BEGIN {
    r = b / f; printf "%s: fast ÷ %s (%s, %.2f GiB/s) = **%.2f×** (target ≥ %.2f: %s)\n", s, w, l, '"$SIZE_BYTES"' / b / 1073741824, r, t, (r >= t ? "met" : "not met") }'
}
LOADED=$(awk -v a="${LOAD_BEFORE%% *}" -v b="${LOAD_AFTER%% *}" 'BEGIN { print (a >= 1.5 || b >= 1.5) ? "loaded" : "quiet" }')
{
  echo
  ratio_line warm 0.95 "the best C loop" "${WARM_C[@]}"
  ratio_line cold 1.0 "the best of fio and the buffered C loops" "${COLD_BEST[@]}"
  read -r fm _ <<<"$(stat_of warm fast)"
  if grep -q "^warm	ram	" "$RECORDS"; then
    read -r rm _ <<<"$(stat_of warm ram)"
    awk -v f="$fm" -v r="$rm" 'BEGIN { printf "warm: fast ÷ the RAM ceiling = %.2f×\n", r / f }'
  fi
  echo
  [ "$FPR" = 1 ] && echo "This VM gives free memory back to its host (virtio-balloon free page reporting)."
  if [ "$SETTLE_S" != 0 ]; then
    echo "A cold run waited ${SETTLE_S} s after an eviction that freed page cache (SETTLE_S)."
  elif [ "$FPR" = 1 ]; then
    echo "Cold runs did not wait for the host to take freed page cache back (SETTLE_S=0): buffered cold figures are the back-to-back case."
  fi
  echo "Machine $LOADED: load average $LOAD_BEFORE before, $LOAD_AFTER after (1, 5, 15 min; $CORES cores)."
  [ "$LOADED" = quiet ] || echo "**Loaded: other processes ran during the measurement; these figures carry no speed claim.**"
} >>"$OUT"

cold_hi=$(awk -F'\t' '$1 == "cold" { if ($4 > m) m = $4 } END { printf "%.1f", m }' "$RECORDS")
warm_lo=$(awk -F'\t' '$1 == "warm" && $2 != "ram" { if (NR == 1 || m == "" || $4 < m) m = $4 } END { printf "%.1f", m }' "$RECORDS")
med() { read -r m _ <<<"$(stat_of overhead "$1")"; echo "$m"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }'; }
r1=$(med run_1b); c1=$(med c_read_1b); u1=$(med run_1b_untimed)
r4=$(med run_4k); u4=$(med run_4k_untimed); c4=$(med c_read_4k)
hf=$(awk -F, 'NR == 2 { a = $4 } NR == 3 { b = $4 } END { if (a && b) printf "%.4f s vs %.4f s: %+.1f%%", a, b, (a / b - 1) * 100; else print "n/a" }' "$TMP/hf.csv" 2>/dev/null || echo n/a)
{
  echo
  echo "Residency before the runs: warm >= ${warm_lo}% cached, cold <= ${cold_hi}% cached."
  echo
  echo "| instrumentation overhead (median of $RUNS, interleaved) | diskscope | baseline | cost |"
  echo "|---|---:|---:|---:|"
  echo "| \`run FILE -r 1 $BYTE_READS\` vs a plain C read(2)+XOR loop | $r1 s | $c1 s | $(pct "$r1" "$c1") |"
  echo "| same, timing off (\`DISKSCOPE_NO_LATENCY=1\`) vs the C loop | $u1 s | $c1 s | $(pct "$u1" "$c1") |"
  echo "| \`run FILE -r 4K $BLOCKS_4K\` (warm): timing + histogram on vs off | $r4 s | $u4 s | $(pct "$r4" "$u4") |"
  echo "| \`run FILE -r 4K $BLOCKS_4K\` (warm) vs a plain C 4K read(2)+XOR loop | $r4 s | $c4 s | $(pct "$r4" "$c4") |"
  echo
  echo "hyperfine (sequential, median of $RUNS): 1-byte \`run\` vs C loop: $hf."
} >>"$OUT"

echo
cat "$OUT"

# --- results.md ----------------------------------------------------------------------------------
dev=$(findmnt -no SOURCE -T "$BENCH_DIR" 2>/dev/null || echo "?")
{
  echo "# diskscope speed benchmark"
  echo
  echo "Made by \`bench/compare.sh$([ "$QUICK" = 1 ] && echo " --quick")\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
  echo "File: $SIZE_MIB MiB of pseudo-random data in $BENCH_DIR; $RUNS runs per contender, interleaved; whole-process wall time."
  echo "The RAM ceiling times only the XOR pass over an already-filled anonymous buffer."
  echo
  cat "$OUT"
  echo
  echo "What \`fast\` chose (stderr of its last run):"
  echo
  echo '```'
  cat "$TMP/fast-warm.txt" "$TMP/fast-cold.txt" 2>/dev/null
  echo '```'
  echo
  echo "## Machine"
  echo
  echo '```'
  echo "kernel:  $(uname -srm)"
  echo "cpu:     $(lscpu | sed -n 's/^Model name: *//p' | head -1), $CORES cores"
  echo "memory:  $(free -g | awk '/^Mem:/ { print $2 " GiB" }')"
  echo "storage: $dev ($(findmnt -no FSTYPE -T "$BENCH_DIR" 2>/dev/null || echo '?')), $(lsblk -dno NAME,SIZE,ROTA,MODEL "$dev" 2>/dev/null | tr -s ' ' || echo '?') (ROTA 1 = the kernel calls it rotational)"
  echo "THP:     $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
  echo "tools:   $(fio --version), $(hyperfine --version), $(dd --version | head -1), $(cc --version | head -1)"
  echo '```'
} >"$ROOT/bench/results.md"
echo
echo "bench: wrote bench/results.md" >&2
