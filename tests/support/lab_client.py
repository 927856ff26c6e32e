#!/usr/bin/env python3
"""TCP client for the dirigo lab tests (stdlib only): many connections at once,
and connections held open while something else happens.

  lab_client.py conns HOST PORT N [--src IP[,IP...]]
      Open N TCP connections (all open at the same time), then send
      GET /whoami on each (HTTP/1.1 keep-alive) and print one JSON line per
      connection: {"i", "lport", "src", "name", "ok"}; then close them all.
      --src binds the connections round-robin to these local addresses.
  lab_client.py hold HOST PORT N --ready-file F --stop-file F [--interval S]
      Open N connections, GET /whoami on each, write a JSON list
      [{"i","lport","name"}] to the ready file; then every interval send
      GET /whoami again on every connection (one thread each) until the stop
      file exists; print one JSON summary line per connection:
      {"i","lport","name","rounds","fails","names","error"}, close, exit 0.
Exit status 1 when a connection cannot be opened or answered the first time.
"""

import argparse
import json
import os
import socket
import sys
import threading
import time


def whoami(s):
    """One GET /whoami on connection s; returns the server's name."""
    s.sendall(b"GET /whoami HTTP/1.1\r\nHost: vip\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed before headers")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    length = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    if length is None:
        raise ValueError("no Content-Length")
    while len(body) < length:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed in body")
        body += chunk
    return body[:length].decode().split()[0]


def open_conns(host, port, n, srcs, timeout):
    conns = []
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        if srcs:
            s.bind((srcs[i % len(srcs)], 0))
        s.connect((host, port))
        conns.append(s)
    return conns


def cmd_conns(a):
    srcs = a.src.split(",") if a.src else []
    conns = open_conns(a.host, a.port, a.n, srcs, a.timeout)
    ok = True
    for i, s in enumerate(conns):
        src, lport = s.getsockname()
        try:
            name, good = whoami(s), True
        except (OSError, ValueError) as e:
            name, good, ok = f"error:{e}", False, False
        print(json.dumps({"i": i, "lport": lport, "src": src, "name": name, "ok": good}))
    for s in conns:
        s.close()
    return 0 if ok else 1


def cmd_hold(a):
    conns = open_conns(a.host, a.port, a.n, [], a.timeout)
    info = []
    for i, s in enumerate(conns):
        info.append({"i": i, "lport": s.getsockname()[1], "name": whoami(s),
                     "rounds": 0, "fails": 0, "names": [], "error": None})
    tmp = a.ready_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump([{k: d[k] for k in ("i", "lport", "name")} for d in info], f)
    os.replace(tmp, a.ready_file)
    stop = threading.Event()

    def run(s, d):
        while not stop.is_set():
            try:
                name = whoami(s)
                d["rounds"] += 1
                if name not in d["names"]:
                    d["names"].append(name)
            except (OSError, ValueError) as e:
                d["fails"] += 1
                d["error"] = str(e)
                return
            stop.wait(a.interval)

    threads = [threading.Thread(target=run, args=(s, d), daemon=True) for s, d in zip(conns, info)]
    for t in threads:
        t.start()
    deadline = time.time() + a.max_time
    while not os.path.exists(a.stop_file) and time.time() < deadline:
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(a.timeout + 1)
    for d in info:
        print(json.dumps(d))
    for s in conns:
        s.close()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("conns", "hold"):
        p = sub.add_parser(name)
        p.add_argument("host")
        p.add_argument("port", type=int)
        p.add_argument("n", type=int)
        p.add_argument("--timeout", type=float, default=5.0)
        if name == "conns":
            p.add_argument("--src")
        else:
            p.add_argument("--ready-file", required=True)
            p.add_argument("--stop-file", required=True)
            p.add_argument("--interval", type=float, default=0.3)
            p.add_argument("--max-time", type=float, default=120.0)
    a = ap.parse_args()
    try:
        return cmd_conns(a) if a.cmd == "conns" else cmd_hold(a)
    except (OSError, ValueError) as e:
        print(f"lab_client: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
