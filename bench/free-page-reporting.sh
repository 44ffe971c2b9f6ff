#!/usr/bin/env bash
# bench/free-page-reporting.sh: prints 1 when this machine is a VM that gives free memory back to
# its host (a virtio-balloon device, id 5, bound to its driver, with feature bit 5,
# VIRTIO_BALLOON_F_REPORTING, set; `features` holds one 0/1 character per bit, bit 0 first), else 0.
# The same test as diskscope's context (`free_page_reporting` in src/explain/context.rs). On such
# a VM a cold buffered read's speed depends on how long ago its memory was freed, and I/O slows
# while the host takes a large free back: compare.sh and peer.sh wait SETTLE_S after evictions.
fpr=0
for d in /sys/bus/virtio/devices/*; do
  [ "$(cat "$d/device" 2>/dev/null)" = 0x0005 ] && [ -e "$d/driver" ] &&
    [ "$(cut -c6 "$d/features" 2>/dev/null)" = 1 ] && fpr=1
done
echo "$fpr"
