#!/usr/bin/env bash
# Captures the explorer in a real terminal (tmux, 100x30) and renders it as
# assets/screenshots/explorer.png, the picture at the top of README.md:
#   assets/screenshots/capture.sh [DISKSCOPE]      (default target/release/diskscope)
# It makes a 256 MiB file in a temp directory, explores it for about 15 s while turning a few
# knobs (block size, method, random offsets), captures the screen with its colours
# (`capture-pane -e`), converts it to SVG (bench/ansi2svg.py) and to PNG (rsvg-convert), and removes
# the file. Needs tmux, python3 and librsvg2-bin.
set -euo pipefail
cd "$(dirname "$0")/../.."
ds=$(realpath "${1:-target/release/diskscope}")
run="$(dirname "$ds")/run"
here=assets/screenshots
work=$(mktemp -d)
sock="diskscope-capture-$$"
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$run" "$work/big.bin" -w 1M 256 >/dev/null 2>&1
tmux -L "$sock" -f /dev/null new-session -d -x 100 -y 30 -c "$work" \
  "env TERM=xterm-256color $ds big.bin; sleep 30"
key() { tmux -L "$sock" send-keys "$@"; }
sleep 4
key Right      # 1M -> 2M blocks
sleep 3
key m          # next method
sleep 3
key p          # random offsets
sleep 2
key Left Left  # 2M -> 512K
sleep 4
tmux -L "$sock" capture-pane -e -p >"$work/screen.txt"
key q
python3 "$here/../../bench/ansi2svg.py" "$work/screen.txt" "$work/explorer.svg" --cols 100 --rows 30
rsvg-convert "$work/explorer.svg" -o "$here/explorer.png"
echo "wrote $here/explorer.png"
