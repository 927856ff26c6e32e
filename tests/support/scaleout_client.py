#!/usr/bin/env python3
"""HTTP transfers for the scale-out lab (stdlib only), each on a connection
of its own (so from its own source port: the router's ECMP hash spreads them).

  scaleout_client.py burst HOST N [--size B] [--parallel K]
      N short GET /blob?size=B, K at a time; each body's sha256 must equal
      the server's X-Sha256. Prints one JSON object:
      {"ok", "bad", "errors": [first few], "servers": {name: count}}.
  scaleout_client.py long HOST N --size B --rate BPS --ready-file F
      N downloads at once of GET /blob?size=B, each read at BPS bytes/s, so
      they last B/BPS seconds; the ready file is written once every one has
      its response headers. Prints one JSON line per transfer:
      {"i", "lport", "server", "received", "exact", "error", "seconds"}, and
      "retried" (the first attempt's error) for a connection that got no
      headers the first time and was tried again.
--port P (both): the service's port (80).
Exit 0 when every transfer was byte-exact, else 1.
"""

import argparse
import hashlib
import json
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True


PORT = 80


def get(host, size, rate=None, on_headers=None, timeout=30):
    """One GET /blob on a fresh connection to PORT: (lport, server, received, exact)."""
    s = socket.create_connection((host, PORT), timeout=timeout)
    try:
        lport = s.getsockname()[1]
        s.sendall(f"GET /blob?size={size} HTTP/1.1\r\nHost: vip\r\nConnection: close\r\n\r\n".encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the headers")
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        hdr = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            hdr[k.strip().lower().decode()] = v.strip().decode()
        length = int(hdr.get("content-length", "-1"))
        want = hdr.get("x-sha256", "")
        if on_headers:
            on_headers(lport)
        h = hashlib.sha256(body)
        got = len(body)
        start = time.monotonic()
        while got < length:
            chunk = s.recv(min(65536, max(1024, (rate or 65536) // 20)))
            if not chunk:
                break
            h.update(chunk)
            got += len(chunk)
            if rate:
                ahead = got / rate - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
        return lport, hdr.get("x-server", "?"), got, got == length and h.hexdigest() == want
    finally:
        s.close()


def burst(a):
    lock = threading.Lock()
    res = {"ok": 0, "bad": 0, "errors": [], "servers": {}}
    todo = list(range(a.n))

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                todo.pop()
            try:
                _, server, _, exact = get(a.host, a.size, timeout=10)
                err = None if exact else "not byte-exact"
            except OSError as e:
                server, exact, err = None, False, str(e)
            with lock:
                res["ok" if exact else "bad"] += 1
                if server:
                    res["servers"][server] = res["servers"].get(server, 0) + 1
                if err and len(res["errors"]) < 5:
                    res["errors"].append(err)

    ts = [threading.Thread(target=worker) for _ in range(a.parallel)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps(res), flush=True)
    return 0 if res["bad"] == 0 else 1


def long(a):
    results = [None] * a.n
    ready = threading.Semaphore(0)

    def one(i):
        t0 = time.monotonic()
        r = {"i": i, "lport": None, "server": None, "received": 0, "exact": False, "error": None}
        headers = []

        def on_headers(lport):
            r["lport"] = lport
            headers.append(1)
            ready.release()

        # a connection that did not get its headers (never established, on a
        # loaded machine) is tried once more before the ready file: the
        # transfers under test are the established ones (the retry is
        # reported, "retried")
        for attempt in (0, 1):
            try:
                lport, server, got, exact = get(a.host, a.size, a.rate, on_headers, timeout=a.timeout)
                r.update(lport=lport, server=server, received=got, exact=exact, error=None)
                if not exact:
                    r["error"] = "not byte-exact"
                break
            except OSError as e:
                r["error"] = f"{type(e).__name__}: {e}"
                if headers:
                    break
                if attempt == 0:
                    r["retried"] = r["error"]
                    continue
                ready.release()
        r["seconds"] = round(time.monotonic() - t0, 2)
        results[i] = r

    ts = [threading.Thread(target=one, args=(i,)) for i in range(a.n)]
    for t in ts:
        t.start()
    for _ in range(a.n):
        ready.acquire()
    with open(a.ready_file, "w") as f:
        f.write("ready\n")
    for t in ts:
        t.join()
    for r in results:
        print(json.dumps(r), flush=True)
    return 0 if all(r["exact"] for r in results) else 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("burst")
    b.add_argument("host")
    b.add_argument("n", type=int)
    b.add_argument("--size", type=int, default=4096)
    b.add_argument("--parallel", type=int, default=8)
    b.add_argument("--port", type=int, default=80)
    lg = sub.add_parser("long")
    lg.add_argument("host")
    lg.add_argument("n", type=int)
    lg.add_argument("--size", type=int, required=True)
    lg.add_argument("--rate", type=int, required=True)
    lg.add_argument("--ready-file", required=True)
    lg.add_argument("--timeout", type=float, default=10)
    lg.add_argument("--port", type=int, default=80)
    a = ap.parse_args()
    global PORT
    PORT = a.port
    return burst(a) if a.cmd == "burst" else long(a)


if __name__ == "__main__":
    sys.exit(main())
