#!/usr/bin/env bash
# Instructions per forwarded packet in the running daemon, counted by
# callgrind (an instruction count, so the same on a busy or an idle machine).
#
#   scripts/callgrind-daemon.sh [dr|nat|tun|dr6|nat6|tun6] [SECONDS]     (as root; default: dr 60)
#
# The DR (NAT, TUN; with 6: their IPv6 scenarios) 1k-flow scenario of
# dirigo-bench (net_pcap replaying a 1,000-flow pcap of established TCP ->
# net_null), with the table at 65,536 connections and EAL on ordinary
# memory (valgrind cannot follow hugepages):
# only the worker loop (`dataplane::worker::run`) is counted, without its
# housekeeping (the expiry sweep runs per millisecond of wall-clock time,
# which valgrind stretches by a load-dependent factor, so counting it would
# make the figure depend on the machine's load), and the packet count is what
# the worker transmitted on the lan port (the daemon prints it when it
# stops). Prints "instructions per packet: N", and with PROFILE=1 where
# they go per source line (scripts/callgrind-attr.py). KEEP=1 keeps the work
# directory (its pcaps and callgrind.out); a failed run always keeps it.
set -euo pipefail
cd "$(dirname "$0")/.."
method=${1:-dr}
secs=${2:-60}
case $method in
dr) M=DR ;;
nat) M=NAT ;;
tun) M=TUN ;;
dr6) M=DR6 ;;
nat6) M=NAT6 ;;
tun6) M=TUN6 ;;
*) echo "usage: $0 [dr|nat|tun|dr6|nat6|tun6] [seconds]" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null || { echo "callgrind-daemon: apt-get install valgrind" >&2; exit 1; }
w=$(mktemp -d /tmp/dirigo-cg.XXXXXX)
bin=${CARGO_TARGET_DIR:-target}/release
cargo build --release --bins -q
# the benchmark (this scenario only) writes the pcaps and configs into the work directory
"$bin/dirigo-bench" --only "$M 1k" --workdir "$w" >"$w/bench.log" 2>&1
src="$w/r1-$M-1k.toml"
[ -f "$src" ] || { echo "callgrind-daemon: $src not generated (see $w/bench.log)" >&2; exit 1; }
sed -e 's/"--in-memory", //' \
    -e 's/^args = \[/args = ["--no-huge", "-m", "1024", /' \
    -e 's/^connections_per_worker = [0-9]\{5,\}$/connections_per_worker = 65536/' \
    -e 's/^connections6_per_worker = [1-9][0-9]*$/connections6_per_worker = 65536/' \
    -e "s#^socket = .*#socket = \"$w/cg.sock\"#" \
    "$src" >"$w/cg.toml"
valgrind --tool=callgrind --fair-sched=yes --dump-instr=yes --callgrind-out-file="$w/callgrind.out" \
    --toggle-collect='*dataplane*worker*run*' --toggle-collect='*Pipeline*housekeeping*' \
    "$bin/dirigo" --config "$w/cg.toml" >"$w/dirigo.log" 2>&1 &
pid=$!
sleep "$secs"
kill -INT "$pid"
wait "$pid" || true
ir=$(callgrind_annotate "$w/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n {gsub(",", "", $1); print $1; n = 1}')
pkts=$(sed -n 's/^port lan .*workers: rx [0-9]* tx \([0-9]*\) .*/\1/p' "$w/dirigo.log")
if [ -z "$ir" ] || [ -z "$pkts" ] || [ "$pkts" = 0 ]; then
    echo "callgrind-daemon: no result (Ir '$ir', packets '$pkts'); see $w" >&2
    exit 1
fi
echo "method $method: $ir instructions in the worker loop, $pkts packets forwarded"
awk -v i="$ir" -v p="$pkts" 'BEGIN { printf "instructions per packet: %.0f\n", i / p }'
if [ "${PROFILE:-0}" = 1 ]; then
    python3 scripts/callgrind-attr.py "$w/callgrind.out" "$bin/dirigo" "$pkts" "${TOP:-40}"
fi
# each run leaves about 250 MB (pcaps, the profile): kept only when asked
if [ "${KEEP:-0}" = 1 ]; then echo "(files in $w)"; else rm -rf "$w"; fi
