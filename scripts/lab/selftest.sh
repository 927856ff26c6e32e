#!/usr/bin/env bash
# Self-test of the dirigo netns lab, using the stand-in director (no dirigo).
# Runs unattended as root, bounded by SELFTEST_TIMEOUT (default 300 s), prints
# every check, exits 0 only when every check passes.
#
#   sudo scripts/lab/selftest.sh            # all modes + lifecycle checks
#   SELFTEST_MODES="dr" scripts/lab/selftest.sh
#
# Uses prefixes dlst (main), dlsa/dlsb (two labs side by side), dlsk (signal
# teardown), dlsr (rollback), dlsp (real net_tap ports from dpdk-testpmd, when
# installed; SELFTEST_TESTPMD=0 skips, =1 requires); a lab left over from an
# aborted run is removed first.

set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lab.sh
source "$HERE/lab.sh"
# shellcheck source=standin.sh
source "$HERE/standin.sh"
lab_require_root
export LAB_BLOB_SIZE=${LAB_BLOB_SIZE:-2000003} # not a multiple of the 32-byte block
LAB_PYTHON=${LAB_PYTHON:-python3}
SUP=$LAB_SUPPORT
MODES=${SELFTEST_MODES:-dr tun nat}
LIMIT=${SELFTEST_TIMEOUT:-300}
ALL_PREFIXES="dlst dlsa dlsb dlsk dlsr dlsp"
TMP=$(mktemp -d /tmp/dirigo-lab-selftest.XXXXXX)
PASS=0
FAIL=0
FAILED=()

cleanup_all() {
    local p
    for p in $ALL_PREFIXES; do (LAB_PREFIX=$p lab_down); done
}

finish() {
    local rc=$?
    [[ -n ${WD:-} ]] && kill "$WD" 2>/dev/null
    cleanup_all
    rm -rf "$TMP"
    echo "-------------------------------------------"
    echo "selftest: $PASS passed, $FAIL failed"
    for f in "${FAILED[@]}"; do echo "  FAILED: $f"; done
    if ((FAIL == 0 && PASS > 0 && rc == 0)); then exit 0; fi
    exit 1
}
trap finish EXIT
trap 'echo "selftest: interrupted"; exit 130' INT
trap 'echo "selftest: terminated (timeout ${LIMIT}s?)"; exit 143' TERM
(
    # the sleep must not hold our stdout open (a pipe reader would wait for it)
    sleep "$LIMIT" </dev/null >/dev/null 2>&1 &
    sp=$!
    trap 'kill "$sp" 2>/dev/null; exit 0' TERM
    wait "$sp"
    echo "selftest: TIMEOUT after ${LIMIT}s" >&2
    kill -TERM $$
) &
WD=$!

pass() {
    PASS=$((PASS + 1))
    echo "PASS  $1"
}
fail() {
    FAIL=$((FAIL + 1))
    FAILED+=("$1")
    echo "FAIL  $1${2:+ -- $2}"
}
# check NAME CMD... : passes when CMD exits 0
check() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -3 | tr '\n' ' ')"; fi
}
# expect NAME EXPECTED ACTUAL
expect() {
    if [[ $2 == "$3" ]]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}
# expect_re NAME REGEX ACTUAL
expect_re() {
    if [[ $3 =~ $2 ]]; then pass "$1"; else fail "$1" "'$3' !~ /$2/"; fi
}

in_ns() { ip netns exec "$LAB_PREFIX-$1" "${@:2}"; }
rx() { in_ns client cat "/sys/class/net/$1/statistics/rx_bytes"; }
sysctl_in() { in_ns "$1" cat "/proc/sys/${2//.//}"; }
http() { in_ns "$1" curl -sS --max-time 10 "${@:2}"; }

# Everything the self-test's labs could leave behind, to compare before/after
# (only our prefixes: other users of this machine may add or remove their own).
snapshot() {
    {
        ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^dls[a-z]-' | sort
        echo "--netns"
        ip netns list | awk '{print $1}' | grep -E '^dls[a-z]-' | sort
        echo "--procs"
        pgrep -f "$SUP/" | sort
    } 2>/dev/null
}

check_gone() { # PREFIX LABEL
    local p=$1
    expect "$2: no namespaces left" "" "$(ip netns list | awk '{print $1}' | grep -E "^$p-" | tr '\n' ' ')"
    expect "$2: no stand-in veths left" "" "$(ip -o link show type veth | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^$p-(wan|lan)$" | tr '\n' ' ')"
    expect "$2: state dir removed" "absent" "$([[ -e /run/dirigo-lab/$p ]] && echo present || echo absent)"
}

blob_sha_expected=$("$LAB_PYTHON" "$SUP/labutil.py" blob-sha256 "$LAB_BLOB_SIZE")
head -c 1000001 /dev/urandom >"$TMP/upload.bin"
upload_sha=$(sha256sum "$TMP/upload.bin" | cut -d' ' -f1)

export LAB_PREFIX=dlst
lab_config
echo "== selftest: modes [$MODES], limit ${LIMIT}s, blob $LAB_BLOB_SIZE bytes"
cleanup_all
BASELINE=$(snapshot)

# ---------------------------------------------------------------- per mode
run_mode() {
    local mode=$1 i rip out before after wan_before wan_after vip=$LAB_VIP
    echo "== mode $mode"
    lab_config
    if ! (lab_up "$mode") || ! (lab_standin) || ! (lab_attach "$LAB_WAN_IF" "$LAB_LAN_IF"); then
        fail "$mode: lab up + stand-in + attach"
        (lab_down)
        return
    fi
    pass "$mode: lab up + stand-in + attach"
    local ns_list
    ns_list=$(ip netns list | awk '{print $1}' | grep -E "^$LAB_PREFIX-" | sort | tr '\n' ' ')
    expect "$mode: namespaces" "$LAB_PREFIX-client $LAB_PREFIX-dir $LAB_PREFIX-rs1 $LAB_PREFIX-rs2 $LAB_PREFIX-rs3 $LAB_PREFIX-srv " "$ns_list"
    expect "$mode: WAN tap in client with client address" "$LAB_WAN_IF UP $LAB_CLIENT_IP/24" \
        "$(ip -n "$LAB_NS_CLIENT" -br addr show dev "$LAB_WAN_IF" | awk '{sub(/@.*/,"",$1); print $1, $2, $3}')"
    expect "$mode: LAN tap on br0" "br0" \
        "$(ip -n "$LAB_NS_SRV" -o link show dev "$LAB_LAN_IF" | grep -o 'master [^ ]*' | cut -d' ' -f2)"

    # every real server answers directly on its RIP (from the switch namespace)
    for ((i = 1; i <= LAB_NRS; i++)); do
        rip=${LAB_RS_IPS[i - 1]}
        expect "$mode: rs$i HTTP / on $rip" "rs$i" "$(http srv "http://$rip:$LAB_HTTP_PORT/")"
        out=$(in_ns srv "$LAB_PYTHON" "$SUP/udp_probe.py" "$rip" "$LAB_UDP_PORT" --payload hello)
        expect "$mode: rs$i UDP echo on $rip" "reply=rs$i:hello from=$rip:$LAB_UDP_PORT iface=br0" "$out"
        out=$(in_ns srv "$LAB_PYTHON" "$SUP/arp_probe.py" br0 "$rip" --sender-ip "$LAB_ROUTER_LAN_IP")
        expect "$mode: rs$i answers ARP for its RIP with its fixed MAC" "reply $rip is-at ${LAB_RS_MACS[i - 1]}" "$out"
    done
    out=$(http srv -D "$TMP/h" "http://${LAB_RS_IPS[0]}:$LAB_HTTP_PORT/blob" | sha256sum | cut -d' ' -f1)
    expect "$mode: rs1 /blob sha256 (direct)" "$blob_sha_expected" "$out"
    expect "$mode: rs1 /blob X-Sha256 header" "$blob_sha_expected" "$(grep -i '^x-sha256:' "$TMP/h" | awk '{print $2}' | tr -d '\r')"
    expect "$mode: rs2 /upload sha256 (direct)" "rs2 $upload_sha 1000001" \
        "$(http srv --data-binary @"$TMP/upload.bin" "http://${LAB_RS_IPS[1]}:$LAB_HTTP_PORT/upload")"

    case $mode in
    dr | tun)
        for ((i = 1; i <= LAB_NRS; i++)); do
            expect "$mode: rs$i arp_ignore=1 arp_announce=2 rp_filter=0" "1 2 0" \
                "$(sysctl_in "rs$i" net.ipv4.conf.all.arp_ignore) $(sysctl_in "rs$i" net.ipv4.conf.all.arp_announce) $(sysctl_in "rs$i" net.ipv4.conf.all.rp_filter)"
            expect "$mode: rs$i default route via return router" "default via $LAB_ROUTER_LAN_IP dev eth0" "$(ip -n "$LAB_PREFIX-rs$i" route show default | sed 's/ *$//')"
            if [[ $mode == dr ]]; then
                expect "$mode: rs$i VIP/32 on lo" "$vip/32" "$(ip -n "$LAB_PREFIX-rs$i" -o -4 addr show dev lo | awk '{print $4}' | grep -F "$vip/32")"
            else
                expect "$mode: rs$i VIP/32 on TUN vip0 (decapsulator)" "$vip/32" "$(ip -n "$LAB_PREFIX-rs$i" -o -4 addr show dev vip0 | awk '{print $4}')"
            fi
        done
        if in_ns srv "$LAB_PYTHON" "$SUP/arp_probe.py" br0 "$vip" --sender-ip "$LAB_ROUTER_LAN_IP" >/dev/null; then
            fail "$mode: no RS answers ARP for the VIP on the LAN"
        else
            pass "$mode: no RS answers ARP for the VIP on the LAN"
        fi
        before=$(rx ret0)
        wan_before=$(rx "$LAB_WAN_IF")
        out=$(http client "http://$vip:$LAB_HTTP_PORT/whoami")
        if [[ $mode == dr ]]; then
            expect_re "$mode: client -> VIP reaches rs1, RS sees VIP and client address" "^rs1 local=$vip:$LAB_HTTP_PORT peer=$LAB_CLIENT_IP:[0-9]+$" "$out"
        else
            expect_re "$mode: client -> VIP reaches an RS, RS sees VIP and client address" "^rs[1-3] local=$vip:$LAB_HTTP_PORT peer=$LAB_CLIENT_IP:[0-9]+$" "$out"
        fi
        out=$(http client "http://$vip:$LAB_HTTP_PORT/blob" | sha256sum | cut -d' ' -f1)
        expect "$mode: /blob via VIP (reply over the return path) sha256" "$blob_sha_expected" "$out"
        out=$(http client --data-binary @"$TMP/upload.bin" "http://$vip:$LAB_HTTP_PORT/upload")
        expect_re "$mode: /upload via VIP sha256" "^rs[1-3] $upload_sha 1000001$" "$out"
        after=$(rx ret0)
        wan_after=$(rx "$LAB_WAN_IF")
        expect_re "$mode: replies arrived on ret0 (>= blob size, got $((after - before)) bytes)" '^ok$' "$( ((after - before >= LAB_BLOB_SIZE)) && echo ok)"
        expect_re "$mode: WAN carried no replies (< 4000 bytes, got $((wan_after - wan_before)))" '^ok$' "$( ((wan_after - wan_before < 4000)) && echo ok)"
        out=$(in_ns client "$LAB_PYTHON" "$SUP/udp_probe.py" "$vip" "$LAB_UDP_PORT" --payload p --count 4 | sort -u |
            sed -E 's/^reply=rs[1-3]:p[0-9]+ /reply=rsN:pK /' | sort -u)
        expect "$mode: UDP via VIP: reply from VIP over ret0" "reply=rsN:pK from=$vip:$LAB_UDP_PORT iface=ret0" "$out"
        if [[ $mode == tun ]]; then
            check "$mode: decapsulator delivered IPIP packets" grep -q "decap #1 outer $LAB_DIRIGO_LAN_IP->" "$LAB_STATE_DIR"/rs*-decap.log
            local names=""
            for i in 1 2 3 4 5 6 7 8; do names+=$(http client "http://$vip:$LAB_HTTP_PORT/")" "; done
            echo "      (tun: 8 connections landed on: $names)"
            # mode "all": DR+TUN+NAT on the same RS set; VIP replies still use the return path
            if (lab_mode all) >/dev/null 2>&1; then pass "all: switch real servers to mode all"; else fail "all: switch real servers to mode all"; fi
            expect "all: rs1 default via dirigo, VIP-sourced via router (table 100)" \
                "default via $LAB_DIRIGO_LAN_IP dev eth0|default via $LAB_ROUTER_LAN_IP dev eth0|from $vip lookup 100" \
                "$(ip -n "$LAB_PREFIX-rs1" route show default | sed 's/ *$//')|$(ip -n "$LAB_PREFIX-rs1" route show table 100 | sed 's/ *$//')|$(ip -n "$LAB_PREFIX-rs1" rule show | grep -o "from $vip lookup 100")"
            before=$(rx ret0)
            out=$(http client "http://$vip:$LAB_HTTP_PORT/blob" | sha256sum | cut -d' ' -f1)
            expect "all: /blob via VIP (TUN) sha256" "$blob_sha_expected" "$out"
            after=$(rx ret0)
            expect_re "all: VIP replies still on ret0 ($((after - before)) bytes)" '^ok$' "$( ((after - before >= LAB_BLOB_SIZE)) && echo ok)"
            out=$(in_ns srv "$LAB_PYTHON" "$SUP/udp_probe.py" "${LAB_RS_IPS[1]}" "$LAB_UDP_PORT" --payload q)
            expect "all: RIP-sourced replies still work on the LAN" "reply=rs2:q from=${LAB_RS_IPS[1]}:$LAB_UDP_PORT iface=br0" "$out"
            check "all: decapsulators running after mode switch" test -s "$LAB_STATE_DIR/rs3-decap.ready"
        fi
        ;;
    nat)
        expect "$mode: switch namespace does not forward (return path off)" "0" "$(sysctl_in srv net.ipv4.ip_forward)"
        for ((i = 1; i <= LAB_NRS; i++)); do
            expect "$mode: rs$i default route via dirigo LAN address" "default via $LAB_DIRIGO_LAN_IP dev eth0" "$(ip -n "$LAB_PREFIX-rs$i" route show default | sed 's/ *$//')"
            expect "$mode: rs$i holds no VIP" "" "$(ip -n "$LAB_PREFIX-rs$i" -o -4 addr show | grep -F " $vip/" )"
        done
        before=$(rx ret0)
        wan_before=$(rx "$LAB_WAN_IF")
        for ((i = 1; i <= LAB_NRS; i++)); do
            rip=${LAB_RS_IPS[i - 1]}
            out=$(http client "http://$rip:$LAB_HTTP_PORT/whoami")
            expect_re "$mode: client -> rs$i via director, RS sees client address" "^rs$i local=$rip:$LAB_HTTP_PORT peer=$LAB_CLIENT_IP:[0-9]+$" "$out"
            out=$(in_ns client "$LAB_PYTHON" "$SUP/udp_probe.py" "$rip" "$LAB_UDP_PORT" --payload n)
            expect "$mode: UDP rs$i reply via director (WAN)" "reply=rs$i:n from=$rip:$LAB_UDP_PORT iface=$LAB_WAN_IF" "$out"
        done
        out=$(http client "http://${LAB_RS_IPS[2]}:$LAB_HTTP_PORT/blob" | sha256sum | cut -d' ' -f1)
        expect "$mode: /blob from rs3 through director sha256" "$blob_sha_expected" "$out"
        after=$(rx ret0)
        wan_after=$(rx "$LAB_WAN_IF")
        expect "$mode: return path unused (ret0 rx bytes delta)" "0" "$((after - before))"
        expect_re "$mode: replies came over WAN (>= blob size, got $((wan_after - wan_before)) bytes)" '^ok$' "$( ((wan_after - wan_before >= LAB_BLOB_SIZE)) && echo ok)"
        ;;
    esac

    local pids
    pids=$(cat "$LAB_STATE_DIR"/*.pid 2>/dev/null | tr '\n' ' ')
    check "$mode: lab_down" lab_down
    check_gone "$LAB_PREFIX" "$mode"
    local alive=""
    for p in $pids; do lab__alive "$p" && alive+="$p "; done
    expect "$mode: lab processes stopped" "" "$alive"
    expect "$mode: root namespace back to baseline" "$BASELINE" "$(snapshot)"
}

# Run "$@" in a subshell, so that a lab__die inside cannot end the
# self-test, and carry its PASS/FAIL counts and failures back; $1 names the
# section when it aborts.
isolated() { # name, command...
    local name=$1
    shift
    (
        "$@"
        echo "$PASS $FAIL" >"$TMP/counts"
        printf '%s\n' "${FAILED[@]}" >"$TMP/failed"
    )
    if [[ -f $TMP/counts ]]; then
        read -r PASS FAIL <"$TMP/counts"
        mapfile -t FAILED < <(grep -v '^$' "$TMP/failed")
        rm -f "$TMP/counts" "$TMP/failed"
    else
        fail "$name aborted"
    fi
}

for m in $MODES; do
    isolated "mode $m:" run_mode "$m"
    (LAB_PREFIX=dlst lab_down)
done

# ---------------------------------------------------------------- lifecycle
echo "== lifecycle"
check "down is idempotent (1st, nothing up)" env LAB_PREFIX=dlst "$HERE/lab.sh" down
check "down is idempotent (2nd)" env LAB_PREFIX=dlst "$HERE/lab.sh" down

out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$HERE/lab.sh" status 2>&1)
rc=$?
expect_re "refuses to run when not root (rc=$rc)" "must run as root" "$( ((rc != 0)) && echo "$out")"

out=$(LAB_PREFIX=dlsr LAB_SUPPORT=/nonexistent "$HERE/lab.sh" up dr 2>&1)
rc=$?
expect "failed 'up' exits non-zero" "1" "$rc"
check_gone dlsr "failed 'up' rolled back"

# signal: a script using the library with lab_trap_teardown, killed by SIGTERM
LAB_PREFIX=dlsk setsid bash -c "source '$HERE/lab.sh'; lab_trap_teardown; lab_up dr >/dev/null 2>&1; touch '$TMP/k-ready'; sleep 60 & wait \$!" &
kpid=$!
for ((i = 0; i < 150; i++)); do [[ -e $TMP/k-ready ]] && break; sleep 0.1; done
expect "signal test: lab came up" "yes" "$([[ -e $TMP/k-ready ]] && ip netns list | grep -q '^dlsk-client' && echo yes)"
kill -TERM "$kpid"
wait "$kpid"
check_gone dlsk "SIGTERM teardown"

# real DPDK net_tap ports (dpdk-testpmd, io forwarding WAN<->LAN) in place of dirigo
run_testpmd() {
    echo "== real net_tap ports (dpdk-testpmd io forwarding), prefix dlsp"
    local p=dlsp tp sp ymac i rp out
    export LAB_PREFIX=$p
    lab_config
    if ! (lab_up dr) >/dev/null 2>&1; then
        fail "testpmd: lab up"
        return
    fi
    # bounded: testpmd leaves when its stdin closes (sleep) or timeout hits
    sleep 30 </dev/null 2>/dev/null | timeout 40 dpdk-testpmd --no-huge -m 512 --no-pci --file-prefix="lab-$p" -l 0-1 \
        --vdev="net_tap0,iface=$p-wan" --vdev="net_tap1,iface=$p-lan" -- \
        --forward-mode=io --auto-start --no-mlockall --total-num-mbufs=4096 >"$TMP/testpmd.log" 2>&1 &
    tp=$!               # timeout (testpmd's parent)
    sp=$(jobs -p %%)    # the sleep feeding testpmd's stdin
    for ((i = 0; i < 100; i++)); do ip link show "$p-lan" >/dev/null 2>&1 && break; sleep 0.1; done
    ymac=$(cat "/sys/class/net/$p-lan/address" 2>/dev/null)
    check "testpmd: attach real taps" lab_attach "$p-wan" "$p-lan"
    ((FAIL)) && sed 's/^/      testpmd| /' "$TMP/testpmd.log" | tail -15
    expect "testpmd: WAN tap kernel MAC rewritten" "$LAB_CLIENT_MAC" "$(ip netns exec "$p-client" cat "/sys/class/net/$p-wan/address")"
    out=$(in_ns client "$LAB_PYTHON" "$SUP/arp_probe.py" "$p-wan" "${LAB_RS_IPS[0]}" --sender-ip "$LAB_CLIENT_IP")
    expect_re "testpmd: ARP client->rs1 through both taps" "^reply ${LAB_RS_IPS[0]} is-at " "$out"
    rm -f "$TMP/eth-ready"
    in_ns client "$LAB_PYTHON" "$SUP/eth_probe.py" recv "$p-wan" tag42 --timeout 3 --ready-file "$TMP/eth-ready" >"$TMP/eth.out" 2>&1 &
    rp=$!
    for ((i = 0; i < 50; i++)); do [[ -e $TMP/eth-ready ]] && break; sleep 0.1; done
    in_ns rs1 "$LAB_PYTHON" "$SUP/eth_probe.py" send eth0 "$ymac" tag42
    wait "$rp"
    expect_re "testpmd: frame rs1 -> DPDK LAN port MAC ($ymac) crosses br0 into the tap" "^got tag42 .*dst=$ymac" "$(cat "$TMP/eth.out")"
    check "testpmd: detach" lab_detach
    expect "testpmd: taps back here after detach" "yes yes" \
        "$(ip link show "$p-wan" >/dev/null 2>&1 && echo yes) $(ip link show "$p-lan" >/dev/null 2>&1 && echo yes)"
    check "testpmd: re-attach" lab_attach "$p-wan" "$p-lan"
    out=$(in_ns client "$LAB_PYTHON" "$SUP/arp_probe.py" "$p-wan" "${LAB_RS_IPS[1]}" --sender-ip "$LAB_CLIENT_IP")
    expect "testpmd: ARP client->rs2 after re-attach" "reply ${LAB_RS_IPS[1]} is-at ${LAB_RS_MACS[1]}" "$out"
    check "testpmd: lab_down" lab_down
    check_gone "$p" "testpmd"
    expect "testpmd: taps handed back to this namespace, testpmd alive" "yes yes yes" \
        "$(ip link show "$p-wan" >/dev/null 2>&1 && echo yes) $(ip link show "$p-lan" >/dev/null 2>&1 && echo yes) $(kill -0 "$tp" 2>/dev/null && echo yes)"
    # testpmd exits when its stdin reaches EOF: end the sleep feeding it
    [[ $sp =~ ^[0-9]+$ ]] && kill -TERM "$sp" 2>/dev/null
    for ((i = 0; i < 50; i++)); do kill -0 "$tp" 2>/dev/null || break; sleep 0.1; done
    kill -TERM "$tp" 2>/dev/null
    wait "$tp" 2>/dev/null
    expect "testpmd: taps gone with testpmd" "" "$(ip -o link show | grep -oE "$p-(wan|lan)" | tr '\n' ' ')"
    export LAB_PREFIX=dlst
    lab_config
}
if [[ ${SELFTEST_TESTPMD:-auto} != 0 ]] && command -v dpdk-testpmd >/dev/null; then
    isolated "testpmd section" run_testpmd
    (LAB_PREFIX=dlsp lab_down)
elif [[ ${SELFTEST_TESTPMD:-auto} == 1 ]]; then
    fail "testpmd: dpdk-testpmd not installed"
else
    echo "(skipping real net_tap check: dpdk-testpmd not installed or SELFTEST_TESTPMD=0)"
fi

# two labs side by side
echo "== two labs side by side (dlsa, dlsb)"
ok=1
for p in dlsa dlsb; do
    (export LAB_PREFIX=$p && lab_up dr && lab_standin && lab_attach) >/dev/null 2>&1 || ok=0
done
expect "two labs up" "1" "$ok"
out=$(LAB_PREFIX=dlsa "$HERE/lab.sh" up dr 2>&1)
expect_re "second 'up' of an existing lab refused" "already exists" "$out"
for p in dlsa dlsb; do
    expect "lab $p serves VIP" "rs1" "$(ip netns exec "$p-client" curl -sS --max-time 5 "http://$LAB_VIP/")"
done
(LAB_PREFIX=dlsa lab_down)
check_gone dlsa "dlsa down"
expect "dlsb still serves after dlsa down" "rs1" "$(ip netns exec dlsb-client curl -sS --max-time 5 "http://$LAB_VIP/")"
(LAB_PREFIX=dlsb lab_down)
check_gone dlsb "dlsb down"
expect "root namespace back to baseline at the end" "$BASELINE" "$(snapshot)"
