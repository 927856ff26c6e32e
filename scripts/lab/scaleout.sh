#!/usr/bin/env bash
# The scale-out lab's namespaces (docs/OPERATIONS.md "Scale-out"): a client
# behind a router running BIRD with ECMP, a front and a back L2 segment
# (bridges in a switch namespace), three real servers in DR mode. The
# directors (dirigo processes, their taps and the BIRD of their exception
# namespace) are started by the test (tests/scaleout_common), which calls
# `attach` for each director's taps.
#
#   scaleout.sh up               namespaces, bridges, real servers, router + BIRD
#   scaleout.sh attach FRONT BACK  a director's taps (in this namespace) onto the bridges
#   scaleout.sh down             remove everything of this prefix (idempotent)
#
# Environment: SO_PREFIX (default dgs; names SO_PREFIX-cl, -rt, -sw, -rs1..3),
# SO_STATE (default /run/dirigo-lab/SO_PREFIX-so: pid files, logs, BIRD socket).
#
#   client 10.91.0.2 -- 10.91.0.1 router 10.92.0.254 -- brf (front): directors 10.92.0.1, .2
#                                        10.93.0.254 -- brb (back):  directors 10.93.0.1, .2,
#                                                                    rs1..3 10.93.0.11-13 (VIP on lo)
# VIP 10.90.0.100: the real servers answer the client directly, through the router.
# Dual-stack: the same in IPv6, fd00:9N::/64 for 10.9N.0.0/24 (client fd00:91::2, router
# fd00:91::1, fd00:92::fe, fd00:93::fe, directors fd00:92::1, ::2 and fd00:93::1, ::2,
# rs1..3 fd00:93::11-13), VIP fd00:90::100 (on the real servers' lo, each serving it with a
# second, IPv6-only server on port 80).
set -uo pipefail

P=${SO_PREFIX:-dgs}
ST=${SO_STATE:-/run/dirigo-lab/$P-so}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SUPPORT=$REPO/tests/support
VIP=10.90.0.100
VIP6=fd00:90::100
NRS=3

# lab.sh's helpers: lab__x (run or die), lab__sysctl, lab__add_ns (lo up,
# rp_filter off, IPv6 off)
# shellcheck source=lab.sh
source "$HERE/lab.sh"
LAB_PREFIX=$P
die() { lab__die "$@"; }
x() { lab__x "$@"; }
sysctl_in() { lab__sysctl "$@"; }
# lab.sh's namespaces have IPv6 off; this lab is dual-stack
ns_add() {
    lab__add_ns "$1"
    sysctl_in "$1" net.ipv6.conf.all.disable_ipv6 0
    sysctl_in "$1" net.ipv6.conf.default.disable_ipv6 0
}
# an IPv6 address at once (no duplicate address detection)
addr6() { x ip -n "$1" -6 addr add "$2" dev "$3" nodad; }

# a veth from namespace $1 (name $2, address $3 or none) to the switch's bridge $4 (port $5)
to_bridge() {
    x ip link add "$2" netns "$1" type veth peer name "$5" netns "$P-sw"
    x ip -n "$P-sw" link set "$5" master "$4"
    x ip -n "$P-sw" link set "$5" up
    [[ -n $3 ]] && x ip -n "$1" addr add "$3" dev "$2"
    x ip -n "$1" link set "$2" up
}

up() {
    [[ -d $ST ]] && die "already up (run: $0 down)"
    x mkdir -p "$ST"
    local i ns r
    for ns in cl rt sw; do ns_add "$P-$ns"; done
    for b in brf brb; do
        # no multicast snooping: dirigo's taps send no MLD reports, and
        # neighbour solicitations must reach them
        x ip -n "$P-sw" link add "$b" type bridge mcast_snooping 0
        x ip -n "$P-sw" link set "$b" up
    done
    # client <-> router
    x ip link add eth0 netns "$P-cl" type veth peer name cl netns "$P-rt"
    x ip -n "$P-cl" addr add 10.91.0.2/24 dev eth0
    x ip -n "$P-cl" link set eth0 up
    x ip -n "$P-cl" route add default via 10.91.0.1
    addr6 "$P-cl" fd00:91::2/64 eth0
    x ip -n "$P-cl" -6 route add default via fd00:91::1
    x ip -n "$P-rt" addr add 10.91.0.1/24 dev cl
    addr6 "$P-rt" fd00:91::1/64 cl
    x ip -n "$P-rt" link set cl up
    # router on both segments
    to_bridge "$P-rt" front 10.92.0.254/24 brf rt-f
    to_bridge "$P-rt" back 10.93.0.254/24 brb rt-b
    addr6 "$P-rt" fd00:92::fe/64 front
    addr6 "$P-rt" fd00:93::fe/64 back
    sysctl_in "$P-rt" net.ipv4.ip_forward 1
    sysctl_in "$P-rt" net.ipv4.fib_multipath_hash_policy 1
    sysctl_in "$P-rt" net.ipv6.conf.all.forwarding 1
    sysctl_in "$P-rt" net.ipv6.fib_multipath_hash_policy 1
    # real servers: DR (VIP on lo, no ARP for it), replies via the router
    for ((i = 1; i <= NRS; i++)); do
        ns=$P-rs$i
        ns_add "$ns"
        to_bridge "$ns" eth0 "10.93.0.$((10 + i))/24" brb "rs$i"
        x ip -n "$ns" addr add "$VIP/32" dev lo
        x ip -n "$ns" route add default via 10.93.0.254
        # IPv6 DR: a VIP on lo is not answered on eth0 (neighbour discovery
        # answers for the receiving interface's addresses only)
        addr6 "$ns" "fd00:93::$((10 + i))/64" eth0
        addr6 "$ns" "$VIP6/128" lo
        x ip -n "$ns" -6 route add default via fd00:93::fe
        for k in all eth0; do
            sysctl_in "$ns" "net.ipv4.conf.$k.arp_ignore" 1
            sysctl_in "$ns" "net.ipv4.conf.$k.arp_announce" 2
            sysctl_in "$ns" "net.ipv4.conf.$k.rp_filter" 0
        done
        rm -f "$ST/rs$i.ready"
        ip netns exec "$ns" setsid python3 "$SUPPORT/rs_server.py" --name "rs$i" --port 80 \
            --blob-size 1048576 --log "$ST/rs$i.log" --pid-file "$ST/rs$i.pid" \
            --ready-file "$ST/rs$i.ready" </dev/null >>"$ST/rs$i.log" 2>&1 &
        rm -f "$ST/rs$i-6.ready"
        ip netns exec "$ns" setsid python3 "$SUPPORT/rs_server.py" --name "rs$i" --bind :: --port 80 \
            --blob-size 1048576 --log "$ST/rs$i-6.log" --pid-file "$ST/rs$i-6.pid" \
            --ready-file "$ST/rs$i-6.ready" </dev/null >>"$ST/rs$i-6.log" 2>&1 &
    done
    # the router's BIRD: the shipped config, logging to the state directory
    sed "s|^log syslog all;|log \"$ST/bird-router.log\" all;|" "$REPO/conf/bird-router.conf" >"$ST/bird-router.conf"
    x ip netns exec "$P-rt" bird -c "$ST/bird-router.conf" -s "$ST/bird-router.ctl" -P "$ST/bird-router.pid"
    for ((i = 1; i <= NRS; i++)); do
        for r in "rs$i" "rs$i-6"; do
            for _ in $(seq 100); do [[ -s $ST/$r.ready ]] && break; sleep 0.1; done
            [[ -s $ST/$r.ready ]] || die "$r did not start (log $ST/$r.log)"
        done
    done
}

attach() {
    local front=${1:?front tap} back=${2:?back tap} t
    for t in "$front" "$back"; do
        for _ in $(seq 150); do ip link show dev "$t" >/dev/null 2>&1 && break; sleep 0.1; done
        x ip link set dev "$t" netns "$P-sw"
    done
    x ip -n "$P-sw" link set dev "$front" master brf
    x ip -n "$P-sw" link set dev "$back" master brb
    x ip -n "$P-sw" link set dev "$front" up
    x ip -n "$P-sw" link set dev "$back" up
}

kill_pidfile() {
    local f=$1 pid
    [[ -s $f ]] || return 0
    pid=$(<"$f")
    [[ $pid =~ ^[0-9]+$ ]] && kill -TERM "$pid" 2>/dev/null
    rm -f "$f"
}

down() {
    local f ns pid
    if [[ -d $ST ]]; then
        for f in "$ST"/*.pid; do [[ -e $f ]] && kill_pidfile "$f"; done
    fi
    # whatever still runs in our namespaces (BIRDs of the directors too)
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$P-(cl|rt|sw|rs[0-9]|x[a-z])$"); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "$ST"
    return 0
}

[[ $(id -u) -eq 0 ]] || die "must run as root"
case ${1:-} in
up) up ;;
attach) shift; attach "$@" ;;
down) down ;;
*) sed -n '2,/^set/p' "$0" | sed 's/^# \{0,1\}//;/^set/d'; exit 2 ;;
esac
