#!/usr/bin/env bash
# diskscope against fio on the same I/O, interleaved (diskscope, fio, diskscope, fio, ...).
#
#   bench/peer.sh [--quick] [--pairs N] [--size MIB] [--dir DIR] [--out FILE] [--hugepages N]
#
# Builds the release binaries, makes a test file (in a fresh directory it removes afterwards),
# and for each workload asks `run ... --fio` for the fio command line doing the same I/O, then
# runs both PAIRS times: fio runs the printed line as printed (its --iomem included), with only
# output options added, so a row checks the line a user would copy. diskscope's numbers come from run's stderr summary, fio's from
# --output-format=json (bw_bytes, lat_ns percentiles with --lat_percentiles=1: fio's lat is
# submission + completion, as diskscope's latency is). Prints a table and writes it to
# bench/peer.md: medians, min–max, the throughput ratio (diskscope / fio), the p50 and p99
# ratios, and a one-line reason for every throughput ratio outside [0.9, 1.1].
#
# Every workload runs twice, once per buffer memory (issue 20): `--buffers plain` (4 KiB pages;
# the printed line says --iomem=mmap) and `--buffers hugetlb` (2 MiB hugetlb pages; the line says
# --iomem=mmaphuge). Workloads: warm 4K read(2), warm 1M pread, cold 1M O_DIRECT io_uring QD32,
# cold random 4K QD1 and QD32 (O_DIRECT io_uring), a 1M write + fsync; and warm mmap 1M once (no
# buffer). The note of a row outside [0.9, 1.1] is computed from that row's own numbers. The
# warm 4K rows also time a bare C read(2) loop on the same file (`xorloops read ... noxor`), so
# their note says how much of a gap is fio's own work and how much plain code's read costs.
#
# The cold 1M O_DIRECT rows with plain buffers also sample each tool's buffers while it runs
# (`xorloops pieces PID`, from /proc/PID/pagemap, as root): how many physically contiguous pieces
# each 1 MiB buffer is, and how many are in more than 254 (the disk splits a read into such a
# buffer in two). That layout is the page allocator's luck and set the row's 2x run-to-run spread
# in both tools on the lab VM; the row's note gives both tools' medians.
#
# diskscope runs every row with `--checksum none`: fio never reads back the data it moves, and
# diskscope's default XOR of every byte costs ~20 µs per MiB from the page cache (a fifth of a
# warm 1M pread), so the rows compare the I/O alone, as the tools' own work (the fio line is
# printed for that same run, so it carries no checksum note). The mmap row keeps the XOR: fio's
# mmap engine copies every byte of the mapping into its buffer, so both tools read every byte.
#
# --quick: 64 MiB file, 1 pair, small op counts (a smoke test, numbers mean little); prints the
#   table without writing bench/peer.md unless --out is given.
# --hugepages N: hugetlb pages to reserve on top of those already reserved (/proc/sys/vm/nr_hugepages) for the huge-page rows,
#   restored at exit; default 64 (the QD32 1M rows need 16 per tool). 0 leaves the huge-page rows
#   out.
# Default: 1 GiB file, 5 pairs; about 4 minutes on the lab VM, plus SETTLE_S (default 20 s on a
#   VM with free page reporting) after every drop that freed page cache (the first cold run after
#   the warm rows) and before every write run.
# Needs root for cold runs (drop_caches before each run of either tool) and for the hugetlb
# reservation; installs fio with apt-get when it is missing.
set -euo pipefail

cd "$(dirname "$0")/.."
QUICK=0
PAIRS=5
SIZE_MIB=1024
BASE_DIR=/var/tmp
OUT=
HUGEPAGES=64
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1; PAIRS=1; SIZE_MIB=64 ;;
        --pairs) PAIRS="$2"; shift ;;
        --size) SIZE_MIB="$2"; shift ;;
        --dir) BASE_DIR="$2"; shift ;;
        --out) OUT="$2"; shift ;;
        --hugepages) HUGEPAGES="$2"; shift ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) echo "peer.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$PAIRS" in ''|*[!0-9]*|0) echo "peer.sh: --pairs: give a positive number" >&2; exit 2 ;; esac
[ -z "$OUT" ] && [ "$QUICK" = 0 ] && OUT=bench/peer.md
case "$HUGEPAGES" in ''|*[!0-9]*) echo "peer.sh: --hugepages: give a page count" >&2; exit 2 ;; esac
case "$SIZE_MIB" in ''|*[!0-9]*|0) echo "peer.sh: --size: give MiB as a positive number" >&2; exit 2 ;; esac

if ! command -v fio >/dev/null; then
    echo "installing fio (apt-get install -y fio)" >&2
    apt-get install -y fio >/dev/null
fi
[ "$(id -u)" = 0 ] || { echo "peer.sh: cold runs need root (drop_caches)" >&2; exit 2; }

cargo build --release --quiet
RUN=$PWD/target/release/run
# xorloops' `pieces` reads the physical layout of a running tool's O_DIRECT buffers.
mkdir -p target/bench
cc -O2 -pthread -o target/bench/xorloops bench/xorloops.c
XL=$PWD/target/bench/xorloops

WORK=$(mktemp -d "$BASE_DIR/diskscope-peer.XXXXXX")
RAW=$WORK/raw.tsv
ORIG_HUGEPAGES=$(cat /proc/sys/vm/nr_hugepages)
cleanup() {
    # Only what this script made: its two files and its directory; and the setting it changed.
    rm -f "$WORK/data" "$WORK/written" "$RAW" "$WORK/stderr" "$WORK/stdout"
    rmdir "$WORK" 2>/dev/null || true
    if [ "$HUGEPAGES" -gt 0 ]; then echo "$ORIG_HUGEPAGES" >/proc/sys/vm/nr_hugepages; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

DATA=$WORK/data
if [ "$HUGEPAGES" -gt 0 ]; then
    echo $((ORIG_HUGEPAGES + HUGEPAGES)) >/proc/sys/vm/nr_hugepages
    echo "reserved $(awk '/HugePages_Free/ {print $2}' /proc/meminfo) hugetlb pages (restored to $ORIG_HUGEPAGES at exit)" >&2
fi
FREE_MIB=$(df -Pm "$WORK" | awk 'NR==2 {print $4}')
if [ "$FREE_MIB" -lt $((SIZE_MIB * 3)) ]; then
    echo "peer.sh: $WORK has $FREE_MIB MiB free; need $((SIZE_MIB * 3))" >&2
    exit 1
fi
"$RUN" "$DATA" -w 1M "$SIZE_MIB" --fsync >/dev/null 2>&1

# A VM that gives free memory back to its host (virtio-balloon free page reporting: device id 5,
# feature bit 5) slows its I/O while the host takes a large free back: 5-15 s after a 4 GiB
# eviction `fast`'s O_DIRECT probe read 340-1000 MiB/s against 2100-2600 once settled
# (docs/speed.md). So a drop that freed more than 64 MiB of page cache is followed by SETTLE_S
# seconds (default 20 on such a VM, else 0) before the run it prepares.
FPR=$(bash bench/free-page-reporting.sh)
SETTLE_S=${SETTLE_S:-$([ "$FPR" = 1 ] && echo 20 || echo 0)}
case "$SETTLE_S" in ''|*[!0-9]*) echo "peer.sh: SETTLE_S must be whole seconds (got '$SETTLE_S')" >&2; exit 2 ;; esac
cached_kib() { awk '/^Cached:/ { print $2 }' /proc/meminfo; }
# A write run settles whatever the drop freed: the run before it freed its memory just before
# (the written file's page cache at `rm`, diskscope's pregenerated write data at its exit), and
# on such a VM memory freed a moment ago is still backed, so the next writer's page cache fills
# at ~1.4 GiB/s where settled memory fills at ~0.45 (2026-11-27: a write right after a
# diskscope write ran in the fast phase 5 times of 5, right after a fio write in the slow phase
# 4 of 4; diskscope frees a 1 GiB data buffer at its exit, fio a 1 MiB one, so peer.sh's rows
# read 0.24x). Settled, both tools write in the slow phase every time.
drop() { # [write]
    local before
    before=$(cached_kib)
    sync; echo 3 >/proc/sys/vm/drop_caches
    if [ "$SETTLE_S" != 0 ] && { [ "${1:-}" = write ] || [ $((before - $(cached_kib))) -gt 65536 ]; }; then
        sleep "$SETTLE_S"
    fi
}
warm() { cat "$DATA" >/dev/null; }

if [ "$QUICK" = 1 ]; then R4K1=2000; R4K32=10000; else R4K1=20000; R4K32=100000; fi
BLOCKS_4K=$((SIZE_MIB * 256))

BACKINGS=(plain)
if [ "$HUGEPAGES" -gt 0 ]; then
    if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -ge 16 ]; then
        BACKINGS+=(hugetlb)
    else
        echo "peer.sh: fewer than 16 free hugetlb pages after reserving $HUGEPAGES: huge-page rows left out" >&2
    fi
fi

# name | cache prep (warm/cold/write) | run arguments after FILE (each with every backing)
BASE_WORKLOADS=(
    "warm 4K read|warm|-r 4K $BLOCKS_4K --method read --cache warm"
    "warm 1M pread|warm|-r 1M $SIZE_MIB --method pread --cache warm"
    "cold 1M O_DIRECT io_uring QD32|cold|-r 1M $SIZE_MIB --method io_uring --direct --queue-depth 32 --cache cold"
    "cold random 4K QD1|cold|-r 4K $R4K1 --method io_uring --direct --queue-depth 1 --pattern random --cache cold"
    "cold random 4K QD32|cold|-r 4K $R4K32 --method io_uring --direct --queue-depth 32 --pattern random --cache cold"
    "write ${SIZE_MIB} MiB 1M + fsync|write|-w 1M $SIZE_MIB --method pread --fsync --force"
)
WORKLOADS=()
for w in "${BASE_WORKLOADS[@]}"; do
    IFS='|' read -r name prep args <<<"$w"
    for b in "${BACKINGS[@]}"; do
        WORKLOADS+=("$name, $b buffers|$prep|$args --buffers $b")
    done
done
# The I/O alone on diskscope's side too: fio never touches the data (see the header).
for i in "${!WORKLOADS[@]}"; do WORKLOADS[i]="${WORKLOADS[i]} --checksum none"; done
# Except the mapping: fio's mmap engine copies every byte into its buffer, so diskscope reads
# every byte too (its XOR) rather than one byte a page.
WORKLOADS+=("warm mmap 1M (no buffer)|warm|-r 1M $SIZE_MIB --method mmap --cache warm")

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$RAW"
for w in "${WORKLOADS[@]}"; do
    IFS='|' read -r name prep args <<<"$w"
    target=$DATA
    [ "$prep" = write ] && target=$WORK/written
    # The fio line for this workload, from diskscope itself, run as printed.
    # shellcheck disable=SC2086
    fio_cmd=$("$RUN" "$target" $args --fio 2>&1 >/dev/null | grep '^fio ')
    rm -f "$WORK/written"
    echo "== $name" >&2
    echo "   $fio_cmd" >&2
    # With plain 4 KiB-page buffers a cold 1M O_DIRECT read's speed depends on how many
    # physically contiguous pieces each 1 MiB buffer is (more than the disk's 254 splits the
    # request), which is the page allocator's luck and differs between the tools (each tool's
    # start-up allocates differently): sampled for both while they run (docs/accuracy.md).
    SAMPLE=0
    case "$name" in "cold 1M O_DIRECT"*"plain buffers") SAMPLE=1 ;; esac
    # Runs "$@" with stderr to $WORK/stderr and prints its buffers' layout ("MEAN SPLIT SLOTS",
    # or "- - -"), sampled once they exist: fio forks its job, so every process on the file.
    sampled() {
        "$@" 2>"$WORK/stderr" >"$WORK/stdout" &
        local pid=$! got="- - -" p
        while kill -0 "$pid" 2>/dev/null; do
            for p in $(pgrep -f -- "$target"); do
                if got=$("$XL" pieces "$p" 2>/dev/null); then break 2; fi
                got="- - -"
            done
            sleep 0.02
        done
        wait "$pid" || true
        echo "$got"
    }
    one_diskscope() {
        case "$prep" in cold) drop ;; write) drop write ;; warm) warm ;; esac
        local layout="- - -" line
        if [ "$SAMPLE" = 1 ]; then
            # shellcheck disable=SC2086
            layout=$(sampled "$RUN" "$target" $args)
            line=$(grep -E '^(read|wrote) ' "$WORK/stderr" || true)
        else
            # shellcheck disable=SC2086
            line=$("$RUN" "$target" $args 2>&1 >/dev/null | grep -E '^(read|wrote) ')
        fi
        rm -f "$WORK/written"
        echo -e "$name\tdiskscope\t$i\t$layout\t$line" >>"$RAW"
    }
    one_fio() {
        case "$prep" in cold) drop ;; write) drop write ;; warm) warm ;; esac
        local layout="- - -" json
        if [ "$SAMPLE" = 1 ]; then
            layout=$(sampled sh -c "$fio_cmd --lat_percentiles=1 --output-format=json")
            json=$(tr -d '\n' <"$WORK/stdout")
        else
            json=$(sh -c "$fio_cmd --lat_percentiles=1 --output-format=json" 2>/dev/null | tr -d '\n')
        fi
        rm -f "$WORK/written"
        echo -e "$name\tfio\t$i\t$layout\t$json" >>"$RAW"
    }
    # The order turns each pair (diskscope first, then fio first, ...): on the lab VM a fresh
    # 1 GiB file's buffered writes are bimodal (~0.45 or ~7-10 GiB/s, for fio alone too) with a
    # phase that follows the create/remove cycles, so a fixed order gave one tool the slow phase
    # every time.
    # The warm 4K rows also time a bare C read(2) loop (no XOR) on the same file: whether a
    # 4 KiB read costs fio more than plain code, or costs diskscope less, is the row's note.
    one_c() {
        warm
        local line
        line=$("$XL" read "$DATA" 4096 "$BLOCKS_4K" noxor 2>&1 >/dev/null | tail -1)
        echo -e "$name\tc\t$i\t- - -\t$line" >>"$RAW"
    }
    for i in $(seq "$PAIRS"); do
        if [ $((i % 2)) = 1 ]; then one_diskscope; one_fio; else one_fio; one_diskscope; fi
        case "$name" in "warm 4K read"*) one_c ;; esac
    done
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
MODE="full ($PAIRS pairs, ${SIZE_MIB} MiB file), buffers: ${BACKINGS[*]}; load average $LOAD_BEFORE before, $LOAD_AFTER after"
awk -v a="${LOAD_BEFORE%% *}" -v b="${LOAD_AFTER%% *}" 'BEGIN { exit !(a >= 1.5 || b >= 1.5) }' &&
    MODE="$MODE (**loaded**: other processes ran; the ratios carry no accuracy claim)"
[ "$QUICK" = 1 ] && MODE="quick smoke test ($PAIRS pair, ${SIZE_MIB} MiB file, buffers: ${BACKINGS[*]}; load average $LOAD_BEFORE: not a measurement)"
python3 - "$RAW" "$OUT" "$MODE" "$(uname -r)" "$(fio --version)" "$HUGEPAGES" "$QUICK" <<'PY'
import json, re, statistics, sys

raw, out, mode, kernel, fio_version, hugepages, quick = sys.argv[1:8]
rows = {}
order = []
layouts = {}  # (name, tool) -> [(mean pieces per 1 MiB slot, split slots, slots)]
for line in open(raw):
    name, tool, _, layout, payload = line.rstrip("\n").split("\t", 4)
    if name not in rows:
        rows[name] = {"diskscope": [], "fio": [], "c": []}
        order.append(name)
    if not layout.startswith("-"):
        mean, split, slots = layout.split()
        layouts.setdefault((name, tool), []).append((float(mean), int(split), int(slots)))
    if tool == "c":
        # xorloops read: "SECONDS s NS ns/call"; the row's bytes are those of diskscope's run.
        m = re.match(r"([0-9.]+) s ([0-9.]+) ns/call", payload)
        if m:
            rows[name]["c"].append(float(m.group(2)) / 1000)
        continue
    if tool == "diskscope":
        m = re.search(r"([0-9.]+) MiB/s.*p50 ([0-9.]+) µs, p99 ([0-9.]+) µs", payload)
        if m:
            rows[name]["diskscope"].append(tuple(float(x) for x in m.groups()))
    else:
        try:
            job = json.loads(payload[payload.index("{"):])["jobs"][0]
        except (ValueError, KeyError, IndexError):
            continue
        side = job["write"] if job["write"]["io_bytes"] > 0 else job["read"]
        pct = side["lat_ns"].get("percentile", {})
        p50 = pct.get("50.000000", 0) / 1000
        p99 = pct.get("99.000000", 0) / 1000
        rows[name]["fio"].append((side["bw_bytes"] / 2**20, p50, p99))

# Possible reasons for a row outside 0.9-1.1, each shown only when the row's own numbers fit it
# (a fixed note would contradict a run that measured otherwise), and stating those numbers.
# (prefix, fits(ratio, p50 ratio, d, f), note(ratio, p50 ratio, d, f))
def spread(xs):
    return max(xs) / min(xs) if min(xs) > 0 else float("inf")

def med(xs):
    return statistics.median(xs)

# The row being noted, for the C loop's times (set before each reason is asked).
current = {"c": []}

def c_loop_words(fio_us, ds_us):
    """What a bare C read(2) loop on the same file says of a warm 4K row's gap, or ""."""
    if not current["c"]:
        return ""
    c = med(current["c"])
    words = f"; a bare C read(2) loop takes {c:.2f} us, so fio's own work is {fio_us - c:.2f} us a read"
    if ds_us < 0.95 * c:
        words += f" and diskscope's read costs {c - ds_us:.2f} us less than plain code's on this machine"
    return words

REASONS = [
    ("warm mmap 1M", lambda r, l, d, f: r > 1.1,
     lambda r, l, d, f: f"diskscope {med(d):.0f} MiB/s vs fio {med(f):.0f} ({r:.2f}x): fio's mmap engine "
     "copies each block into a buffer, diskscope XORs the mapping in place"),
    ("warm 4K read", lambda r, l, d, f: r > 1.1,
     lambda r, l, d, f: f"fio takes {4096 / med(f) / 1.048576 - 4096 / med(d) / 1.048576:.2f} us more per "
     f"4 KiB read ({4096 / med(f) / 1.048576:.2f} against {4096 / med(d) / 1.048576:.2f} us)"
     + c_loop_words(4096 / med(f) / 1.048576, 4096 / med(d) / 1.048576)
     + "; no fio option tried brings it within 10% (docs/accuracy.md)"),
    ("write ", lambda r, l, d, f: max(spread(d), spread(f)) > 2,
     lambda r, l, d, f: f"bimodal buffered writes (runs span {min(d):.0f}-{max(d):.0f} MiB/s "
     f"for diskscope, {min(f):.0f}-{max(f):.0f} for fio): the ratio says which phase each tool's runs "
     "hit (docs/accuracy.md)"),
]

def layout_of(name, tool):
    """`mean 246 pieces, 24 of 32 split` over a tool's sampled runs of a row, or None."""
    got = layouts.get((name, tool))
    if not got:
        return None
    split = med([s / n for _, s, n in got])
    return med([m for m, _, _ in got]), split, f"{med([m for m, _, _ in got]):.0f} pieces a slot, {100 * split:.0f}% of slots split"

def layout_note(name):
    d, f = layout_of(name, "diskscope"), layout_of(name, "fio")
    if not d or not f:
        return None
    return (f"buffer layout (medians of the runs): diskscope {d[2]}, fio {f[2]}; a read into a 1 MiB "
            "slot of more than 254 pieces is two requests, and where the pages lie is the page "
            "allocator's luck (docs/accuracy.md)"), abs(d[1] - f[1]) >= 0.25 or max(d[0], f[0]) > 2 * min(d[0], f[0])

def reason(name, ratio, p50_ratio, d, f):
    if quick == "1":
        return (f"quick smoke test: one pair of short runs (diskscope {med(d):.0f}, fio {med(f):.0f} MiB/s), "
                "start-up costs dominate; not a measurement")
    current["c"] = rows[name]["c"]
    for key, fits, why in REASONS:
        if name.startswith(key) and fits(ratio, p50_ratio, d, f):
            return why(ratio, p50_ratio, d, f)
    layout = layout_note(name)
    if layout and layout[1]:
        return f"the buffers differ: {layout[0]}"
    if min(d) <= max(f) and min(f) <= max(d):
        return (f"within noise: the ranges overlap (diskscope {min(d):.0f}-{max(d):.0f}, "
                f"fio {min(f):.0f}-{max(f):.0f} MiB/s)")
    return (f"not explained: diskscope {min(d):.0f}-{max(d):.0f} vs fio {min(f):.0f}-{max(f):.0f} MiB/s "
            "with no overlap; see docs/accuracy.md")

def fmt_range(xs):
    return f"{statistics.median(xs):.0f} ({min(xs):.0f}–{max(xs):.0f})"

lines = [
    "# diskscope vs fio, same I/O, interleaved",
    "",
    f"Mode: {mode}. Kernel {kernel}, {fio_version}. Throughput in MiB/s, median (min–max);",
    "ratios are diskscope / fio of the medians. Latency: diskscope per-operation latency vs fio's",
    "`lat` (submission + completion) percentiles. diskscope runs with `--checksum none` (fio never",
    "reads back the data it moves; the rows compare the I/O alone). Generated by `bench/peer.sh`.",
    "",
    "| workload | diskscope MiB/s | fio MiB/s | throughput ratio | p50 ratio | p99 ratio | note |",
    "|---|---|---|---|---|---|---|",
]
for name in order:
    d = rows[name]["diskscope"]
    f = rows[name]["fio"]
    if not d or not f:
        lines.append(f"| {name} | {len(d)} runs | {len(f)} runs | – | – | – | a tool failed; see the raw output |")
        continue
    dt, ft = [x[0] for x in d], [x[0] for x in f]
    ratio = statistics.median(dt) / statistics.median(ft)
    def lat_value(i):
        a, b = statistics.median(x[i] for x in d), statistics.median(x[i] for x in f)
        return a / b if b > 0 else None
    def lat_ratio(i):
        v = lat_value(i)
        return f"{v:.2f}" if v is not None else "–"
    note = "" if 0.9 <= ratio <= 1.1 else reason(name, ratio, lat_value(1), dt, ft)
    if not note and layout_note(name):
        note = layout_note(name)[0]
    lines.append(
        f"| {name} | {fmt_range(dt)} | {fmt_range(ft)} | {ratio:.2f} | {lat_ratio(1)} | {lat_ratio(2)} | {note} |"
    )
text = "\n".join(lines) + "\n"
print(text)
if out:
    open(out, "w").write(text)
PY
if [ -n "$OUT" ]; then echo "wrote $OUT" >&2; fi
