#!/usr/bin/env python3
"""Long full-duplex TCP transfers for the dirigo flood tests (stdlib only).

  flood_transfer.py serve --port P [--log FILE] [--ready-file F] [--idle S]
      Echo server: every accepted connection is logged ("accept IP:PORT"),
      and everything it receives is sent back. A connection idle for --idle
      seconds (no byte in) is closed with unread data pending, as a real
      server with a read timeout does (the kernel then sends an RST).
  flood_transfer.py run HOST PORT --conns N --bytes B [--timeout S]
      Open N connections to HOST:PORT; on each, one thread sends B bytes of a
      deterministic pattern while another receives the echo and compares it
      byte for byte. Prints one JSON line per connection:
      {"i", "lport", "sent", "received", "exact", "error", "max_stall_s",
       "seconds", "connect_s", "stall_end_s"} where connect_s is how long the
      handshake took, max_stall_s the longest time either direction of the
      established connection made no progress, and stall_end_s when that
      stall ended (seconds after the start). --delay S waits S seconds before
      connecting. Exit 0 when
      every connection was byte-exact with no error, else 1.
"""

import argparse
import json
import os
import socket
import sys
import threading
import time

CHUNK = 65536


def pattern(offset, n):
    """n bytes of the pattern starting at stream offset `offset`."""
    # a 256-byte period shifted by offset: cheap and position-sensitive
    base = bytes(range(256)) * (CHUNK // 256 + 2)
    start = offset % 256
    out = bytearray()
    while len(out) < n:
        take = min(n - len(out), CHUNK)
        out += base[start:start + take]
        start = (start + take) % 256
    return bytes(out)


def serve(a):
    log = open(a.log, "a", buffering=1) if a.log else None
    # dual stack: IPv4 clients arrive as ::ffff:a.b.c.d, IPv6 ones as is
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", a.port))
    ls.listen(1024)
    if a.ready_file:
        with open(a.ready_file, "w") as f:
            f.write(str(os.getpid()))

    def echo(c, peer):
        c.settimeout(a.idle)
        try:
            while True:
                d = c.recv(CHUNK)
                if not d:
                    break
                c.sendall(d)
        except socket.timeout:
            if log:
                log.write(f"idle-close {peer[0]}:{peer[1]}\n")
        except OSError as e:
            if log:
                log.write(f"error {peer[0]}:{peer[1]} {e}\n")
        finally:
            c.close()

    while True:
        c, peer = ls.accept()
        if log:
            log.write(f"accept {peer[0]}:{peer[1]}\n")
        threading.Thread(target=echo, args=(c, peer), daemon=True).start()


def one(host, port, nbytes, timeout, res):
    t0 = time.monotonic()
    last = {"send": t0, "recv": t0}
    stall = [0.0, 0.0]  # longest stall, and when (seconds after start) it ended
    lock = threading.Lock()

    def progress(which):
        now = time.monotonic()
        with lock:
            if now - last[which] > stall[0]:
                stall[0], stall[1] = now - last[which], now - t0
            last[which] = now

    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(timeout)
    res.update(sent=0, received=0, exact=False, error=None, lport=0)
    try:
        s.connect((host, port))
    except OSError as e:
        res["error"] = f"connect: {e!r}"
        res["max_stall_s"] = time.monotonic() - t0
        return
    res["lport"] = s.getsockname()[1]
    res["connect_s"] = round(time.monotonic() - t0, 3)
    # stalls are measured from the established connection on
    last["send"] = last["recv"] = time.monotonic()
    errors = []

    def sender():
        off = 0
        try:
            while off < nbytes:
                n = min(CHUNK, nbytes - off)
                s.sendall(pattern(off, n))
                off += n
                res["sent"] = off
                progress("send")
        except OSError as e:
            errors.append(f"send: {e!r}")

    th = threading.Thread(target=sender, daemon=True)
    th.start()
    got = 0
    exact = True
    try:
        while got < nbytes:
            d = s.recv(CHUNK)
            if not d:
                errors.append("recv: closed by peer")
                break
            if d != pattern(got, len(d)):
                exact = False
            got += len(d)
            res["received"] = got
            progress("recv")
    except OSError as e:
        errors.append(f"recv: {e!r}")
    th.join(timeout)
    s.close()
    now = time.monotonic()
    # a direction that never finished stalled until now
    for which in ("send", "recv"):
        stall[0] = max(stall[0], now - last[which]) if errors else stall[0]
    res["exact"] = exact and got == nbytes and res["sent"] == nbytes
    res["error"] = "; ".join(errors) or None
    res["max_stall_s"] = round(stall[0], 3)
    res["stall_end_s"] = round(stall[1], 3)
    res["seconds"] = round(now - t0, 3)


def run(a):
    time.sleep(a.delay)
    results = [{"i": i} for i in range(a.conns)]
    threads = [
        threading.Thread(target=one, args=(a.host, a.port, a.bytes, a.timeout, r), daemon=True)
        for r in results
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = True
    for r in results:
        print(json.dumps(r), flush=True)
        ok = ok and r.get("exact") and not r.get("error")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--log")
    s.add_argument("--ready-file")
    s.add_argument("--idle", type=float, default=30.0)
    r = sub.add_parser("run")
    r.add_argument("host")
    r.add_argument("port", type=int)
    r.add_argument("--conns", type=int, default=4)
    r.add_argument("--bytes", type=int, default=32 << 20)
    r.add_argument("--timeout", type=float, default=30.0)
    r.add_argument("--delay", type=float, default=0.0)
    a = ap.parse_args()
    return serve(a) if a.cmd == "serve" else run(a)


if __name__ == "__main__":
    sys.exit(main())
