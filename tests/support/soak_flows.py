#!/usr/bin/env python3
"""The soak's traffic (scripts/soak.sh): run in the lab's client namespace.

  soak_flows.py --plan PLAN.json --stop-file F --out OUT.json

PLAN is a JSON list of flow classes, each
  {"mode": "dr", "set": "protected", "kind": "long_down", "vip": IP,
   "port": 80, "servers": ["rs1", "rs2"] (or null: any), "src": [IP, ...]}
with kind one of
  long_down  GET /blob?size=N read at a limited rate (lasts seconds)
  long_up    POST /upload of N blob bytes sent at a limited rate
  short      GET /blob?size=N (1..64 KiB), one connection each (HTTP-like)
  udp        5 request/response exchanges from one new socket (one
             connection in dirigo's table), each retried on a lost datagram
One thread per class starts flows back to back until the stop file exists;
the flows in progress then run to their end. A flow is byte-exact when every
byte came back as sent (TCP: length and sha256 of the deterministic blob or
of what was uploaded, UDP: every reply is "<server>:" + its request) and
from an allowed server. OUT gets one record per class with the counts and
the first failures.
"""

import argparse
import hashlib
import json
import os
import random
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402

LONG_BYTES = 3 << 20  # a long flow: 3 MiB ...
LONG_RATE = 1 << 20  # ... at 1 MiB/s: about 3 s
TIMEOUT = 25.0  # any one socket operation (covers a link flap's retransmits)
CHURN_TIMEOUT = 8.0  # the same for flows to the churn set (they may hang)
UDP_EXCHANGES = 5
UDP_TRIES = 10
UDP_WAIT = 0.4


class Paced:
    """Sleeps so that `rate` bytes per second are not exceeded."""

    def __init__(self, rate):
        self.rate = rate
        self.t0 = time.monotonic()
        self.n = 0

    def done(self, n):
        self.n += n
        ahead = self.n / self.rate - (time.monotonic() - self.t0)
        if ahead > 0:
            time.sleep(ahead)


def connect(c):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT if c["set"] == "protected" else CHURN_TIMEOUT)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 128 << 10)
    s.bind((random.choice(c["src"]), 0))
    s.connect((c["vip"], c["port"]))
    return s


def read_head(s):
    """Status, headers (lower-case names) and the body bytes read so far."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the headers")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    hdr = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdr[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), hdr, rest


def get_blob(c, size, rate):
    """GET /blob?size=SIZE; (server, byte-exact, detail)."""
    s = connect(c)
    try:
        s.sendall(f"GET /blob?size={size} HTTP/1.1\r\nHost: vip\r\nConnection: close\r\n\r\n".encode())
        status, hdr, body = read_head(s)
        server = hdr.get("x-server", "?")
        if status != 200:
            return server, False, f"status {status}"
        want = int(hdr.get("content-length", "-1"))
        h = hashlib.sha256(body)
        got = len(body)
        pace = Paced(rate) if rate else None
        while got < want:
            chunk = s.recv(min(65536, want - got))
            if not chunk:
                return server, False, f"closed after {got} of {want} bytes"
            h.update(chunk)
            got += len(chunk)
            if pace:
                pace.done(len(chunk))
        exact = want == size and got == size and h.hexdigest() == hdr.get("x-sha256")
        return server, exact, "" if exact else f"{got} bytes, sha256 mismatch"
    finally:
        s.close()


def post_blob(c, size, rate):
    """POST /upload of the SIZE-byte blob; (server, byte-exact, detail)."""
    s = connect(c)
    try:
        s.sendall(
            f"POST /upload HTTP/1.1\r\nHost: vip\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n".encode()
        )
        h = hashlib.sha256()
        pace = Paced(rate)
        for chunk in labutil.blob_chunks(size, 16384):
            s.sendall(chunk)
            h.update(chunk)
            pace.done(len(chunk))
        status, hdr, body = read_head(s)
        server = hdr.get("x-server", "?")
        want = int(hdr.get("content-length", "0"))
        while len(body) < want:
            chunk = s.recv(4096)
            if not chunk:
                break
            body += chunk
        words = body.decode("latin-1").split()
        exact = status == 200 and words == [server, h.hexdigest(), str(size)]
        return server, exact, "" if exact else f"status {status}: {body[:100]!r}"
    finally:
        s.close()


def udp_flow(c):
    """UDP_EXCHANGES request/response exchanges on one socket."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((random.choice(c["src"]), 0))
    s.settimeout(UDP_WAIT)
    server = None
    try:
        for i in range(UDP_EXCHANGES):
            req = f"soak-{os.urandom(8).hex()}-{i}".encode()
            for _ in range(UDP_TRIES):
                s.sendto(req, (c["vip"], c["port"]))
                try:
                    while True:  # skip late answers to an earlier try
                        data, peer = s.recvfrom(2048)
                        name, _, echo = data.partition(b":")
                        if echo == req:
                            break
                except socket.timeout:
                    continue
                break
            else:
                return server or "?", False, f"exchange {i}: no answer in {UDP_TRIES} tries"
            name = name.decode("latin-1")
            if peer != (c["vip"], c["port"]):
                return name, False, f"answer from {peer}"
            if server not in (None, name):
                return name, False, f"moved from {server} to {name}"
            server = name
        return server, True, ""
    finally:
        s.close()


def one_flow(c):
    k = c["kind"]
    if k == "long_down":
        return get_blob(c, LONG_BYTES, LONG_RATE)
    if k == "long_up":
        return post_blob(c, LONG_BYTES, LONG_RATE)
    if k == "short":
        return get_blob(c, random.randint(1, 64 << 10), None)
    return udp_flow(c)


def run_class(c, stop, rec, t0):
    gap = {"long_down": 0.2, "long_up": 0.2, "short": 0.1, "udp": 0.05}[c["kind"]]
    while not os.path.exists(stop):
        rec["started"] += 1
        t = time.monotonic()
        try:
            server, exact, detail = one_flow(c)
        except (OSError, ValueError, IndexError) as e:
            server, exact, detail = "?", False, f"{type(e).__name__}: {e}"
        if exact and c["servers"] is not None and server not in c["servers"]:
            exact, detail = False, f"served by {server}, not one of {c['servers']}"
        rec["seconds_max"] = max(rec["seconds_max"], round(time.monotonic() - t, 2))
        rec["by_server"][server] = rec["by_server"].get(server, 0) + 1
        if exact:
            rec["completed"] += 1
            rec["byte_exact"] += 1
        else:
            rec["failed"] += 1
            if len(rec["failures"]) < 8:
                rec["failures"].append(f"t={t - t0:.1f}s {server}: {detail}")
        time.sleep(gap)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", required=True)
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.plan) as f:
        plan = json.load(f)
    t0 = time.monotonic()
    recs = []
    threads = []
    for c in plan:
        rec = {
            "mode": c["mode"],
            "set": c["set"],
            "kind": c["kind"],
            "started": 0,
            "completed": 0,
            "byte_exact": 0,
            "failed": 0,
            "seconds_max": 0.0,
            "by_server": {},
            "failures": [],
        }
        recs.append(rec)
        t = threading.Thread(target=run_class, args=(c, args.stop_file, rec, t0), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    labutil.write_file_atomic(args.out, json.dumps(recs, indent=1))


if __name__ == "__main__":
    main()
