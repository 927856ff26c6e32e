#!/usr/bin/env bash
# Reserve 2 MiB hugepages for DPDK. Idempotent: never lowers an existing
# reservation. Usage: setup-hugepages.sh [COUNT]   (default 1024 = 2 GiB)
set -euo pipefail
want=${1:-1024}
if [ "$(id -u)" != 0 ]; then
    echo "setup-hugepages.sh: must run as root (writes /proc/sys/vm/nr_hugepages)" >&2
    exit 1
fi
case "$want" in ''|*[!0-9]*) echo "setup-hugepages.sh: COUNT must be a number, got '$want'" >&2; exit 2;; esac
f=/proc/sys/vm/nr_hugepages
have=$(cat "$f")
if [ "$have" -lt "$want" ]; then
    echo "$want" > "$f"
    now=$(cat "$f")
    echo "hugepages: reserved $now x 2 MiB (was $have, wanted $want)"
    if [ "$now" -lt "$want" ]; then
        echo "hugepages: warning: only $now of $want could be reserved (memory fragmented?)" >&2
    fi
else
    echo "hugepages: $have x 2 MiB already reserved (wanted $want)"
fi
if ! grep -qs ' hugetlbfs ' /proc/mounts; then
    mkdir -p /dev/hugepages
    mount -t hugetlbfs nodev /dev/hugepages
    echo "hugepages: mounted hugetlbfs on /dev/hugepages"
else
    echo "hugepages: hugetlbfs already mounted"
fi
