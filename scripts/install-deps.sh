#!/usr/bin/env bash
# Install everything dirigo builds and tests with on Debian 12, as root.
# Idempotent and quiet when everything is already there.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
    echo "install-deps.sh: must run as root (apt-get, hugepages)" >&2
    exit 1
fi
pkgs=(libdpdk-dev dpdk dpdk-dev clang libclang-dev pkg-config build-essential
      iproute2 iputils-ping socat curl python3 procps kmod hping3 tmux nftables
      netsniff-ng   # trafgen: the IPv6 SYN flood of tests/lab_flood.rs (hping3 has no IPv6)
      bird2 tshark   # the scale-out lab: BGP + BFD daemon; IPVS sync and PROXY header decoding
      dpkg-dev systemd man-db   # the package test: dpkg-shlibdeps, systemd-analyze, man
      openssh-server openssh-client   # the exception lab: sshd on the ports' addresses
      dnsmasq-base   # the DNS server the DNS health check is tested against
      nginx-light haproxy   # FullNAT's PROXY protocol lab: real servers that read the header
      vsftpd)   # the FTP helper's lab: the real servers' FTP server (curl is the client)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
    for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do
        [ -x "$d/cargo" ] && export PATH="$d:$PATH"
    done
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "install-deps: no Rust toolchain found: install one with rustup (https://rustup.rs), Rust >= 1.85" >&2
    exit 1
fi
# the fuzz targets (tests/fuzz_smoke.rs, scripts/fuzz.sh): libFuzzer's
# coverage instrumentation needs nightly, beside the stable toolchain
if ! cargo +nightly --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
    echo "install-deps: installing the nightly Rust toolchain (fuzz targets)"
    rustup toolchain install nightly --profile minimal >/dev/null
fi
pkg-config --atleast-version=22.11 libdpdk || { echo "install-deps: DPDK >= 22.11 not found after install" >&2; exit 1; }
echo "install-deps: ok (DPDK $(pkg-config --modversion libdpdk), $(cargo --version))"
