#!/usr/bin/env bash
# Differential check of two diskscope binaries: runs the same fixed set of commands with OLD_BIN
# and NEW_BIN and prints every difference in what a user or a script reads back:
#   - every --help text (the whole subcommand tree), the man page and the bash completions;
#   - a run's JSON key tree (keys and value types, not values) and the headers of its timeline
#     and --log-ops CSVs;
#   - the XOR of every method (read, pread, mmap, io_uring, buffered; buffered and direct where
#     they apply; sequential and random; 1 and 3 threads) on one test file, the XOR of writes
#     with every method and the bytes they wrote, and the XOR of every road of `fast`;
#   - every lab command's JSON key tree (run2, knee, syscalls, locality) and the header of the
#     CSV it exports (knee, syscalls, run);
#   - every built-in preset's plan (`--batch NAME --dry-run`: every point's setup);
#   - a small sweep's list of output files, the header of every CSV it writes and its JSON
#     document's key tree;
#   - the exit code and the first line of stderr of a few refused command lines.
# Timings, dates, host names and the git revision differ between runs by nature and are not
# compared (the JSON trees keep keys and types only).
#
#   bench/differential.sh OLD_BIN NEW_BIN        exit 0: no difference; 1: differences printed
#
# Both binaries are run under the name `diskscope` (a symlink each), so help texts that show the
# program name compare equal. Everything is made in a fresh temporary directory, removed at exit.
set -u -o pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 OLD_BIN NEW_BIN" >&2
    exit 2
fi
for b in "$1" "$2"; do
    if [ ! -x "$b" ]; then
        echo "$0: $b is not an executable file" >&2
        exit 2
    fi
done
for tool in jq python3 diff; do
    command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/diskscope-diff.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old/bin" "$work/new/bin" "$work/data"
ln -s "$(realpath "$1")" "$work/old/bin/diskscope"
ln -s "$(realpath "$2")" "$work/new/bin/diskscope"

# The shared test file: 8 MiB + 1234 bytes of fixed pseudo-random content (a tail that is not a
# whole block).
python3 - "$work/data/test.bin" <<'EOF'
import random, sys
r = random.Random(18)
open(sys.argv[1], "wb").write(r.randbytes(8 * 1024 * 1024 + 1234))
EOF

# The JSON document on stdin as a sorted list of key paths with value types (arrays collapsed).
keytree() {
    # A figure that can be unknown (a timeline interval with no CPU ticks has null CPU shares) is
    # "number|null" whichever it was in this run, so two runs of one binary agree.
    jq -r '[paths(true) as $p | {p: ($p | map(if type == "number" then "[]" else . end) | join(".")), t: (getpath($p) | type | if . == "number" or . == "null" then "number|null" else . end)}] | unique | .[] | "\(.p): \(.t)"' 2>&1
}

# The help texts of the subcommand tree under "$@" (recursively through "Commands:").
helps() {
    local bin=$1
    shift
    echo "### diskscope $* --help"
    "$bin" "$@" --help 2>&1
    echo "exit $?"
    local subs
    subs=$("$bin" "$@" --help 2>/dev/null | awk '/^Commands:/{c=1; next} c && /^  [a-z]/{print $1} c && /^$/{c=0}')
    for s in $subs; do
        [ "$s" = help ] && continue
        helps "$bin" "$@" "$s"
    done
}

# Everything compared, for the binary named in $1 (old or new), written to stdout.
collect() {
    local side=$1
    local bin="$work/$side/bin/diskscope"
    local out="$work/$side/out"
    mkdir -p "$out"
    cd "$work/$side" || exit 2

    echo "## help"
    helps "$bin"
    echo "## man"
    "$bin" man 2>&1 | grep -v '^\.TH'
    echo "## completions"
    for sh in bash zsh fish; do
        echo "### $sh"
        "$bin" completions "$sh" 2>&1
    done

    echo "## XOR of reads, every method"
    local f="$work/data/test.bin"
    for m in read pread mmap io_uring buffered; do
        for pat in sequential random; do
            for t in 1 3; do
                printf '%s %s t%s: ' "$m" "$pat" "$t"
                "$bin" run -r "$f" 4K 2000 --method "$m" --pattern "$pat" -t "$t" 2>/dev/null
                echo " exit $?"
            done
        done
        printf '%s 1M whole file: ' "$m"
        "$bin" run -r "$f" 1M 100 --method "$m" 2>/dev/null
        echo " exit $?"
    done
    for m in read pread io_uring; do
        printf '%s direct: ' "$m"
        "$bin" run -r "$f" 4K 2000 --method "$m" --direct 2>/dev/null
        echo " exit $? (O_DIRECT may be refused by the filesystem; then both sides say so)"
    done

    echo "## XOR of writes, every method, and the bytes written"
    for m in read pread mmap io_uring buffered; do
        local w="$out/w-$m.bin"
        printf '%s write: ' "$m"
        "$bin" run -w "$w" 64K 37 --method "$m" -t 2 2>/dev/null
        echo " exit $?"
        sha256sum <"$w" 2>&1 | cut -c1-64
        rm -f "$w"
    done

    echo "## fast, every road"
    for road in auto mmap pread direct buffered hybrid; do
        printf '%s: ' "$road"
        "$bin" fast --road "$road" "$f" 2>/dev/null
        echo " exit $?"
    done

    echo "## a run's JSON key tree"
    "$bin" run -r "$f" 64K 50 --method pread --json 2>/dev/null | keytree
    echo "## a write's JSON key tree"
    "$bin" run -w "$out/j.bin" 64K 50 --method io_uring --json --fsync 2>/dev/null | keytree
    rm -f "$out/j.bin"
    echo "## fast's JSON key tree"
    "$bin" fast --road pread "$f" --json 2>/dev/null | keytree
    echo "## a run's timeline and --log-ops CSV headers"
    "$bin" run -r "$f" 64K 50 --timeline "$out/tl.csv" --log-ops "$out/ops.csv" >/dev/null 2>&1
    echo "exit $?"
    head -1 "$out/tl.csv" 2>&1
    head -1 "$out/ops.csv" 2>&1
    rm -f "$out/tl.csv" "$out/ops.csv"

    echo "## every lab command: JSON key tree, and an exported CSV's header"
    echo "### run2"
    "$bin" run2 "$f" 4K --target 0.01 --json 2>/dev/null | keytree
    echo "### knee"
    "$bin" knee "$f" --p99 50ms --seconds 0.1 --min-ops 100 --max-points 2 --json 2>/dev/null | keytree
    "$bin" knee "$f" --p99 50ms --seconds 0.1 --min-ops 100 --max-points 2 \
        --export-csv "$out/knee.csv" >/dev/null 2>&1
    echo "exit $?"
    head -1 "$out/knee.csv" 2>&1
    echo "### syscalls"
    "$bin" syscalls --seconds 0.01 --json 2>/dev/null | keytree
    "$bin" syscalls --seconds 0.01 --export-csv "$out/calls.csv" >/dev/null 2>&1
    echo "exit $?"
    head -1 "$out/calls.csv" 2>&1
    echo "### locality"
    "$bin" locality --dir "$out/loc" --files 50 --file-size 4K --reps 1 --json 2>/dev/null | keytree
    "$bin" locality --dir "$out/loc" --clean >/dev/null 2>&1
    echo "### run --export-csv"
    "$bin" run -r "$f" 64K 50 --export-csv "$out/run.csv" >/dev/null 2>&1
    echo "exit $?"
    head -1 "$out/run.csv" 2>&1

    echo "## every built-in preset's plan (names from the new binary; a side without one says so)"
    for p in $PRESETS; do
        echo "### preset $p"
        "$bin" --batch "$p" --out "$out/preset-$p" --dry-run 2>&1 | grep -iv 'estimat\|took\|elapsed'
        echo "exit $?"
    done

    echo "## a small sweep: files, CSV headers, JSON key tree"
    cat >"$out/sweep.toml" <<'EOF'
name = "differential"
[file]
create = "4M"
[defaults]
reps = 2
seconds = 0.05
[[experiment]]
name = "methods"
kind = "throughput"
method = ["read", "pread", "mmap", "io_uring", "buffered"]
block_size = ["4K", "1M"]
queue_depth = [1, 4]
direct = [false, true]
[[experiment]]
name = "writes"
kind = "throughput"
operation = "write"
method = ["read", "pread", "mmap", "io_uring", "buffered"]
block_size = "64K"
[[experiment]]
name = "calls"
kind = "syscalls"
seconds = 0.01
reps = 1
EOF
    "$bin" --batch "$out/sweep.toml" --out "$out/sweep" --dry-run 2>&1 | grep -iv 'estimat\|took\|elapsed'
    echo "dry-run exit $?"
    "$bin" --batch "$out/sweep.toml" --out "$out/sweep" --json 2>"$out/sweep.err" | keytree
    echo "batch exit $?"
    (cd "$out/sweep" 2>/dev/null && find . -type f | sort)
    for c in $(cd "$out/sweep" 2>/dev/null && find . -name '*.csv' | sort); do
        echo "### $c"
        head -1 "$out/sweep/$c"
    done

    echo "## refusals: exit code and message"
    refuse() {
        echo "### $*"
        "$bin" "$@" >/dev/null 2>"$out/err"
        echo "exit $?"
        head -1 "$out/err"
    }
    refuse run -r "$f" 4K 10 --method mmap --direct
    refuse run -r "$f" 4K 10 --method buffered --direct
    refuse run -r "$f" 4K 10 --method pread --queue-depth 0
    refuse run -r "$f" 4K 10 --method nope
    refuse run -w "$f" 4K 10
    refuse run -r "$f" 1M 1000000 --method io_uring --queue-depth 64 -t 4 --max-memory 1M
    refuse run -r "$f" 1M 1000000 --method mmap -t 4 --max-memory 1M
    refuse run -r "$f" 1M 1000000 --method read -t 4 --max-memory 1M
    refuse run -r "$f" 1G 1000000 --method buffered -t 64 --max-memory 1M
    refuse run -r "$out/missing" 4K 10
}

# The built-in presets, by the new binary's list.
PRESETS=$("$2" presets 2>/dev/null | awk 'NF > 1 && $1 != "run" {print $1}')

# Paths under each side's own directory compare equal, and so does the git revision in the
# version (`0.1.0 (12e9519e26de)`).
rev='s/ \([0-9a-f]{12}\)$/ (REV)/'
(collect old) 2>&1 | sed -E -e "s|$work/old/|SIDE/|g" -e "$rev" >"$work/old.txt"
(collect new) 2>&1 | sed -E -e "s|$work/new/|SIDE/|g" -e "$rev" >"$work/new.txt"
echo "compared $(wc -l <"$work/old.txt") lines (old) with $(wc -l <"$work/new.txt") lines (new)"
[ -n "${KEEP:-}" ] && cp "$work/old.txt" "$work/new.txt" "$KEEP"/
if diff -u --label old --label new "$work/old.txt" "$work/new.txt"; then
    echo "no difference"
    exit 0
fi
exit 1
