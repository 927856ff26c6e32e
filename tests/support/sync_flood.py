#!/usr/bin/env python3
"""Flood IPVS sync's port (tests/lab_failover.rs): for SECONDS, valid
version 1 messages (40 IPv4 connections each, random clients to VIP:80 on
real server RS, ESTABLISHED, DR) and garbage datagrams, alternating, to
GROUP:PORT out of the interface with address SRC. Prints a JSON summary.

    sync_flood.py GROUP PORT SRC VIP RS SECONDS [--rate MSGS_PER_S]
"""
import argparse
import json
import os
import random
import socket
import struct
import sys
import time


def message(vip, rs, n=40):
    entries = b""
    for _ in range(n):
        caddr = socket.inet_aton("198.18.%d.%d" % (random.randrange(256), random.randrange(1, 255)))
        # type 0, TCP, version 0 / size 36, flags DROUTE|NOOUTPUT, ESTABLISHED,
        # cport, vport, dport, fwmark, timeout, caddr, vaddr, daddr
        entries += struct.pack(
            "!BBHIHHHHII4s4s4s", 0, 6, 36, 0x83, 1,
            random.randrange(1024, 65536), 80, 80, 0, 900, caddr, vip, rs,
        )
    # reserved 0, syncid 0, size, count, version 1, spare
    return struct.pack("!BBHBBH", 0, 0, 8 + len(entries), n, 1, 0) + entries


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("group")
    ap.add_argument("port", type=int)
    ap.add_argument("src")
    ap.add_argument("vip")
    ap.add_argument("rs")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--rate", type=int, default=4000)
    a = ap.parse_args()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(a.src))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    vip, rs = socket.inet_aton(a.vip), socket.inet_aton(a.rs)
    valid = garbage = errors = 0
    t0 = time.monotonic()
    gap = 1.0 / a.rate
    nxt = t0
    while time.monotonic() - t0 < a.seconds:
        if (valid + garbage) % 2 == 0:
            data = message(vip, rs)
            valid += 1
        else:
            data = os.urandom(random.randrange(1, 200))
            garbage += 1
        try:
            s.sendto(data, (a.group, a.port))
        except OSError:
            errors += 1
        nxt += gap
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
    print(json.dumps({"valid": valid, "conns": valid * 40, "garbage": garbage, "errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
