#!/usr/bin/env python3
"""One UDP flow of the dirigo lab (stdlib only): from a fixed source port,
send a datagram to HOST PORT and print the echo's text (the lab's UDP
servers answer "rsN:PAYLOAD"). Retries a few times (the flow may cross a
restart of the director). Exit status 0 on a reply, 1 without.

Usage: udp_flow.py HOST PORT --sport N [--payload TEXT] [--tries K] [--timeout S]
"""

import argparse
import socket
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--sport", type=int, required=True)
    ap.add_argument("--payload", default="flow")
    ap.add_argument("--tries", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=1.0)
    a = ap.parse_args()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", a.sport))
    s.settimeout(a.timeout)
    for _ in range(a.tries):
        try:
            s.sendto(a.payload.encode(), (a.host, a.port))
            data, _peer = s.recvfrom(65535)
        except OSError:
            continue
        print(data.decode(errors="replace"))
        return 0
    print(f"no reply from {a.host}:{a.port} to port {a.sport}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
