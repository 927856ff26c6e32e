#!/usr/bin/env bash
# dirigo network-namespace lab: a bash library (source it) and a CLI.
#
#   lab.sh up MODE          phase 1: namespaces, bridge, real servers, return path
#                           (MODE = dr | tun | nat | all)
#   lab.sh attach [WAN LAN] phase 2: move dirigo's taps (default $P-wan/$P-lan)
#                           from this namespace into the lab and configure them
#   lab.sh detach           undo attach (taps back here, if they still exist)
#   lab.sh mode MODE        reconfigure the real servers for another mode
#   lab.sh http-stop N      stop real server N's HTTP application (a dead server)
#   lab.sh http-start N     start it again
#   lab.sh standin          TEST ONLY: create a stand-in director instead of dirigo
#   lab.sh down             remove everything (idempotent)
#   lab.sh status           show what exists
#   lab.sh env              print the lab's names and addresses as shell exports
#   lab.sh ports-toml       print dirigo's two [[port]] sections for the lab
#   lab.sh exec WHO CMD...  run CMD in namespace WHO (client, srv, rs1.., dir)
#
# Parameters (environment, all optional):
#   LAB_PREFIX      name prefix P (default dgl); namespaces P-client, P-srv,
#                   P-rs1..N, P-dir; default tap names P-wan / P-lan
#   LAB_CLIENT_NET  client /24 (default 10.99.0.0/24)   dirigo .1, client .2
#   LAB_SERVER_NET  server /24 (default 10.98.0.0/24)   dirigo .1, RS .11.., router .254
#   LAB_RETURN_NET  return /24 (default 10.97.0.0/24)   router .1, client .2
#   LAB_VIP         virtual IP (default <client net>.100)
#   LAB_NRS         number of real servers (default 3, max 9)
#   LAB_HTTP_PORT   (80)  LAB_UDP_PORT (5353)  LAB_BLOB_SIZE (4194304 bytes)
#   LAB_WAN_MTU     MTU set on the WAN tap in the client namespace (default: leave)
#   LAB_DECAP_ARGS  extra arguments for the TUN real servers' ipip_decap.py
#                   (e.g. "--syn-delay-ms 600": a real server slow to answer SYNs)
#   LAB_LAN_MTU     MTU of the server LAN: RS veths and the LAN tap (default: leave,
#                   1500); e.g. 1600 lets TUN outer packets of 1520 bytes through
#   LAB_STATE_DIR   (default /run/dirigo-lab/P): pid files, logs, mode
#   LAB_PYTHON      (default python3)
#   LAB_WAN_IF / LAB_LAN_IF  default tap names for attach
#   LAB_TAP_MAC_REWRITE  1 (default): attach gives the taps' kernel sides their
#                   own MACs (LAB_CLIENT_MAC, LAB_LANPORT_MAC); 0: leave them
#                   (dirigo gives a net_tap port's kernel side its own MAC itself)
#   LAB_WAN_BRIDGE  1: attach puts the WAN tap into a bridge "brw" in the client
#                   namespace and the client address on the bridge (the textbook
#                   way to put a tap on a LAN); default 0: the address on the tap
#
# Library use (in a test script run as root):
#   source scripts/lab/lab.sh
#   lab_trap_teardown            # lab_down on EXIT, INT, TERM
#   lab_up dr                    # phase 1
#   ...start dirigo with net_tap ports named "$LAB_WAN_IF" / "$LAB_LAN_IF"...
#   lab_attach "$LAB_WAN_IF" "$LAB_LAN_IF"
#   lab_in client curl -s "http://$LAB_VIP/"

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_REPO=$(cd "$LAB_DIR/../.." && pwd)
LAB_SUPPORT=${LAB_SUPPORT:-$LAB_REPO/tests/support}

# ---------------------------------------------------------------- utilities

lab__log() { printf 'lab[%s]: %s\n' "${LAB_PREFIX:-?}" "$*" >&2; }
lab__die() {
    printf 'lab[%s]: ERROR: %s\n' "${LAB_PREFIX:-?}" "$*" >&2
    exit 1
}
# Run a command; die with its text when it fails.
lab__x() { "$@" || lab__die "command failed (rc=$?): $*"; }

# Refuse to run unless root.
lab_require_root() {
    if [[ $(id -u) -ne 0 ]]; then
        echo "lab: must run as root (network namespaces, veth, bridges and TUN need CAP_NET_ADMIN); try: sudo $0 $*" >&2
        exit 2
    fi
}

lab_require_tools() {
    local t missing=()
    for t in ip "$LAB_PYTHON" curl setsid; do
        command -v "$t" >/dev/null 2>&1 || missing+=("$t")
    done
    [[ ${#missing[@]} -eq 0 ]] || lab__die "missing tools: ${missing[*]} (apt-get install iproute2 python3 curl util-linux)"
    [[ -c /dev/net/tun ]] || lab__die "/dev/net/tun missing (TUN support needed for TUN mode)"
}

# "10.99.0.0/24" -> "10.99.0"
lab__net24() {
    local net=$1 what=$2
    [[ $net =~ ^([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})\.0/24$ ]] || lab__die "$what must be a /24 like 10.99.0.0/24, got '$net'"
    printf '%s' "${BASH_REMATCH[1]}"
}

# Set VAR to DEFAULT unless the user gave it a value. A value this function
# derived earlier (e.g. from another LAB_PREFIX) is re-derived, so a script can
# switch LAB_PREFIX between calls.
lab__default() {
    local var=$1 def=$2 mark=LAB__D_$1
    if [[ -z ${!var:-} || ${!var} == "${!mark:-}" ]]; then
        printf -v "$var" '%s' "$def"
        printf -v "$mark" '%s' "$def"
    fi
}

# Compute every name and address from the environment. Called by every entry point.
lab_config() {
    LAB_PREFIX=${LAB_PREFIX:-dgl}
    [[ $LAB_PREFIX =~ ^[A-Za-z][A-Za-z0-9_]{0,9}$ ]] || lab__die "LAB_PREFIX must be 1-10 chars [A-Za-z0-9_], starting with a letter"
    LAB_CLIENT_NET=${LAB_CLIENT_NET:-10.99.0.0/24}
    LAB_SERVER_NET=${LAB_SERVER_NET:-10.98.0.0/24}
    LAB_RETURN_NET=${LAB_RETURN_NET:-10.97.0.0/24}
    local c s r
    c=$(lab__net24 "$LAB_CLIENT_NET" LAB_CLIENT_NET) || exit 1
    s=$(lab__net24 "$LAB_SERVER_NET" LAB_SERVER_NET) || exit 1
    r=$(lab__net24 "$LAB_RETURN_NET" LAB_RETURN_NET) || exit 1
    lab__default LAB_VIP "$c.100"
    LAB_NRS=${LAB_NRS:-3}
    [[ $LAB_NRS =~ ^[1-9]$ ]] || lab__die "LAB_NRS must be 1..9"
    LAB_HTTP_PORT=${LAB_HTTP_PORT:-80}
    LAB_UDP_PORT=${LAB_UDP_PORT:-5353}
    LAB_BLOB_SIZE=${LAB_BLOB_SIZE:-4194304}
    LAB_PYTHON=${LAB_PYTHON:-python3}
    lab__default LAB_STATE_DIR "/run/dirigo-lab/$LAB_PREFIX"
    lab__default LAB_WAN_IF "$LAB_PREFIX-wan"
    lab__default LAB_LAN_IF "$LAB_PREFIX-lan"

    LAB_NS_CLIENT=$LAB_PREFIX-client
    LAB_NS_SRV=$LAB_PREFIX-srv
    LAB_NS_DIR=$LAB_PREFIX-dir
    LAB_CLIENT_IP=$c.2
    LAB_DIRIGO_WAN_IP=$c.1
    LAB_DIRIGO_LAN_IP=$s.1
    LAB_ROUTER_LAN_IP=$s.254
    LAB_ROUTER_RET_IP=$r.1
    LAB_CLIENT_RET_IP=$r.2
    # kernel-side MACs of the taps after attach: 02:00:<client ip>, 02:01:<server net>.0
    LAB_CLIENT_MAC=$(printf '02:00:%02x:%02x:%02x:%02x' ${LAB_CLIENT_IP//./ })
    LAB_LANPORT_MAC=$(printf '02:01:%02x:%02x:%02x:00' ${s//./ })
    LAB_ROUTER_MAC=$(printf '02:01:%02x:%02x:%02x:fe' ${s//./ })   # br0 (10.98.0.254)
    LAB_CLIENT_PLEN=$c.0/24
    LAB_SERVER_PLEN=$s.0/24
    LAB_RS_IPS=()
    LAB_RS_NS=()
    LAB_RS_MACS=()
    local i
    for ((i = 1; i <= LAB_NRS; i++)); do
        LAB_RS_IPS+=("$s.$((10 + i))")
        LAB_RS_NS+=("$LAB_PREFIX-rs$i")
        # RS eth0 MAC: 02:02:<rip>, e.g. 02:02:0a:62:00:0b for 10.98.0.11
        LAB_RS_MACS+=("$(printf '02:02:%02x:%02x:%02x:%02x' ${s//./ } $((10 + i)))")
    done
}

# Run a command inside a lab namespace: lab_in client|srv|dir|rsN CMD...
lab_in() {
    local who=$1
    shift
    ip netns exec "${LAB_PREFIX:-dgl}-$who" "$@"
}

lab__sysctl() { # NS key value
    ip netns exec "$1" sh -c "echo $3 > /proc/sys/${2//.//}" || lab__die "sysctl $2=$3 in $1 failed"
}

# Base settings for a fresh namespace: lo up, rp_filter off, IPv6 off (no
# DAD/RS/MLD noise on dirigo's ports).
lab__ns_base() {
    local ns=$1
    lab__x ip -n "$ns" link set lo up
    lab__sysctl "$ns" net.ipv4.conf.all.rp_filter 0
    lab__sysctl "$ns" net.ipv4.conf.default.rp_filter 0
    if ip netns exec "$ns" test -e /proc/sys/net/ipv6/conf/all/disable_ipv6; then
        lab__sysctl "$ns" net.ipv6.conf.all.disable_ipv6 1
        lab__sysctl "$ns" net.ipv6.conf.default.disable_ipv6 1
    fi
}

lab__add_ns() {
    ip netns add "$1" || lab__die "cannot create namespace $1 (already exists? run: lab.sh down)"
    lab__ns_base "$1"
}

lab__wait_file() { # path timeout_seconds what
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [[ -s $1 ]] && return 0
        sleep 0.1
    done
    lab__die "timeout waiting for $3 ($1)"
}

# Start a support program in a namespace, in the background, detached.
# lab__spawn NS NAME SCRIPT ARGS...   (pid file, log, ready file in the state dir)
lab__spawn() {
    local ns=$1 name=$2 script=$3
    shift 3
    local st=$LAB_STATE_DIR
    rm -f "$st/$name.ready"
    ip netns exec "$ns" setsid "$LAB_PYTHON" "$LAB_SUPPORT/$script" "$@" \
        --log "$st/$name.log" --pid-file "$st/$name.pid" --ready-file "$st/$name.ready" \
        </dev/null >>"$st/$name.log" 2>&1 &
    echo "$!" >"$st/$name.spawn"
    [[ ${LAB__NOWAIT:-0} == 1 ]] || lab__wait_ready "$name"
}

# Start real server N's HTTP application (its /health answers what the
# file $LAB_STATE_DIR/rsN.health says: "STATUS BODY"; "200 ok" without it).
lab__http() {
    local i=$1
    lab__spawn "${LAB_RS_NS[i - 1]}" "rs$i-http" rs_server.py --name "rs$i" --port "$LAB_HTTP_PORT" \
        --blob-size "$LAB_BLOB_SIZE" --health-file "$LAB_STATE_DIR/rs$i.health"
}

# Wait for NAME's ready file; fail fast (with its log) when it died.
lab__wait_ready() {
    local name=$1 st=$LAB_STATE_DIR i pid
    pid=$(cat "$st/$name.spawn" 2>/dev/null)
    for ((i = 0; i < 150; i++)); do
        [[ -s $st/$name.ready ]] && return 0
        if ! lab__alive "$pid"; then
            sleep 0.1
            [[ -s $st/$name.ready ]] && return 0
            tail -5 "$st/$name.log" >&2 2>/dev/null
            lab__die "$name exited before it was ready (log: $st/$name.log)"
        fi
        sleep 0.1
    done
    lab__die "timeout waiting for $name to be ready ($st/$name.ready)"
}

# True while PID runs (a zombie waiting for a slow reaper counts as gone).
lab__alive() {
    local st
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $st && ${st:0:1} != Z ]]
}

# Stop one spawned program by its recorded pid (TERM, then KILL after 3 s).
lab__stop() {
    local name=$1 f pid i
    for f in "$LAB_STATE_DIR/$name.pid" "$LAB_STATE_DIR/$name.spawn"; do
        [[ -f $f ]] || continue
        pid=$(<"$f")
        [[ $pid =~ ^[0-9]+$ ]] || continue
        # only our own programs: the cmdline must name the support dir
        if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$LAB_SUPPORT/"; then
            kill -TERM "$pid" 2>/dev/null
            for ((i = 0; i < 30; i++)); do
                lab__alive "$pid" || break
                sleep 0.1
            done
            lab__alive "$pid" && kill -KILL "$pid" 2>/dev/null
        fi
    done
    rm -f "$LAB_STATE_DIR/$name".{pid,spawn,ready}
}

# ---------------------------------------------------------------- phase 1

# Die when any part of this lab already exists (never tear down someone's lab).
lab__check_absent() {
    if [[ -d $LAB_STATE_DIR ]] || [[ -n $(lab__our_netns) ]]; then
        lab__die "lab '$LAB_PREFIX' already exists (run: LAB_PREFIX=$LAB_PREFIX lab.sh down)"
    fi
}

# Phase 1: everything that does not need dirigo's taps.
lab_up() {
    local mode=${1:?usage: lab_up dr|tun|nat|all}
    lab_config
    case $mode in dr | tun | nat | all) ;; *) lab__die "unknown mode '$mode' (dr, tun, nat, all)" ;; esac
    lab_require_tools
    lab__check_absent
    mkdir -p "$LAB_STATE_DIR" || lab__die "cannot create $LAB_STATE_DIR"
    echo "$LAB_NRS" >"$LAB_STATE_DIR/nrs"
    lab__log "phase 1: building lab (mode $mode)"

    local srv=$LAB_NS_SRV cl=$LAB_NS_CLIENT i ns
    lab__add_ns "$cl"
    lab__add_ns "$srv"
    # the switch: bridge br0, plus the return-path router on the same namespace
    lab__x ip -n "$srv" link add br0 address "$LAB_ROUTER_MAC" type bridge
    lab__x ip -n "$srv" link set br0 up
    lab__x ip -n "$srv" addr add "$LAB_ROUTER_LAN_IP/24" dev br0
    # return path: client ret0 <-> srv ret (routed, not bridged)
    lab__x ip link add ret0 netns "$cl" type veth peer name ret netns "$srv"
    lab__x ip -n "$srv" addr add "$LAB_ROUTER_RET_IP/24" dev ret
    lab__x ip -n "$srv" link set ret up
    lab__x ip -n "$srv" route add "$LAB_CLIENT_PLEN" via "$LAB_CLIENT_RET_IP" dev ret
    lab__x ip -n "$cl" addr add "$LAB_CLIENT_RET_IP/24" dev ret0
    lab__x ip -n "$cl" link set ret0 up

    for ((i = 1; i <= LAB_NRS; i++)); do
        ns=${LAB_RS_NS[i - 1]}
        lab__add_ns "$ns"
        lab__x ip link add eth0 netns "$ns" type veth peer name "rs$i" netns "$srv"
        lab__x ip -n "$srv" link set "rs$i" master br0
        lab__x ip -n "$srv" link set "rs$i" up
        lab__x ip -n "$ns" link set eth0 address "${LAB_RS_MACS[i - 1]}"
        if [[ -n ${LAB_LAN_MTU:-} ]]; then
            lab__x ip -n "$ns" link set eth0 mtu "$LAB_LAN_MTU"
            lab__x ip -n "$srv" link set "rs$i" mtu "$LAB_LAN_MTU"
        fi
        lab__x ip -n "$ns" addr add "${LAB_RS_IPS[i - 1]}/24" dev eth0
        lab__x ip -n "$ns" link set eth0 up
        LAB__NOWAIT=1 lab__http "$i"
        LAB__NOWAIT=1 lab__spawn "$ns" "rs$i-udp" udp_echo.py --name "rs$i" --port "$LAB_UDP_PORT"
    done
    for ((i = 1; i <= LAB_NRS; i++)); do
        lab__wait_ready "rs$i-http"
        lab__wait_ready "rs$i-udp"
    done
    lab_mode "$mode"
    lab__log "phase 1 done; start dirigo, then: lab.sh attach $LAB_WAN_IF $LAB_LAN_IF"
}

# (Re)configure the real servers and the return router for a forwarding mode.
#   dr : VIP/32 on lo, arp_ignore=1, arp_announce=2, default via router
#   tun: VIP/32 on TUN "vip0" fed by ipip_decap.py, same ARP settings, default via router
#   nat: default via dirigo's LAN address, router forwarding OFF
#   all: dr+tun on every RS; default via dirigo, but source-VIP replies use the
#        router (ip rule from VIP lookup 100): DR/TUN and NAT services coexist
lab_mode() {
    local mode=${1:?usage: lab_mode dr|tun|nat|all} i ns rip
    lab_config
    case $mode in dr | tun | nat | all) ;; *) lab__die "unknown mode '$mode'" ;; esac
    [[ -d $LAB_STATE_DIR ]] || lab__die "lab '$LAB_PREFIX' is not up"
    local srv=$LAB_NS_SRV
    if [[ $mode == nat ]]; then
        lab__sysctl "$srv" net.ipv4.ip_forward 0
    else
        lab__sysctl "$srv" net.ipv4.ip_forward 1
    fi
    for ((i = 1; i <= LAB_NRS; i++)); do
        ns=${LAB_RS_NS[i - 1]}
        rip=${LAB_RS_IPS[i - 1]}
        # reset to neutral
        lab__stop "rs$i-decap"
        ip -n "$ns" addr del "$LAB_VIP/32" dev lo 2>/dev/null
        ip -n "$ns" route del default 2>/dev/null
        ip -n "$ns" rule del from "$LAB_VIP" lookup 100 2>/dev/null
        ip -n "$ns" route flush table 100 2>/dev/null
        local k
        for k in all eth0 lo; do
            lab__sysctl "$ns" "net.ipv4.conf.$k.rp_filter" 0
            lab__sysctl "$ns" "net.ipv4.conf.$k.arp_ignore" 0
            lab__sysctl "$ns" "net.ipv4.conf.$k.arp_announce" 0
        done
        if [[ $mode != nat ]]; then
            for k in all eth0; do
                lab__sysctl "$ns" "net.ipv4.conf.$k.arp_ignore" 1
                lab__sysctl "$ns" "net.ipv4.conf.$k.arp_announce" 2
            done
        fi
        case $mode in
        dr)
            lab__x ip -n "$ns" addr add "$LAB_VIP/32" dev lo
            lab__x ip -n "$ns" route add default via "$LAB_ROUTER_LAN_IP" dev eth0
            ;;
        tun)
            # shellcheck disable=SC2086 # LAB_DECAP_ARGS is a word list
            lab__spawn "$ns" "rs$i-decap" ipip_decap.py --vip "$LAB_VIP" --tun vip0 --local "$rip" ${LAB_DECAP_ARGS:-}
            lab__x ip -n "$ns" route add default via "$LAB_ROUTER_LAN_IP" dev eth0
            ;;
        nat)
            lab__x ip -n "$ns" route add default via "$LAB_DIRIGO_LAN_IP" dev eth0
            ;;
        all)
            lab__x ip -n "$ns" addr add "$LAB_VIP/32" dev lo
            lab__spawn "$ns" "rs$i-decap" ipip_decap.py --vip "$LAB_VIP" --tun vip0 --local "$rip"
            lab__x ip -n "$ns" route add default via "$LAB_DIRIGO_LAN_IP" dev eth0
            lab__x ip -n "$ns" route add default via "$LAB_ROUTER_LAN_IP" dev eth0 table 100
            lab__x ip -n "$ns" rule add from "$LAB_VIP" lookup 100
            ;;
        esac
    done
    echo "$mode" >"$LAB_STATE_DIR/mode"
    lab__log "real servers configured for mode $mode"
}

# ---------------------------------------------------------------- phase 2

lab__wait_link() { # ifname timeout
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        ip link show dev "$1" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

# Phase 2: move dirigo's taps (ordinary interfaces in THIS namespace once
# dirigo runs) into the lab. WAN -> P-client with the client address; LAN ->
# bridge br0 in P-srv. Waits up to LAB_ATTACH_TIMEOUT (15 s) for them to appear.
lab_attach() {
    lab_config
    local wan=${1:-$LAB_WAN_IF} lan=${2:-$LAB_LAN_IF} t=${LAB_ATTACH_TIMEOUT:-15}
    [[ -d $LAB_STATE_DIR ]] || lab__die "lab '$LAB_PREFIX' is not up (run: lab.sh up MODE)"
    [[ -f $LAB_STATE_DIR/attached ]] && lab__die "already attached: $(<"$LAB_STATE_DIR/attached")"
    lab__wait_link "$wan" "$t" || lab__die "interface $wan not found in this namespace (is dirigo running?)"
    lab__wait_link "$lan" "$t" || lab__die "interface $lan not found in this namespace (is dirigo running?)"
    echo "$wan $lan" >"$LAB_STATE_DIR/attached"
    local cl=$LAB_NS_CLIENT srv=$LAB_NS_SRV
    lab__x ip link set dev "$wan" netns "$cl"
    lab__x ip link set dev "$lan" netns "$srv"
    [[ -n ${LAB_WAN_MTU:-} ]] && lab__x ip -n "$cl" link set dev "$wan" mtu "$LAB_WAN_MTU"
    # net_tap gives the kernel side of a tap the SAME MAC as the DPDK port.
    # Two stations with one MAC breaks the LAN side (br0 keeps a port's own MAC
    # as a local fdb entry and would swallow frames meant for dirigo), so the
    # kernel sides get their own MACs; dirigo keeps its port MACs.
    if [[ ${LAB_TAP_MAC_REWRITE:-1} == 1 ]]; then
        lab__x ip -n "$cl" link set dev "$wan" address "$LAB_CLIENT_MAC"
        lab__x ip -n "$srv" link set dev "$lan" address "$LAB_LANPORT_MAC"
    fi
    local wdev=$wan
    if [[ ${LAB_WAN_BRIDGE:-0} == 1 ]]; then
        # no address given to the bridge: it takes its port's MAC, as Linux
        # bridges do
        wdev=brw
        lab__x ip -n "$cl" link add brw type bridge
        lab__x ip -n "$cl" link set dev "$wan" master brw
        lab__x ip -n "$cl" link set dev brw up
        lab__sysctl "$cl" net.ipv4.conf.brw.rp_filter 0
    fi
    lab__x ip -n "$cl" addr add "$LAB_CLIENT_IP/24" dev "$wdev"
    lab__x ip -n "$cl" link set dev "$wan" up
    lab__sysctl "$cl" "net.ipv4.conf.$wan.rp_filter" 0
    lab__sysctl "$cl" net.ipv4.conf.ret0.rp_filter 0
    [[ -n ${LAB_LAN_MTU:-} ]] && lab__x ip -n "$srv" link set dev "$lan" mtu "$LAB_LAN_MTU"
    lab__x ip -n "$srv" link set dev "$lan" master br0
    lab__x ip -n "$srv" link set dev "$lan" up
    if [[ -f $LAB_STATE_DIR/standin ]]; then
        # shellcheck source=standin.sh
        source "$LAB_DIR/standin.sh"
        lab_standin_post_attach
    fi
    lab__log "attached: $wan -> $cl ($LAB_CLIENT_IP/24), $lan -> $srv:br0"
}

# Undo phase 2: hand the taps back to this namespace if they still exist (a
# tap whose dirigo exited is already gone). After a dirigo restart: lab_detach,
# start dirigo, lab_attach again.
lab_detach() {
    lab_config
    local wan lan
    [[ -f $LAB_STATE_DIR/attached ]] || return 0
    read -r wan lan <"$LAB_STATE_DIR/attached"
    ip -n "$LAB_NS_CLIENT" link set dev "$wan" nomaster 2>/dev/null
    ip -n "$LAB_NS_CLIENT" link set dev "$wan" netns $$ 2>/dev/null
    ip -n "$LAB_NS_CLIENT" link del brw 2>/dev/null
    ip -n "$LAB_NS_SRV" link set dev "$lan" nomaster 2>/dev/null
    ip -n "$LAB_NS_SRV" link set dev "$lan" netns $$ 2>/dev/null
    rm -f "$LAB_STATE_DIR/attached"
    return 0
}

# ---------------------------------------------------------------- teardown

lab__our_netns() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$LAB_PREFIX-(client|srv|dir|rs[0-9]+)$"
}

# Remove every namespace, veth, bridge and process this lab created.
# Idempotent; works without the state directory too (by names).
lab_down() {
    lab_config
    local f name ns pid wan lan
    # 1. our programs, by recorded pid
    if [[ -d $LAB_STATE_DIR ]]; then
        for f in "$LAB_STATE_DIR"/*.pid "$LAB_STATE_DIR"/*.spawn; do
            [[ -e $f ]] || continue
            name=${f##*/}
            lab__stop "${name%.*}"
        done
    fi
    # 2. give dirigo's taps back to this namespace (deleting a namespace would
    #    destroy a tap that dirigo still holds)
    lab_detach
    # 3. anything still running inside our namespaces, then the namespaces
    #    (their veths and bridges go with them)
    local left=0
    for ns in $(lab__our_netns); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -TERM "$pid" 2>/dev/null && left=1
        done
    done
    ((left)) && sleep 0.5
    for ns in $(lab__our_netns); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null || lab__log "warning: could not delete namespace $ns"
    done
    # 4. stand-in veths in this namespace (never a real tap: only type veth)
    for f in "$LAB_PREFIX-wan" "$LAB_PREFIX-lan"; do
        if ip -d link show dev "$f" 2>/dev/null | grep -qw veth; then
            ip link del dev "$f" 2>/dev/null
        fi
    done
    rm -rf "$LAB_STATE_DIR"
    return 0
}

# Tear the lab down when the calling script exits, fails or is interrupted.
lab_trap_teardown() {
    trap 'lab_down' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

lab_trap_clear() { trap - EXIT INT TERM; }

# ---------------------------------------------------------------- info

# dirigo's two [[port]] sections for the lab (net_tap0 = WAN, net_tap1 = LAN,
# as in --vdev=net_tap0,iface=$LAB_WAN_IF --vdev=net_tap1,iface=$LAB_LAN_IF).
lab_ports_toml() {
    lab_config
    printf '[[port]]\nname = "wan"\ndevice = "net_tap0"\naddresses = ["%s/24"]\n\n' "$LAB_DIRIGO_WAN_IP"
    printf '[[port]]\nname = "lan"\ndevice = "net_tap1"\naddresses = ["%s/24"]\n' "$LAB_DIRIGO_LAN_IP"
}

lab_env() {
    lab_config
    local v
    for v in LAB_PREFIX LAB_CLIENT_NET LAB_SERVER_NET LAB_RETURN_NET LAB_VIP LAB_NRS \
        LAB_HTTP_PORT LAB_UDP_PORT LAB_BLOB_SIZE LAB_STATE_DIR LAB_WAN_IF LAB_LAN_IF \
        LAB_NS_CLIENT LAB_NS_SRV LAB_NS_DIR LAB_CLIENT_IP LAB_DIRIGO_WAN_IP LAB_DIRIGO_LAN_IP \
        LAB_ROUTER_LAN_IP LAB_ROUTER_RET_IP LAB_CLIENT_RET_IP LAB_CLIENT_MAC LAB_LANPORT_MAC LAB_ROUTER_MAC; do
        printf 'export %s=%q\n' "$v" "${!v}"
    done
    printf 'export LAB_RS_IPS=%q\n' "${LAB_RS_IPS[*]}"
    printf 'export LAB_RS_NS=%q\n' "${LAB_RS_NS[*]}"
    printf 'export LAB_RS_MACS=%q\n' "${LAB_RS_MACS[*]}"
}

lab_status() {
    lab_config
    local ns name f pid
    echo "lab $LAB_PREFIX: state $LAB_STATE_DIR $([[ -d $LAB_STATE_DIR ]] && echo present || echo absent)"
    [[ -f $LAB_STATE_DIR/mode ]] && echo "mode: $(<"$LAB_STATE_DIR/mode")"
    [[ -f $LAB_STATE_DIR/attached ]] && echo "attached: $(<"$LAB_STATE_DIR/attached")"
    for ns in $(lab__our_netns); do
        echo "== $ns"
        ip -n "$ns" -br addr 2>/dev/null | sed 's/^/   /'
        ip -n "$ns" route 2>/dev/null | sed 's/^/   route /'
    done
    if [[ -d $LAB_STATE_DIR ]]; then
        for f in "$LAB_STATE_DIR"/*.pid; do
            [[ -e $f ]] || continue
            name=${f##*/}
            pid=$(<"$f")
            if lab__alive "$pid"; then echo "proc ${name%.pid} pid $pid alive"; else echo "proc ${name%.pid} pid $pid DEAD"; fi
        done
    fi
}

# ---------------------------------------------------------------- CLI

lab_main() {
    local cmd=${1:-help}
    shift || true
    case $cmd in
    help | -h | --help)
        sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        return 0
        ;;
    env)
        lab_env
        return 0
        ;;
    ports-toml)
        lab_ports_toml
        return 0
        ;;
    esac
    lab_require_root "$cmd"
    case $cmd in
    up)
        # roll back on failure or signal; leave the lab running on success
        lab_config
        lab__check_absent
        lab_trap_teardown
        lab_up "$@"
        lab_trap_clear
        ;;
    attach) lab_attach "$@" ;;
    detach) lab_detach ;;
    mode) lab_mode "$@" ;;
    http-stop)
        lab_config
        lab__stop "rs${1:?usage: lab.sh http-stop N}-http"
        ;;
    http-start)
        lab_config
        lab__http "${1:?usage: lab.sh http-start N}"
        ;;
    standin)
        # shellcheck source=standin.sh
        source "$LAB_DIR/standin.sh"
        lab_standin "$@"
        ;;
    down) lab_down ;;
    status) lab_status ;;
    exec)
        lab_config
        lab_in "$@"
        ;;
    *)
        echo "lab.sh: unknown command '$cmd' (try: lab.sh help)" >&2
        return 2
        ;;
    esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -uo pipefail
    lab_main "$@"
fi
