#!/usr/bin/env python3
"""A server that speaks first (as SMTP does), for the FullNAT PROXY lab.

Each connection: it sends "220 <name> banner" at once, without reading,
then waits (up to 3 s) for what arrives before the client has said
anything. With a PROXY protocol header in front of the stream (version
1 or 2), that is the header alone: the director put it on the
handshake's last ACK. It answers "250 <what it got>" — "header v2
src=A:P" (or v1), or "nothing" — and then echoes every line the client
sends prefixed by "250 ", so the client can check that its own bytes
arrive once and unchanged after the header.

Usage: banner_first.py --name rs3 [--bind 0.0.0.0] [--port 2526]
                       [--log FILE] [--pid-file FILE] [--ready-file FILE]
"""

import argparse
import ipaddress
import os
import socket
import socketserver
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def parse(buf):
    """(description, header length) of a PROXY header at the start of buf."""
    if buf.startswith(V2_SIG) and len(buf) >= 16:
        fam = buf[13]
        (n,) = struct.unpack("!H", buf[14:16])
        body = buf[16 : 16 + n]
        if fam == 0x11 and len(body) >= 12:
            src = ipaddress.IPv4Address(body[0:4])
            (sport,) = struct.unpack("!H", body[8:10])
        elif fam == 0x21 and len(body) >= 36:
            src = ipaddress.IPv6Address(body[0:16])
            (sport,) = struct.unpack("!H", body[32:34])
        else:
            return (f"bad v2 family {fam:#x}", 16 + n)
        return (f"header v2 src={src}:{sport}", 16 + n)
    if buf.startswith(b"PROXY ") and b"\r\n" in buf:
        line, _ = buf.split(b"\r\n", 1)
        f = line.decode("ascii", "replace").split(" ")
        if len(f) == 6:
            return (f"header v1 src={f[2]}:{f[4]}", len(line) + 2)
    return ("nothing", 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--bind", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=2526)
    labutil.helper_args(ap)
    args = ap.parse_args()
    log = labutil.start_helper(args, f"banner_first:{args.name}")

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            s = self.request
            s.sendall(f"220 {args.name} banner\r\n".encode())
            s.settimeout(3.0)
            first = b""
            try:
                first = s.recv(4096)
            except socket.timeout:
                pass
            what, n = parse(first)
            extra = first[n:] if n else first
            log(f"before the client spoke: {what} ({len(first)} bytes, {len(extra)} more)")
            s.sendall(f"250 {what} extra={len(extra)}\r\n".encode())
            s.settimeout(5.0)
            rest = extra
            try:
                while True:
                    while b"\n" in rest:
                        line, rest = rest.split(b"\n", 1)
                        s.sendall(b"250 " + line + b"\n")
                        if line.strip().upper() == b"QUIT":
                            return
                    b = s.recv(4096)
                    if not b:
                        return
                    rest += b
            except OSError:
                return

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in args.bind else socket.AF_INET

    code = 0
    try:
        with Server((args.bind, args.port), Handler) as srv:
            labutil.write_pid(args.pid_file)
            log(f"listening on tcp {args.bind}:{args.port}")
            labutil.write_pid(args.ready_file)
            srv.serve_forever()
    except SystemExit as e:
        code = labutil.exit_code(e)
    finally:
        labutil.remove_pid_files(args)
    sys.exit(code)


if __name__ == "__main__":
    main()
