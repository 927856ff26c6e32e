#!/usr/bin/env python3
"""ARP who-has probe for the dirigo lab (stdlib only, AF_PACKET, needs root).

Usage: arp_probe.py IFACE TARGET_IP [--sender-ip IP] [--timeout S]
Broadcasts one ARP request for TARGET_IP on IFACE and prints the first reply
("reply <ip> is-at <mac>"; with --all every reply within the timeout).  Exit status: 0 when at
least one reply came, 1 when none did (use it to prove a DR/TUN real server
does NOT answer ARP for the VIP, and that it does answer for its own RIP).
"""

import argparse
import socket
import struct
import sys
import time

ETH_P_ARP = 0x0806


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("iface")
    ap.add_argument("target")
    ap.add_argument("--sender-ip", default="0.0.0.0")
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--all", action="store_true", help="keep listening for more replies until the timeout")
    args = ap.parse_args()

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ARP))
    s.bind((args.iface, ETH_P_ARP))
    mac = s.getsockname()[4][:6]
    tip = socket.inet_aton(args.target)
    sip = socket.inet_aton(args.sender_ip)
    frame = (b"\xff" * 6 + mac + struct.pack("!H", ETH_P_ARP)
             + struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1)
             + mac + sip + b"\0" * 6 + tip)
    s.send(frame)
    deadline = time.monotonic() + args.timeout
    replies = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            pkt = s.recv(2048)
        except socket.timeout:
            break
        if len(pkt) < 42 or pkt[12:14] != b"\x08\x06":
            continue
        op = struct.unpack("!H", pkt[20:22])[0]
        if op == 2 and pkt[28:32] == tip:
            replies += 1
            print(f"reply {args.target} is-at {pkt[22:28].hex(':')}")
            if not args.all:
                break
    if not replies:
        print(f"no reply for {args.target} on {args.iface}")
    sys.exit(0 if replies else 1)


if __name__ == "__main__":
    main()
