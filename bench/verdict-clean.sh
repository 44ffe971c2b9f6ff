#!/usr/bin/env bash
# Issue 36: false alarms are as bad as misses, and the normal machine is a shared one. Runs the
# clean runs N rounds (default 20: 100 runs) while another process reads a different file on the
# same disk and a third burns a core, with a limits profile measured on this machine at the
# start, and counts every verdict that is not `ok`:
#   warm-4K-random    run W -r 4K 262144 --pattern random --method pread --cache warm
#   warm-pread-1M     run W -r 1M 512 --method pread --cache warm
#   cold-seq-1M       run C -r 1M 2048 --cache cold                  (buffered, read-ahead)
#   cold-direct-qd32  run C -r 4K 65536 --method io_uring --queue-depth 32 --pattern random --direct
#   write-fsync-1M    run N -w 1M 1024 --fsync                       (a new file each time)
# W is a 512 MiB file (small enough to stay cached under this VM's DAMON reclaim), C a 2 GiB one
# (so a cold run lasts past the device's 0.5 s settle time), both created with `run -w --fsync`
# in DIR (default: $TMPDIR or /tmp; it must be on a local disk) and removed at the end (also on
# Ctrl-C), with the neighbours.
#
# The neighbours: `dd iflag=direct` reading 8 MiB of a third file every 0.25 s (~32 MiB/s of
# other I/O on the device, a backup or a log shipper), and `sh -c 'while :; do :; done'` on one
# core. Each run's line shows the facts behind its verdict: the run's own storage bytes, the
# others' on the device (and their rate: the neighbour alone is ~32 MiB/s), PSI cpu some, and in
# the sentences the workers' own wait for a CPU, so an alarm can be told apart from what other
# work on the machine (beyond the two neighbours) really did to the run.
#
# usage: bench/verdict-clean.sh [N] [DIR]
#   RUN=path/to/run, DISKSCOPE=path/to/diskscope   the binaries (default: target/release/*)
#   PROFILE=none    no limits profile (default: `diskscope limits --quick` at the start)
# Exit status: 0 when every run was ok, 1 otherwise. One line per run on stdout, then a tally.
set -euo pipefail

n=${1:-20}
dir=${2:-${TMPDIR:-/tmp}}
here=$(cd "$(dirname "$0")/.." && pwd)
run=${RUN:-$here/target/release/run}
ds=${DISKSCOPE:-$here/target/release/diskscope}
if [[ ! -x $run || ! -x $ds ]]; then
    (cd "$here" && cargo build --release --bin run --bin diskscope >&2)
fi

work=$(mktemp -d "$dir/verdict-clean.XXXXXX")
cache=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf -- "$work" "$cache"
}
trap cleanup EXIT INT TERM

warm=$work/warm
cold=$work/cold
other=$work/other
"$run" "$warm" -w 1M 512 --fsync >/dev/null 2>&1
"$run" "$cold" -w 1M 2048 --fsync >/dev/null 2>&1
"$run" "$other" -w 1M 256 --fsync >/dev/null 2>&1

if [[ ${PROFILE:-quick} != none ]]; then
    (cd "$work" && XDG_CACHE_HOME=$cache "$ds" limits "$cold" --quick >&2) || true
fi

# The neighbours.
(
    while :; do
        for off in $(seq 0 8 248); do
            dd if="$other" of=/dev/null bs=1M count=8 skip="$off" iflag=direct status=none
            sleep 0.25
        done
    done
) &
pids+=($!)
sh -c 'while :; do :; done' &
pids+=($!)
sleep 1

declare -A cmd=(
    [warm-4K-random]="$warm -r 4K 262144 --pattern random --method pread --cache warm"
    [warm-pread-1M]="$warm -r 1M 512 --method pread --cache warm"
    [cold-seq-1M]="$cold -r 1M 2048 --cache cold"
    [cold-direct-qd32]="$cold -r 4K 65536 --method io_uring --queue-depth 32 --pattern random --direct"
    [write-fsync-1M]="NEW -w 1M 1024 --fsync"
)
names=(warm-4K-random warm-pread-1M cold-seq-1M cold-direct-qd32 write-fsync-1M)

bad=0
total=0
tally=$work/tally
: >"$tally"
for i in $(seq 1 "$n"); do
    for name in "${names[@]}"; do
        args=${cmd[$name]}
        new=$work/new-$i
        args=${args/NEW/$new}
        # shellcheck disable=SC2086
        doc=$(XDG_CACHE_HOME=$cache "$run" $args --json 2>/dev/null)
        rm -f -- "$new"
        line=$(python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
# The facts columns are fields of the flat row itself.
f = r
mib = lambda k: "-" if f.get(k) is None else "%.0f" % (f[k] / 2**20)
pct = lambda k: "-" if f.get(k) is None else "%.0f%%" % f[k]
others = (f.get("others_read_bytes") or 0) + (f.get("others_write_bytes") or 0)
rate = others / 2**20 / r["seconds"] if r["seconds"] > 0 else 0
print("%s %.1f MiB/s %.2f s own %s/%s MiB others %s/%s MiB (%.0f MiB/s) psi-cpu %s | %s | %s" % (
    r["verdict"], r["mib_s"], r["seconds"], mib("run_read_bytes"), mib("run_write_bytes"),
    mib("others_read_bytes"), mib("others_write_bytes"), rate, pct("psi_cpu_some_pct"),
    r["reasons"] or "-", r["why"] or "-"))
' <<<"$doc")
        total=$((total + 1))
        if [[ $line != "ok "* ]]; then
            bad=$((bad + 1))
            codes=$(awk -F' \\| ' '{print $2}' <<<"$line")
            tr ';' '\n' <<<"$codes" >>"$tally"
        fi
        echo "$i $name $line"
    done
done
echo "clean runs: $total, not ok: $bad"
if [[ -s $tally ]]; then
    echo "reasons of the runs not ok:"
    sort "$tally" | uniq -c | sort -rn
fi
[[ $bad -eq 0 ]]
