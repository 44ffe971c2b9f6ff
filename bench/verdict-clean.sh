#!/usr/bin/env bash
# Issue 23: false alarms are as bad as misses. Runs the clean runs N times in a row (default 20)
# and counts every verdict that is not `ok` with no reason:
#   warm pread 1M           run F -r 1M 512 --method pread --cache warm
#   cold O_DIRECT 1M        run F -r 1M 256 --method pread --direct
#   io_uring 4K QD32 cold   run F -r 4K 16384 --method io_uring --queue-depth 32 --pattern random --direct
# (O_DIRECT, as fio's random 4K QD32 runs: the device's own random rate, docs/explain.md)
# on a 512 MiB file in DIR (default: $TMPDIR or /tmp; it must be on a local disk), created with
# `run -w --fsync` and removed at the end (also on Ctrl-C). The file is small enough for a warm
# read to stay cached on a VM whose DAMON pages out up to 128 MiB/s of idle memory (a 1 GiB file
# was paged out between warming and reading: cache_evicted, rightly).
#
# usage: bench/verdict-clean.sh [N] [DIR]
#   RUN=path/to/run   the binary (default: target/release/run, built if missing)
#   No limits profile is used (XDG_CACHE_HOME is a fresh empty directory), so above_ceiling is
#   not exercised here: its false-alarm rate is the model's (docs/explain.md, Validation).
# Exit status: 0 when every run was ok, 1 otherwise. One line per run on stdout.
set -euo pipefail

n=${1:-20}
dir=${2:-${TMPDIR:-/tmp}}
here=$(cd "$(dirname "$0")/.." && pwd)
run=${RUN:-$here/target/release/run}
if [[ ! -x $run ]]; then
    (cd "$here" && cargo build --release --bin run >&2)
fi

work=$(mktemp -d "$dir/verdict-clean.XXXXXX")
cache=$(mktemp -d)
cleanup() { rm -rf -- "$work" "$cache"; }
trap cleanup EXIT INT TERM

f=$work/data
"$run" "$f" -w 1M 512 --fsync >/dev/null 2>&1

declare -A cmd=(
    [warm-pread-1M]="-r 1M 512 --method pread --cache warm"
    [cold-direct-1M]="-r 1M 256 --method pread --direct"
    [uring-4K-qd32-cold]="-r 4K 16384 --method io_uring --queue-depth 32 --pattern random --direct"
)
names=(warm-pread-1M cold-direct-1M uring-4K-qd32-cold)

bad=0
total=0
for i in $(seq 1 "$n"); do
    for name in "${names[@]}"; do
        # shellcheck disable=SC2086
        doc=$(XDG_CACHE_HOME=$cache "$run" "$f" ${cmd[$name]} --json 2>/dev/null)
        line=$(python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
print("%s %.1f MiB/s %.3f s %s %s" % (r["verdict"], r["mib_s"], r["seconds"], r["reasons"] or "-", r["why"]))
' <<<"$doc")
        total=$((total + 1))
        [[ $line == "ok "* ]] || bad=$((bad + 1))
        echo "$i $name $line"
    done
done
echo "clean runs: $total, not ok: $bad"
[[ $bad -eq 0 ]]
