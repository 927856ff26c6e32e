#!/usr/bin/env python3
"""UDP probe for the dirigo lab (stdlib only): send, wait for the echo, and
report where the reply came from and on which interface it arrived.

Usage: udp_probe.py HOST PORT [--payload TEXT] [--count N] [--timeout S] [--json]
Prints one line per probe:
  reply=<text> from=<ip>:<port> iface=<ifname>
(--json: one JSON object per probe).  Exit status 0 only when every probe got
a reply; 1 otherwise.  A fresh source port is used for every probe, so each
probe is a new flow for a load balancer.
"""

import argparse
import json
import socket
import struct
import sys

IP_PKTINFO = getattr(socket, "IP_PKTINFO", 8)
PKTINFO_LEN = struct.calcsize("i4s4s")
IPV6_RECVPKTINFO = getattr(socket, "IPV6_RECVPKTINFO", 49)
IPV6_PKTINFO = getattr(socket, "IPV6_PKTINFO", 50)
PKTINFO6_LEN = struct.calcsize("16sI")


def probe(host, port, payload, timeout):
    v6 = ":" in host
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
    try:
        if v6:
            s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVPKTINFO, 1)
        else:
            s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
        s.settimeout(timeout)
        s.sendto(payload, (host, port))
        try:
            data, anc, _flags, peer = s.recvmsg(65535, socket.CMSG_SPACE(max(PKTINFO_LEN, PKTINFO6_LEN)))
        except socket.timeout:
            return None
        iface = "?"
        for level, typ, cdata in anc:
            ifindex = None
            if level == socket.IPPROTO_IPV6 and typ == IPV6_PKTINFO and len(cdata) >= PKTINFO6_LEN:
                ifindex = struct.unpack("16sI", cdata[:PKTINFO6_LEN])[1]
            if level == socket.IPPROTO_IP and typ == IP_PKTINFO and len(cdata) >= PKTINFO_LEN:
                ifindex = struct.unpack("i4s4s", cdata[:PKTINFO_LEN])[0]
            if ifindex is not None:
                try:
                    iface = socket.if_indextoname(ifindex)
                except OSError:
                    iface = str(ifindex)
        return {
            "reply": data.decode("utf-8", "replace"),
            "from": f"[{peer[0]}]:{peer[1]}" if v6 else f"{peer[0]}:{peer[1]}",
            "iface": iface,
            "local": "%s:%d" % s.getsockname()[:2],
        }
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--payload", default="ping")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ok = True
    for i in range(args.count):
        payload = args.payload if args.count == 1 else f"{args.payload}{i}"
        r = probe(args.host, args.port, payload.encode(), args.timeout)
        if r is None:
            ok = False
            print(json.dumps({"timeout": True}) if args.json else "timeout")
        elif args.json:
            print(json.dumps(r))
        else:
            print(f"reply={r['reply']} from={r['from']} iface={r['iface']}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
