#!/usr/bin/env python3
"""Userspace IPIP (and GRE, GUE) decapsulator for a dirigo TUN-mode real server (stdlib only).

The lab kernel has no ipip, gre or fou module, so a real server cannot use
a `tunl0`, a `gre0` or a fou port. This program stands in for them inside
the real server's namespace:

  * opens a TUN device (IFF_TUN|IFF_NO_PI), gives it the VIP(s) as /32, sets
    it up, and turns rp_filter off on it, on "all" and on "default";
  * opens a raw socket(AF_INET, SOCK_RAW, IPPROTO_IPIP); the kernel hands it
    every (reassembled) IPv4 packet with protocol 4 addressed to this host,
    outer header included; with --gre, one for protocol 47 (GRE) too, and
    with --gue-port P a raw UDP socket for the datagrams to port P (GUE)
    and a UDP socket bound to P (so the kernel sends no port unreachable);
    tunparse.py checks their headers and checksums;
  * strips the outer header and writes the inner IPv4 packet into the TUN
    device; the kernel then delivers it to local sockets bound to the VIP and
    the reply leaves by the normal routing table with source = VIP.

Usage: ipip_decap.py --vip 10.99.0.100 [--vip ...] [--tun vip0] [--local RIP]
                     [--log FILE] [--pid-file FILE] [--ready-file FILE]
                     [--syn-delay-ms N] [--gre] [--gue-port P]
--local: only decapsulate packets whose outer destination is RIP (default: any).
--syn-delay-ms: hold each inner TCP SYN (without ACK) N ms before delivering
it, in order: a real server slow to answer handshakes (as one under a SYN
flood is); other packets are delivered at once.
Needs CAP_NET_ADMIN/CAP_NET_RAW and the `ip` command. Exits on SIGTERM/SIGINT.
The ready file is written once the TUN device is up with its addresses.
The log names each kind of tunnel packet the first time it is decapsulated
("first kind gre+csum", "first kind gue+udpcsum", "first kind ipip", ...)
and each reason a packet was dropped ("drop: REASON").
"""

import argparse
import collections
import os
import select
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402
import tunparse  # noqa: E402

IPPROTO_IPIP = 4


def parse_outer(pkt, local):
    """Return the inner packet (bytes) or a reason string when the packet is rejected."""
    if len(pkt) < 20:
        return "short outer"
    vihl = pkt[0]
    if vihl >> 4 != 4:
        return "outer not ipv4"
    ihl = (vihl & 0x0F) * 4
    if ihl < 20 or len(pkt) < ihl:
        return "bad outer ihl"
    if pkt[9] != IPPROTO_IPIP:
        return "outer proto not ipip"
    if local is not None and pkt[16:20] != local:
        return "outer dst not local"
    total = int.from_bytes(pkt[2:4], "big")
    if total < ihl or total > len(pkt):
        return "bad outer length"
    inner = pkt[ihl:total]
    if len(inner) < 20 or inner[0] >> 4 != 4:
        return "inner not ipv4"
    ilen = int.from_bytes(inner[2:4], "big")
    iihl = (inner[0] & 0x0F) * 4
    if iihl < 20 or ilen < iihl or ilen > len(inner):
        return "bad inner length"
    return ("ipip", bytes(inner[:ilen]))


def is_syn(inner):
    """Whether an inner IPv4 packet is a TCP SYN without ACK."""
    ihl = (inner[0] & 0x0F) * 4
    return inner[0] >> 4 == 4 and inner[9] == 6 and len(inner) >= ihl + 14 and inner[ihl + 13] & 0x12 == 0x02


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vip", action="append", required=True)
    ap.add_argument("--tun", default="vip0")
    ap.add_argument("--local")
    labutil.helper_args(ap)
    ap.add_argument("--syn-delay-ms", type=float, default=0.0)
    ap.add_argument("--gre", action="store_true", help="decapsulate GRE (protocol 47) too")
    ap.add_argument("--gue-port", type=int, help="decapsulate GUE on this UDP port too")
    args = ap.parse_args()

    log = labutil.start_helper(args, "ipip_decap")
    labutil.write_pid(args.pid_file)
    local = socket.inet_aton(args.local) if args.local else None

    tun = labutil.open_tun(args.tun)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_IPIP)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    parsers = {raw: lambda p: parse_outer(p, local)}
    if args.gre:
        gre = socket.socket(socket.AF_INET, socket.SOCK_RAW, tunparse.IPPROTO_GRE)
        gre.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        parsers[gre] = lambda p: tunparse.parse_gre(p, local)
    sink = None
    if args.gue_port:
        gue = socket.socket(socket.AF_INET, socket.SOCK_RAW, tunparse.IPPROTO_UDP)
        gue.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        parsers[gue] = lambda p: tunparse.parse_gue(p, local, args.gue_port)
        sink = tunparse.gue_sink(args.gue_port)
    socks = list(parsers) + ([sink] if sink else [])
    for key in ("net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter",
                f"net.ipv4.conf.{args.tun}.rp_filter"):
        labutil.sysctl(key, 0)
    for vip in args.vip:
        subprocess.run(["ip", "addr", "replace", f"{vip}/32", "dev", args.tun], check=True)
    subprocess.run(["ip", "link", "set", args.tun, "up"], check=True)
    log(f"tun={args.tun} vips={','.join(args.vip)} local={args.local or 'any'} "
        f"gre={args.gre} gue_port={args.gue_port} ready")
    labutil.write_pid(args.ready_file)

    good = 0
    kinds = {}
    bad = {}
    code = 0
    delay = args.syn_delay_ms / 1000.0
    held = collections.deque()  # (due, inner SYN), in arrival order

    def deliver(inner):
        try:
            os.write(tun, inner)
        except OSError as e:
            bad["tun write"] = bad.get("tun write", 0) + 1
            log(f"tun write failed: {e}")
            return False
        return True

    def handle(pkt, parsed):
        nonlocal good
        if isinstance(parsed, str):
            bad[parsed] = bad.get(parsed, 0) + 1
            if bad[parsed] <= 3:
                log(f"drop: {parsed} (len={len(pkt)})")
            return
        kind, inner = parsed
        if kind not in kinds:
            kinds[kind] = 0
            log(f"first kind {kind} outer {labutil.addrs(pkt)} len={len(pkt)}")
        kinds[kind] += 1
        if delay > 0 and is_syn(inner):
            held.append((time.monotonic() + delay, inner))
            return
        if not deliver(inner):
            return
        good += 1
        if labutil.sampled(good):
            log(f"decap #{good} outer {labutil.addrs(pkt)} inner {labutil.addrs(inner)} "
                f"len={len(inner)} kind={kind}")

    try:
        while True:
            if held:
                # deliver what is due first: under a flood the socket is
                # always readable, and the delay must not grow with it
                while held and held[0][0] <= time.monotonic():
                    deliver(held.popleft()[1])
            wait = max(0.0, held[0][0] - time.monotonic()) if held else None
            ready = select.select(socks, [], [], wait)[0]
            if not ready:
                continue
            for s in ready:
                if s is sink:
                    while True:  # drained: the raw socket had its copy
                        try:
                            sink.recv(65535)
                        except BlockingIOError:
                            break
                    continue
                pkt = s.recv(65535)
                inner = parsers[s](pkt)
                if inner is None:
                    continue  # not a tunnel packet (another UDP port)
                handle(pkt, inner)
    except SystemExit as e:
        code = labutil.exit_code(e)
    finally:
        for s in socks:
            s.close()
        os.close(tun)  # non-persistent TUN: the device disappears with the fd
        labutil.remove_pid_files(args)
        log(f"stopped: decapsulated={good} dropped={bad} kinds={kinds}")
    sys.exit(code)


if __name__ == "__main__":
    main()
