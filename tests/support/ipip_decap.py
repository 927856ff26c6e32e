#!/usr/bin/env python3
"""Userspace IPIP decapsulator for a dirigo TUN-mode real server (stdlib only).

The lab kernel has no ipip module, so a real server cannot use a `tunl0`.
This program stands in for it inside the real server's namespace:

  * opens a TUN device (IFF_TUN|IFF_NO_PI), gives it the VIP(s) as /32, sets
    it up, and turns rp_filter off on it, on "all" and on "default";
  * opens a raw socket(AF_INET, SOCK_RAW, IPPROTO_IPIP); the kernel hands it
    every (reassembled) IPv4 packet with protocol 4 addressed to this host,
    outer header included;
  * strips the outer header and writes the inner IPv4 packet into the TUN
    device; the kernel then delivers it to local sockets bound to the VIP and
    the reply leaves by the normal routing table with source = VIP.

Usage: ipip_decap.py --vip 10.99.0.100 [--vip ...] [--tun vip0] [--local RIP]
                     [--log FILE] [--pid-file FILE] [--ready-file FILE]
                     [--syn-delay-ms N]
--local: only decapsulate packets whose outer destination is RIP (default: any).
--syn-delay-ms: hold each inner TCP SYN (without ACK) N ms before delivering
it, in order: a real server slow to answer handshakes (as one under a SYN
flood is); other packets are delivered at once.
Needs CAP_NET_ADMIN/CAP_NET_RAW and the `ip` command. Exits on SIGTERM/SIGINT.
The ready file is written once the TUN device is up with its addresses.
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
    return bytes(inner[:ilen])


def is_syn(inner):
    """Whether an inner IPv4 packet is a TCP SYN without ACK."""
    ihl = (inner[0] & 0x0F) * 4
    return inner[9] == 6 and len(inner) >= ihl + 14 and inner[ihl + 13] & 0x12 == 0x02


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vip", action="append", required=True)
    ap.add_argument("--tun", default="vip0")
    ap.add_argument("--local")
    labutil.helper_args(ap)
    ap.add_argument("--syn-delay-ms", type=float, default=0.0)
    args = ap.parse_args()

    log = labutil.start_helper(args, "ipip_decap")
    labutil.write_pid(args.pid_file)
    local = socket.inet_aton(args.local) if args.local else None

    tun = labutil.open_tun(args.tun)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_IPIP)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    for key in ("net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter",
                f"net.ipv4.conf.{args.tun}.rp_filter"):
        labutil.sysctl(key, 0)
    for vip in args.vip:
        subprocess.run(["ip", "addr", "replace", f"{vip}/32", "dev", args.tun], check=True)
    subprocess.run(["ip", "link", "set", args.tun, "up"], check=True)
    log(f"tun={args.tun} vips={','.join(args.vip)} local={args.local or 'any'} ready")
    labutil.write_pid(args.ready_file)

    good = 0
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

    try:
        while True:
            if held:
                # deliver what is due first: under a flood the socket is
                # always readable, and the delay must not grow with it
                while held and held[0][0] <= time.monotonic():
                    deliver(held.popleft()[1])
                wait = max(0.0, held[0][0] - time.monotonic()) if held else 0.0
                if held and not select.select([raw], [], [], wait)[0]:
                    continue
            pkt = raw.recv(65535)
            inner = parse_outer(pkt, local)
            if isinstance(inner, str):
                bad[inner] = bad.get(inner, 0) + 1
                if bad[inner] <= 3:
                    log(f"drop: {inner} (len={len(pkt)})")
                continue
            if delay > 0 and is_syn(inner):
                held.append((time.monotonic() + delay, inner))
                continue
            if not deliver(inner):
                continue
            good += 1
            if labutil.sampled(good):
                log(f"decap #{good} outer {labutil.addrs(pkt)} inner {labutil.addrs(inner)} "
                    f"proto={inner[9]} len={len(inner)}")
    except SystemExit as e:
        code = labutil.exit_code(e)
    finally:
        raw.close()
        os.close(tun)  # non-persistent TUN: the device disappears with the fd
        labutil.remove_pid_files(args)
        log(f"stopped: decapsulated={good} dropped={bad}")
    sys.exit(code)


if __name__ == "__main__":
    main()
