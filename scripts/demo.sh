#!/usr/bin/env bash
# dirigo demo: the network-namespace lab with real kernel clients and servers.
#
# On a fresh Debian 12 machine, as root:   scripts/demo.sh
#
# 1. installs the packages (scripts/install-deps.sh), reserves hugepages
#    (scripts/setup-hugepages.sh) and builds dirigo (cargo build --release);
# 2. builds the lab (scripts/lab/lab.sh): a client namespace, three real
#    servers rs1..rs3 behind a bridge, a return path for DR/TUN replies;
# 3. starts dirigo on two net_tap ports with a default config (VIP
#    10.99.0.100:80, round-robin) and moves its taps into the lab;
# 4. for each of DR, TUN and NAT: reconfigures the real servers and dirigo,
#    sends HTTP requests from the client to the VIP, shows which real server
#    answered each, and prints `dirigoadm -L -n --stats`;
# 5. removes everything on exit, error, Ctrl-C or TERM.
#
# Environment: DEMO_REQUESTS (6), DEMO_PROFILE (release | debug),
# LAB_PREFIX (dgdemo), CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

if [[ $(id -u) -ne 0 ]]; then
    echo "demo.sh: must run as root (namespaces, taps, hugepages); try: sudo $0" >&2
    exit 2
fi
for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do
    case ":$PATH:" in *":$d:"*) ;; *) [[ -d $d ]] && PATH="$d:$PATH" ;; esac
done
export PATH

REQUESTS=${DEMO_REQUESTS:-6}
PROFILE=${DEMO_PROFILE:-release}
export LAB_PREFIX=${LAB_PREFIX:-dgdemo}
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
BIN=$TARGET/$PROFILE

bold() { printf '\n\033[1m%s\033[0m\n' "$*"; }
step() { printf '\033[1;34m==> %s\033[0m\n' "$*"; }

# ------------------------------------------------------------ preparation
step "installing dependencies"
scripts/install-deps.sh
step "reserving hugepages"
scripts/setup-hugepages.sh 1024
step "building dirigo ($PROFILE)"
if [[ $PROFILE == release ]]; then
    cargo build --release --bins
else
    cargo build --bins
fi

LAB=scripts/lab/lab.sh
eval "$("$LAB" env)"   # LAB_VIP, LAB_RS_IPS, LAB_WAN_IF, ... as exports
WORK=$(mktemp -d /tmp/dirigo-demo.XXXXXX)
SOCK=$WORK/ctl.sock
DIRIGO_PID=

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    step "cleaning up"
    "$LAB" down
    if [[ -n $DIRIGO_PID ]] && kill -0 "$DIRIGO_PID" 2>/dev/null; then
        kill -TERM "$DIRIGO_PID"
        for _ in $(seq 50); do kill -0 "$DIRIGO_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$DIRIGO_PID" 2>/dev/null && kill -KILL "$DIRIGO_PID"
        wait "$DIRIGO_PID" 2>/dev/null || true
    fi
    if ((rc != 0)) && [[ -s $WORK/dirigo.log ]]; then
        echo "--- dirigo log (last 20 lines) ---"
        tail -20 "$WORK/dirigo.log"
    fi
    rm -rf "$WORK"
    echo "demo: lab removed, dirigo stopped"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------ the lab
step "building the lab (namespaces $LAB_PREFIX-*)"
"$LAB" down # a demo lab left behind by a killed run (our prefix only)
"$LAB" up dr

read -r -a RS <<<"$LAB_RS_IPS"
cat >"$WORK/dirigo.toml" <<EOF
# dirigo demo config: WAN tap -> client network, LAN tap -> server bridge.
[eal]
args = ["-l", "0-1", "--in-memory", "--file-prefix", "dirigo-demo", "--no-pci", "--no-telemetry",
        "--vdev=net_tap0,iface=$LAB_WAN_IF", "--vdev=net_tap1,iface=$LAB_LAN_IF"]

[control]
socket = "$SOCK"

[dataplane]
connections_per_worker = 65536
mbufs = 8191

$("$LAB" ports-toml)

[[service]]
protocol = "tcp"
address = "$LAB_VIP:80"
scheduler = "rr"
$(for r in "${RS[@]}"; do printf '[[service.real_server]]\naddress = "%s"\nmethod = "dr"\n' "$r"; done)
EOF

step "starting dirigo ($BIN/dirigo --config $WORK/dirigo.toml)"
"$BIN/dirigo" --config "$WORK/dirigo.toml" >"$WORK/dirigo.log" 2>&1 &
DIRIGO_PID=$!
for i in $(seq 300); do
    grep -q 'running (SIGINT/SIGTERM to stop)' "$WORK/dirigo.log" && break
    kill -0 "$DIRIGO_PID" 2>/dev/null || { echo "demo: dirigo exited:"; cat "$WORK/dirigo.log"; exit 1; }
    ((i == 300)) && { echo "demo: dirigo did not start in 30 s"; exit 1; }
    sleep 0.1
done
grep -m1 'running' "$WORK/dirigo.log"
"$LAB" attach "$LAB_WAN_IF" "$LAB_LAN_IF"

adm() { "$BIN/dirigoadm" --socket "$SOCK" "$@"; }

# ------------------------------------------------------------ the modes
declare -A FLAG=([dr]=-g [tun]=-i [nat]=-m)
declare -A TITLE=(
    [dr]="DR (direct routing): dirigo rewrites only the destination MAC; replies go straight back"
    [tun]="TUN (IP-in-IP): dirigo encapsulates to the real server; replies go straight back"
    [nat]="NAT (masquerading): dirigo rewrites VIP:80 <-> RIP:80; replies come back through dirigo"
)
failed=0
for mode in dr tun nat; do
    bold "=== ${TITLE[$mode]}"
    "$LAB" mode "$mode"
    for r in "${RS[@]}"; do
        adm -e -t "$LAB_VIP:80" -r "$r" "${FLAG[$mode]}" -w 1
    done
    adm -Z
    echo "dirigoadm -e -t $LAB_VIP:80 -r {${RS[*]}} ${FLAG[$mode]} -w 1   (real servers set up for $mode)"
    echo
    for ((i = 1; i <= REQUESTS; i++)); do
        if out=$("$LAB" exec client curl -sS -m 5 "http://$LAB_VIP/whoami" 2>&1); then
            printf '  request %d: client %s -> http://%s/  answered by %s\n' \
                "$i" "$LAB_CLIENT_IP" "$LAB_VIP" "$out"
        else
            printf '  request %d: FAILED: %s\n' "$i" "$out"
            failed=$((failed + 1))
        fi
    done
    echo
    echo "\$ dirigoadm -L -n --stats"
    adm -L -n --stats
done

bold "=== done: $((3 * REQUESTS - failed)) of $((3 * REQUESTS)) requests answered"
((failed == 0))
