#!/usr/bin/env python3
"""Raw Ethernet probe for the dirigo lab (stdlib only, AF_PACKET, needs root).

  eth_probe.py send IFACE DST_MAC TAG      send one frame, ethertype 0x88b5
                                           (IEEE local experimental), payload TAG
  eth_probe.py recv IFACE TAG [--timeout S] wait for such a frame with payload
                                           TAG; print "got TAG src=<mac> dst=<mac>"

recv exits 0 when the frame came, 1 on timeout.  Used to prove that frames
addressed to a DPDK port's MAC cross the lab's bridge into dirigo's tap.
"""

import argparse
import socket
import sys
import time

ETHERTYPE = 0x88B5


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("iface")
    s.add_argument("dst")
    s.add_argument("tag")
    r = sub.add_parser("recv")
    r.add_argument("iface")
    r.add_argument("tag")
    r.add_argument("--timeout", type=float, default=2.0)
    r.add_argument("--ready-file")
    args = ap.parse_args()

    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE))
    sock.bind((args.iface, ETHERTYPE))
    if args.cmd == "send":
        src = sock.getsockname()[4][:6]
        dst = bytes.fromhex(args.dst.replace(":", ""))
        if len(dst) != 6:
            sys.exit("bad MAC")
        payload = args.tag.encode().ljust(46, b"\0")
        sock.send(dst + src + ETHERTYPE.to_bytes(2, "big") + payload)
        return
    tag = args.tag.encode()
    if args.ready_file:
        with open(args.ready_file, "w") as f:
            f.write("ready\n")
    deadline = time.monotonic() + args.timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            print(f"timeout waiting for {args.tag} on {args.iface}")
            sys.exit(1)
        sock.settimeout(left)
        try:
            pkt = sock.recv(2048)
        except socket.timeout:
            continue
        if len(pkt) >= 14 + len(tag) and pkt[12:14] == ETHERTYPE.to_bytes(2, "big") and pkt[14:14 + len(tag)] == tag:
            print(f"got {args.tag} src={pkt[6:12].hex(':')} dst={pkt[0:6].hex(':')}")
            return


if __name__ == "__main__":
    main()
