#!/usr/bin/env bash
# Self-test of the IPv6-in-IPv6 lab tools, without dirigo: ip6ip6_decap.py
# (the IPv6 TUN-mode real server's side) and ip6ip6_encap.py (test sender and
# stand-in director). Runs unattended as root, bounded by SELFTEST_TIMEOUT
# (default 60 s), prints every check, exits 0 only when every check passes.
#
#   sudo tests/support/ip6ip6_selftest.sh
#
# Two namespaces PREFIX-c (client, 2001:db8:e::1/64) and PREFIX-r (real
# server, 2001:db8:e::2/64 and 2001:db8:e::3/128) joined by a veth pair; both
# start with IPv6 off on "all" and "default" (so on lo too) as lab.sh leaves a
# namespace, and only the veth ends get it back. PREFIX is IP6IP6_PREFIX (default i6t<pid>).
# The checks:
#   1. without the decapsulator the real server's kernel answers next header
#      41 with ICMPv6 parameter problem (type 4 code 1): nothing handles it;
#   2. with it (VIP 2001:db8:f::10 on TUN vip6, --local 2001:db8:e::2),
#      encapsulated UDP datagrams to the VIP are answered by a UDP echo bound
#      to the VIP, straight to the client (source VIP), and no ICMPv6 error;
#   3. encapsulated TCP SYNs to the VIP are answered with SYN/ACKs (port 80)
#      and RST/ACK (a closed port);
#   4. an outer destination other than --local (2001:db8:e::3) is dropped;
#   5. a real kernel TCP client connects to the VIP through the stand-in
#      director (TUN enc6 in the client, route VIP/128 into it): 1 MB up
#      (outer packets bigger than the veth MTU: fragmented and reassembled),
#      1 MB down (straight from the real server), sha256 both ways;
#   6. SIGTERM: both tools exit 0, remove their ready files, log their counts
#      and their TUN devices disappear.

set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${LAB_PYTHON:-python3}
LIMIT=${SELFTEST_TIMEOUT:-60}
P=${IP6IP6_PREFIX:-i6t$$}
C=$P-c
R=$P-r
CL=2001:db8:e::1
RIP=2001:db8:e::2
RIP_OTHER=2001:db8:e::3
VIP=2001:db8:f::10
PASS=0
FAIL=0
FAILED=()
PIDS=()

if [[ $(id -u) != 0 ]]; then
    echo "ip6ip6_selftest: needs root (network namespaces, raw sockets, TUN)" >&2
    exit 2
fi
if [[ ! -e /proc/sys/net/ipv6 ]]; then
    echo "ip6ip6_selftest: this kernel has no IPv6" >&2
    exit 2
fi
TMP=$(mktemp -d /tmp/ip6ip6-selftest.XXXXXX)

finish() {
    local rc=$? pid
    [[ -n ${WD:-} ]] && kill "$WD" 2>/dev/null
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    ip netns del "$C" 2>/dev/null
    ip netns del "$R" 2>/dev/null
    if ((FAIL > 0)) || ((rc != 0)); then
        for f in "$TMP"/*.log; do
            [[ -s $f ]] || continue
            echo "--- $(basename "$f")"
            tail -n 20 "$f"
        done
    fi
    rm -rf "$TMP"
    echo "-------------------------------------------"
    echo "ip6ip6_selftest: $PASS passed, $FAIL failed"
    for f in "${FAILED[@]}"; do echo "  FAILED: $f"; done
    if ((FAIL == 0 && PASS > 0 && rc == 0)); then exit 0; fi
    exit 1
}
trap finish EXIT
trap 'echo "ip6ip6_selftest: interrupted"; exit 130' INT
trap 'echo "ip6ip6_selftest: terminated (timeout ${LIMIT}s?)"; exit 143' TERM
(
    # the sleep must not hold our stdout open (a pipe reader would wait for it)
    sleep "$LIMIT" </dev/null >/dev/null 2>&1 &
    sp=$!
    trap 'kill "$sp" 2>/dev/null; exit 0' TERM
    wait "$sp"
    echo "ip6ip6_selftest: TIMEOUT after ${LIMIT}s" >&2
    kill -TERM $$
) &
WD=$!

ok() { echo "PASS: $1"; PASS=$((PASS + 1)); }
ko() { echo "FAIL: $1${2:+ ($2)}"; FAIL=$((FAIL + 1)); FAILED+=("$1"); }
# check DESC CMD...: pass when CMD succeeds
check() {
    local d=$1
    shift
    if "$@"; then ok "$d"; else ko "$d"; fi
}
die() { echo "ip6ip6_selftest: $*" >&2; exit 1; }
x() { "$@" || die "failed: $*"; }
sysctl_ns() { ip netns exec "$1" sh -c "echo $3 > /proc/sys/${2//.//}" || die "sysctl $2=$3 in $1"; }
# wait_file FILE SECS
wait_file() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [[ -s $1 ]] && return 0
        sleep 0.1
    done
    return 1
}
# gone NS DEV SECS: the device disappeared
gone() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        ip -n "$1" link show dev "$2" >/dev/null 2>&1 || return 0
        sleep 0.1
    done
    return 1
}
# spawn NS NAME CMD...: run in the background (bounded), remember its pid
spawn() {
    local ns=$1 name=$2
    shift 2
    ip netns exec "$ns" timeout -s TERM "$LIMIT" "$@" </dev/null >>"$TMP/$name.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$name=$!"
}
encap_send() { # NS ARGS...: one-shot sender, output in $TMP/send.log
    local ns=$1
    shift
    ip netns exec "$ns" timeout 10 "$PY" -B "$HERE/ip6ip6_encap.py" --src "$CL" --dst "$VIP" "$@" >"$TMP/send.log" 2>&1
}

# ------------------------------------------------------------------ setup
for ns in "$C" "$R"; do
    ip netns del "$ns" 2>/dev/null
    x ip netns add "$ns"
    x ip -n "$ns" link set lo up
    # as lab.sh leaves a namespace: IPv6 off everywhere
    sysctl_ns "$ns" net.ipv6.conf.all.disable_ipv6 1
    sysctl_ns "$ns" net.ipv6.conf.default.disable_ipv6 1
done
x ip link add "$P-c0" netns "$C" type veth peer name "$P-r0" netns "$R"
for ns in "$C" "$R"; do
    dev=$P-${ns: -1}0
    sysctl_ns "$ns" "net.ipv6.conf.$dev.disable_ipv6" 0
    sysctl_ns "$ns" "net.ipv6.conf.$dev.accept_dad" 0
done
x ip -n "$C" addr add "$CL/64" dev "$P-c0" nodad
x ip -n "$R" addr add "$RIP/64" dev "$P-r0" nodad
x ip -n "$R" addr add "$RIP_OTHER/128" dev "$P-r0" nodad
x ip -n "$C" link set "$P-c0" up
x ip -n "$R" link set "$P-r0" up
x ip netns exec "$C" ping -6 -c 1 -W 3 "$RIP" >/dev/null

# The real server's applications, bound to the VIP once it exists: UDP echo
# on 7 ("rs:" + payload); TCP on 80: reads an 8-byte size N and N bytes,
# answers the upload's sha256 (64 hex) and then N bytes of its own.
cat >"$TMP/server.py" <<'EOF'
import hashlib, socket, sys, threading
vip = sys.argv[1]
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u.bind((vip, 7))
t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((vip, 80))
t.listen(8)
print("listening", flush=True)
def udp():
    while True:
        d, a = u.recvfrom(65535)
        u.sendto(b"rs:" + d, a)
threading.Thread(target=udp, daemon=True).start()
while True:
    c, a = t.accept()
    c.settimeout(10)
    print("accepted", a[0], "local", c.getsockname()[0], flush=True)
    n = int.from_bytes(c.recv(8, socket.MSG_WAITALL), "big")
    h, got = hashlib.sha256(), 0
    while got < n:
        d = c.recv(min(65536, n - got))
        if not d:
            break
        h.update(d)
        got += len(d)
    c.sendall(h.hexdigest().encode())
    c.sendall(bytes(range(251)) * (n // 251) + bytes(n % 251))
    c.close()
EOF
cat >"$TMP/client.py" <<'EOF'
import hashlib, socket, sys
vip, n = sys.argv[1], int(sys.argv[2])
up = bytes((i * 7) & 0xFF for i in range(n))
c = socket.create_connection((vip, 80), timeout=10)
print("local", c.getsockname()[0])
c.sendall(n.to_bytes(8, "big") + up)
back = c.recv(64, socket.MSG_WAITALL).decode()
down = hashlib.sha256()
got = 0
while True:
    d = c.recv(65536)
    if not d:
        break
    down.update(d)
    got += len(d)
want = hashlib.sha256(bytes(range(251)) * (n // 251) + bytes(n % 251)).hexdigest()
print("upload", "ok" if back == hashlib.sha256(up).hexdigest() else "BAD " + back)
print("download", got, "ok" if down.hexdigest() == want else "BAD")
EOF

# ----------------------------------------------------- 1. no decapsulator
encap_send "$C" --send udp --rip "$RIP" --dport 7 --timeout 1
check "1: without a decapsulator the RS answers next header 41 with ICMPv6 parameter problem (4/1)" \
    grep -q "icmp6 type=4 code=1 from $RIP" "$TMP/send.log"

# ------------------------------------------------------- decapsulator up
spawn "$R" decap "$PY" -B "$HERE/ip6ip6_decap.py" --vip "$VIP" --local "$RIP" \
    --log "$TMP/decap.log" --pid-file "$TMP/decap.pid" --ready-file "$TMP/decap.ready"
wait_file "$TMP/decap.ready" 10 || die "decapsulator not ready (log: $(cat "$TMP/decap.log"))"
check "decap: VIP/128 on TUN vip6" \
    grep -q "inet6 $VIP/128" <(ip -n "$R" -6 addr show dev vip6)
check "decap: no DAD, not tentative" \
    bash -c "! ip -n '$R' -6 addr show dev vip6 | grep -q tentative"
spawn "$R" server "$PY" -B "$TMP/server.py" "$VIP"
for ((i = 0; i < 50; i++)); do grep -q listening "$TMP/server.log" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$TMP/server.log" || die "server did not start: $(cat "$TMP/server.log")"

# ------------------------------------------------------------------- 2. UDP
encap_send "$C" --send udp --rip "$RIP" --dport 7 --count 3 --payload hello6
rc=$?
check "2: UDP: 3 encapsulated datagrams, 3 echoes from the VIP (exit $rc)" \
    test "$rc" = 0 -a "$(grep -c "reply udp \[$VIP\]:7 -> \[$CL\]:40000 payload=rs:hello6" "$TMP/send.log")" = 3
check "2: UDP: no ICMPv6 error while the decapsulator runs" \
    bash -c "! grep -q icmp6 '$TMP/send.log'"

# ------------------------------------------------------------------- 3. TCP
encap_send "$C" --send syn --rip "$RIP" --dport 80 --count 3 --sport 41000
rc=$?
check "3: TCP: 3 encapsulated SYNs, 3 SYN/ACKs from the VIP (exit $rc)" \
    test "$rc" = 0 -a "$(grep -c "reply tcp \[$VIP\]:80 -> \[$CL\]:4100[0-2] flags=SA" "$TMP/send.log")" = 3
encap_send "$C" --send syn --rip "$RIP" --dport 81 --sport 42000 --timeout 1
check "3: TCP: a SYN to a closed port of the VIP gets RST/ACK" \
    grep -q "reply tcp \[$VIP\]:81 -> \[$CL\]:42000 flags=AR" "$TMP/send.log"

# ---------------------------------------------------------------- 4. --local
encap_send "$C" --send udp --rip "$RIP_OTHER" --dport 7 --timeout 1
rc=$?
check "4: --local: outer destination $RIP_OTHER not decapsulated (no answer, exit $rc)" \
    test "$rc" = 1
check "4: --local: the drop is logged" grep -q "drop: outer dst not local" "$TMP/decap.log"
check "4: --local: no ICMPv6 error for it either (the raw socket took it)" \
    bash -c "! grep -q icmp6 '$TMP/send.log'"

# ------------------------------------------------- 5. kernel TCP via stand-in
spawn "$C" encap "$PY" -B "$HERE/ip6ip6_encap.py" --rip "$RIP" --tun enc6 \
    --log "$TMP/encap.log" --pid-file "$TMP/encap.pid" --ready-file "$TMP/encap.ready"
wait_file "$TMP/encap.ready" 10 || die "stand-in director not ready (log: $(cat "$TMP/encap.log"))"
x ip -n "$C" -6 route add "$VIP/128" dev enc6
ip netns exec "$C" timeout 20 "$PY" -B "$TMP/client.py" "$VIP" 1000000 >"$TMP/client.log" 2>&1
rc=$?
check "5: kernel TCP client through the stand-in: connected from $CL (exit $rc)" \
    grep -q "^local $CL\$" "$TMP/client.log"
check "5: 1 MB upload (fragmented outer packets) arrived intact" grep -q "^upload ok" "$TMP/client.log"
check "5: 1 MB download straight from the RS arrived intact" grep -q "^download 1000000 ok" "$TMP/client.log"
check "5: the RS accepted it on the VIP" grep -q "accepted $CL local $VIP" "$TMP/server.log"
check "5: outer packets were fragmented (RS reassembled some)" \
    test "$(ip netns exec "$R" awk '$1 == "Ip6ReasmOKs" {print $2}' /proc/net/snmp6)" -gt 0

# -------------------------------------------------------------- 6. SIGTERM
kill -TERM "$PID_decap" "$PID_encap"
wait "$PID_decap"
rc_d=$?
wait "$PID_encap"
rc_e=$?
check "6: decapsulator exits 0 on SIGTERM (exit $rc_d)" test "$rc_d" = 0
check "6: stand-in exits 0 on SIGTERM (exit $rc_e)" test "$rc_e" = 0
check "6: ready and pid files removed" \
    test ! -e "$TMP/decap.ready" -a ! -e "$TMP/decap.pid" -a ! -e "$TMP/encap.ready"
check "6: decapsulator logged its count" \
    grep -Eq "stopped: decapsulated=[1-9][0-9]* dropped=\{'outer dst not local': 1\}" "$TMP/decap.log"
check "6: stand-in logged its count" grep -Eq "stopped: encapsulated=[1-9]" "$TMP/encap.log"
check "6: TUN vip6 gone" gone "$R" vip6 5
check "6: TUN enc6 gone" gone "$C" enc6 5
