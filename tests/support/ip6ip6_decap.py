#!/usr/bin/env python3
"""Userspace IPv6-in-IPv6 decapsulator for a dirigo TUN-mode IPv6 real server (stdlib only).

What Linux IPVS sends an IPv6 real server in tunnel mode is the client's
IPv6 packet inside an outer IPv6 header with next header 41 (RFC 2473).
The lab kernel has no ip6_tunnel module, so a real server cannot use an
`ip6tnl0`. This program stands in for it inside the real server's namespace
(the IPv6 twin of ipip_decap.py):

  * opens a TUN device (IFF_TUN|IFF_NO_PI), enables IPv6 on it
    (disable_ipv6=0: the lab turns IPv6 off on "default"), turns DAD off
    (accept_dad=0) and address generation off (no link-local, no router
    solicitations), gives it the VIP(s) as /128 `nodad`, sets it up;
  * opens a raw socket(AF_INET6, SOCK_RAW, 41); the kernel hands it every
    (reassembled) IPv6 packet whose final next header is 41 addressed to
    this host. An IPv6 raw socket receives the payload WITHOUT the outer
    header (and without its extension headers): that is the inner packet.
    The outer destination comes from IPV6_PKTINFO, the outer source from
    recvmsg's address;
  * writes the inner IPv6 packet into the TUN device; the kernel then
    delivers it to local sockets bound to the VIP and the reply leaves by the
    normal routing table with source = VIP.

With --gre it opens a raw socket for next header 47 too (GRE, RFC 2784/2890),
with --gue-port P a raw UDP socket and a UDP socket bound to [::]:P (GUE
variant 0); tunparse.py checks their headers and checksums (GUE's UDP
checksum with the IPv6 pseudo header; 0 is allowed, RFC 6935). The log
names each kind the first time it is decapsulated ("first kind gre+csum").

While this socket is open the kernel does not answer next header 41 with
ICMPv6 parameter problem (type 4 code 1, "unrecognized next header"): a raw
socket for the protocol counts as its handler. Without it, it does.
IPv6 has no rp_filter; forwarding need not be off (a packet from the TUN
addressed to a local address is delivered either way).

Usage: ip6ip6_decap.py --vip 2001:db8:f::10 [--vip ...] [--tun vip6]
                       [--local RIP6] [--log FILE] [--pid-file FILE]
                       [--ready-file FILE] [--syn-delay-ms N]
                       [--gre] [--gue-port P]
--local: only decapsulate packets whose outer destination is RIP6 (default: any).
--syn-delay-ms: hold each inner TCP SYN (without ACK) N ms before delivering
it, in order: a real server slow to answer handshakes; other packets are
delivered at once.
Needs CAP_NET_ADMIN/CAP_NET_RAW and the `ip` command. Exits on SIGTERM/SIGINT.
The ready file is written once the TUN device is up with its addresses.
"""

import argparse
import collections
import os
import select
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402
import tunparse  # noqa: E402

IPPROTO_IPV6_ENCAP = 41  # next header "IPv6" (socket.IPPROTO_IPV6 is also 41)
IPV6_RECVPKTINFO = getattr(socket, "IPV6_RECVPKTINFO", 49)
IPV6_PKTINFO = getattr(socket, "IPV6_PKTINFO", 50)
PKTINFO6_LEN = struct.calcsize("16sI")


def addrs6(ip):
    """`src->dst` of an IPv6 header, for logs."""
    return (f"{socket.inet_ntop(socket.AF_INET6, bytes(ip[8:24]))}->"
            f"{socket.inet_ntop(socket.AF_INET6, bytes(ip[24:40]))}")


def parse_inner(inner):
    """Return the inner IPv6 packet (bytes) or a reason string when it is rejected."""
    if len(inner) < 40:
        return "short inner"
    if inner[0] >> 4 != 6:
        return "inner not ipv6"
    plen = int.from_bytes(inner[4:6], "big")
    if plen == 0:
        return "inner jumbogram"
    if 40 + plen > len(inner):
        return "bad inner length"
    return ("ip6ip6", bytes(inner[:40 + plen]))


def outer_dst(anc):
    """The outer destination address (16 bytes) from IPV6_PKTINFO, or None."""
    for level, typ, data in anc:
        if level == socket.IPPROTO_IPV6 and typ == IPV6_PKTINFO and len(data) >= PKTINFO6_LEN:
            return data[:16]
    return None


def is_syn(inner):
    """Whether an inner IPv6 packet is a TCP SYN without ACK (no extension headers)."""
    return inner[6] == 6 and len(inner) >= 40 + 14 and inner[40 + 13] & 0x12 == 0x02


def setup_tun(name, vips):
    """IPv6 on, no DAD, no SLAAC/link-local on `name`; VIPs as /128 nodad; up."""
    base = f"net.ipv6.conf.{name}"
    labutil.sysctl(f"{base}.disable_ipv6", 0)
    labutil.sysctl(f"{base}.accept_dad", 0)
    labutil.sysctl(f"{base}.accept_ra", 0)
    labutil.sysctl(f"{base}.autoconf", 0)
    labutil.sysctl(f"{base}.router_solicitations", 0)
    # no link-local address: nothing of ours ever leaves by this device
    subprocess.run(["ip", "link", "set", "dev", name, "addrgenmode", "none"], check=True)
    for vip in vips:
        subprocess.run(["ip", "-6", "addr", "replace", f"{vip}/128", "dev", name, "nodad"], check=True)
    subprocess.run(["ip", "link", "set", name, "up"], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vip", action="append", required=True)
    ap.add_argument("--tun", default="vip6")
    ap.add_argument("--local")
    labutil.helper_args(ap)
    ap.add_argument("--syn-delay-ms", type=float, default=0.0)
    ap.add_argument("--gre", action="store_true", help="decapsulate GRE (next header 47) too")
    ap.add_argument("--gue-port", type=int, help="decapsulate GUE on this UDP port too")
    args = ap.parse_args()

    try:
        local = socket.inet_pton(socket.AF_INET6, args.local) if args.local else None
        for vip in args.vip:
            socket.inet_pton(socket.AF_INET6, vip)
    except OSError:
        ap.error(f"not an IPv6 address among --vip {args.vip} --local {args.local}")
    if not os.path.exists("/proc/sys/net/ipv6"):
        sys.exit("ip6ip6_decap: this kernel (namespace) has no IPv6")
    log = labutil.start_helper(args, "ip6ip6_decap")
    labutil.write_pid(args.pid_file)

    tun = labutil.open_tun(args.tun)
    raw = socket.socket(socket.AF_INET6, socket.SOCK_RAW, IPPROTO_IPV6_ENCAP)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    raw.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVPKTINFO, 1)
    # each socket's parser: (payload, outer source, outer destination)
    parsers = {raw: lambda p, _s, _d: parse_inner(p)}
    if args.gre:
        gre = socket.socket(socket.AF_INET6, socket.SOCK_RAW, tunparse.IPPROTO_GRE)
        parsers[gre] = lambda p, _s, _d: tunparse.gre_body(p)
    sink = None
    if args.gue_port:
        gue = socket.socket(socket.AF_INET6, socket.SOCK_RAW, tunparse.IPPROTO_UDP)
        parsers[gue] = lambda p, s, d: tunparse.gue_body(p, s + d, args.gue_port, True)
        sink = tunparse.gue_sink(args.gue_port, socket.AF_INET6)
    for s in parsers:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVPKTINFO, 1)
    socks = list(parsers) + ([sink] if sink else [])
    setup_tun(args.tun, args.vip)
    log(f"tun={args.tun} vips={','.join(args.vip)} local={args.local or 'any'} "
        f"gre={args.gre} gue_port={args.gue_port} ready")
    labutil.write_pid(args.ready_file)

    good = 0
    kinds = {}
    bad = {}
    code = 0
    delay = args.syn_delay_ms / 1000.0
    held = collections.deque()  # (due, inner SYN), in arrival order
    anc_size = socket.CMSG_SPACE(PKTINFO6_LEN)

    def drop(reason, n):
        bad[reason] = bad.get(reason, 0) + 1
        if bad[reason] <= 3:
            log(f"drop: {reason} (len={n})")

    def deliver(inner):
        try:
            os.write(tun, inner)
        except OSError as e:
            bad["tun write"] = bad.get("tun write", 0) + 1
            log(f"tun write failed: {e}")
            return False
        return True

    def handle(s, pkt, anc, _flags, peer):
        nonlocal good
        dst = outer_dst(anc)
        if local is not None and dst != local:
            if s is raw:
                drop("outer dst not local", len(pkt))
            return
        src = socket.inet_pton(socket.AF_INET6, peer[0].split("%")[0])
        parsed = parsers[s](pkt, src, dst or bytes(16))
        if parsed is None:
            return  # not a tunnel packet (another UDP port)
        if isinstance(parsed, str):
            drop(parsed, len(pkt))
            return
        kind, inner = parsed
        if kind not in kinds:
            kinds[kind] = 0
            log(f"first kind {kind} outer {peer[0]} len={len(pkt)}")
        kinds[kind] += 1
        if inner[0] >> 4 != 6:
            drop("inner not ipv6", len(pkt))
            return
        if delay > 0 and is_syn(inner):
            held.append((time.monotonic() + delay, inner))
            return
        if not deliver(inner):
            return
        good += 1
        if labutil.sampled(good):
            odst = socket.inet_ntop(socket.AF_INET6, dst) if dst else "?"
            log(f"decap #{good} outer {peer[0]}->{odst} inner {addrs6(inner)} "
                f"proto={inner[6]} len={len(inner)} kind={kind}")

    try:
        while True:
            if held:
                # deliver what is due first: under a flood the socket is
                # always readable, and the delay must not grow with it
                while held and held[0][0] <= time.monotonic():
                    deliver(held.popleft()[1])
            wait = max(0.0, held[0][0] - time.monotonic()) if held else None
            for s in select.select(socks, [], [], wait)[0]:
                if s is sink:
                    while True:  # drained: the raw socket had its copy
                        try:
                            sink.recv(65535)
                        except BlockingIOError:
                            break
                    continue
                handle(s, *s.recvmsg(65535, anc_size))
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
