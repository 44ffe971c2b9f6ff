#!/bin/sh
# Captures the live explorer in tmux at the sizes the screen is tested at, as colour text
# (`capture-pane -e`) and as PNG (bench/ansi2svg.py, then rsvg-convert), to look at.
#
#   bench/capture-explorer.sh DISKSCOPE FILE OUTDIR [KEYS...]
#
# DISKSCOPE is the binary, FILE the file to explore, OUTDIR where `explorer-WxH.{ans,svg,png}`
# go. Each KEYS word is sent with `tmux send-keys` after the previous one settled (2.5 s; a
# word `sleep:N` waits N seconds instead). The explorer runs in OUTDIR (its CSV and exports go
# there) and is quit with `q` after the capture. SIZES overrides the sizes
# (default "80x24 120x40 200x60 300x90").
set -eu
bin=$1
file=$2
out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
sock="capture-$$"
for size in ${SIZES:-80x24 120x40 200x60 300x90}; do
    w=${size%x*}
    h=${size#*x}
    tmux -L "$sock" -f /dev/null new-session -d -s main -x "$w" -y "$h" \
        "cd '$out' && '$bin' '$file'; sleep 30"
    sleep 4
    for k in "$@"; do
        case $k in
        sleep:*) sleep "${k#sleep:}" ;;
        *)
            tmux -L "$sock" send-keys -t main "$k"
            sleep 2.5
            ;;
        esac
    done
    tmux -L "$sock" capture-pane -e -p -t main >"$out/explorer-$size.ans"
    tmux -L "$sock" send-keys -t main q
    sleep 3
    tmux -L "$sock" kill-server 2>/dev/null || true
    "$here/ansi2svg.py" "$out/explorer-$size.ans" "$out/explorer-$size.svg" --cols "$w" --rows "$h"
    if command -v rsvg-convert >/dev/null; then
        rsvg-convert -o "$out/explorer-$size.png" "$out/explorer-$size.svg"
    fi
    echo "$out/explorer-$size"
done
