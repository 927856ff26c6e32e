#!/usr/bin/env python3
"""UDP echo-with-identity server for the dirigo lab (stdlib only).

Every datagram with payload P is answered with "<name>:" + P, sent FROM the
address the datagram was sent TO (IP_PKTINFO), so a real server that holds the
VIP on lo (DR) or on a TUN device (TUN) replies with source = VIP. An IPv6
--bind (e.g. "::") listens on IPv6 only (IPV6_V6ONLY, beside an IPv4
instance on the same port) and replies from the destination the same way
(IPV6_PKTINFO).

Usage: udp_echo.py --name rs1 [--bind 0.0.0.0] [--port 5353]
                   [--log FILE] [--pid-file FILE] [--ready-file FILE]
Exits cleanly on SIGTERM/SIGINT (removes pid/ready files).
"""

import argparse
import os
import socket
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402

IP_PKTINFO = getattr(socket, "IP_PKTINFO", 8)
PKTINFO_LEN = struct.calcsize("i4s4s")
IPV6_RECVPKTINFO = getattr(socket, "IPV6_RECVPKTINFO", 49)
IPV6_PKTINFO = getattr(socket, "IPV6_PKTINFO", 50)
PKTINFO6_LEN = struct.calcsize("16sI")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--bind", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=5353)
    labutil.helper_args(ap)
    args = ap.parse_args()

    log = labutil.start_helper(args, f"udp_echo:{args.name}")
    v6 = ":" in args.bind
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVPKTINFO, 1)
    else:
        s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((args.bind, args.port))
    labutil.write_pid(args.pid_file)
    log(f"listening on udp {args.bind}:{args.port}")
    labutil.write_pid(args.ready_file)
    prefix = f"{args.name}:".encode()
    count = 0
    code = 0
    try:
        while True:
            data, anc, _flags, peer = s.recvmsg(65535, socket.CMSG_SPACE(max(PKTINFO_LEN, PKTINFO6_LEN)))
            reply_anc = []
            dst_s = "?"
            for level, typ, cdata in anc:
                if level == socket.IPPROTO_IPV6 and typ == IPV6_PKTINFO and len(cdata) >= PKTINFO6_LEN:
                    dst6, _ifindex = struct.unpack("16sI", cdata[:PKTINFO6_LEN])
                    reply_anc = [(socket.IPPROTO_IPV6, IPV6_PKTINFO, struct.pack("16sI", dst6, 0))]
                    dst_s = socket.inet_ntop(socket.AF_INET6, dst6)
                if level == socket.IPPROTO_IP and typ == IP_PKTINFO and len(cdata) >= PKTINFO_LEN:
                    _ifindex, _spec, dst = struct.unpack("i4s4s", cdata[:PKTINFO_LEN])
                    # Reply from the address the request was sent to; ifindex 0
                    # lets the routing table choose the way out.
                    reply_anc = [(socket.IPPROTO_IP, IP_PKTINFO, struct.pack("i4s4s", 0, dst, b"\0" * 4))]
                    dst_s = socket.inet_ntoa(dst)
            try:
                s.sendmsg([prefix + data], reply_anc, 0, peer)
            except OSError as e:
                log(f"send to {peer} failed: {e}")
            count += 1
            if count <= 5 or count % 1000 == 0:
                log(f"echo #{count} {peer[0]}:{peer[1]} -> {dst_s}:{args.port} len={len(data)}")
    except SystemExit as e:
        code = labutil.exit_code(e)
    finally:
        s.close()
        labutil.remove_pid_files(args)
        log(f"stopped after {count} datagrams")
    sys.exit(code)


if __name__ == "__main__":
    main()
