#!/usr/bin/env python3
"""Real-server HTTP application for the dirigo lab (stdlib only, threaded).

Endpoints (HTTP/1.1, keep-alive, always Content-Length):
  GET  /            -> "<name>\\n"
  GET  /whoami      -> "<name> local=<ip>:<port> peer=<ip>:<port>\\n"
  GET  /health      -> "ok\\n", or what --health-file says while it exists:
                       "STATUS BODY" (e.g. "503 down")
  GET  /blob[?size=N] -> deterministic blob of N bytes (default --blob-size);
                       header X-Sha256 carries its sha256 (see labutil.blob_sha256)
  POST /upload      -> reads Content-Length bytes, answers
                       "<name> <sha256-hex> <length>\\n"
Every response carries header X-Server: <name>.

Usage: rs_server.py --name rs1 [--bind 0.0.0.0] [--port 80] [--blob-size N]
                    [--health-file FILE]
                    [--log FILE] [--pid-file FILE] [--ready-file FILE]
Exits cleanly on SIGTERM/SIGINT (removes pid/ready files).
"""

import argparse
import hashlib
import http.server
import os
import socket
import socketserver
import sys
import threading
import urllib.parse

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402

MAX_BLOB = 1 << 31
MAX_UPLOAD = 1 << 31


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """Threaded HTTP server; allow fast restart on the same port."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


class Server6(Server):
    """The same on IPv6 only (IPV6_V6ONLY: beside an IPv4 instance on the
    same port)."""

    address_family = socket.AF_INET6

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        super().server_bind()


def health(path):
    """/health's answer: (status, body) from the file at `path` ("STATUS
    BODY"), or (200, b"ok\\n") when there is none."""
    if path:
        try:
            with open(path) as f:
                text = f.read().strip()
            status, _, body = text.partition(" ")
            return int(status), (body + "\n").encode()
        except (OSError, ValueError):
            pass
    return 200, b"ok\n"


def make_handler(name, blob_size, log, health_file=None):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "dirigo-lab-rs/1"

        def log_message(self, fmt, *args):
            log(f"{self.client_address[0]}:{self.client_address[1]} " + (fmt % args))

        def _send(self, code, body, extra=None):
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Server", name)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/":
                self._send(200, f"{name}\n".encode())
            elif url.path == "/health":
                status, body = health(health_file)
                self._send(status, body)
            elif url.path == "/whoami":
                local = self.connection.getsockname()
                peer = self.client_address
                body = f"{name} local={local[0]}:{local[1]} peer={peer[0]}:{peer[1]}\n"
                self._send(200, body.encode())
            elif url.path == "/blob":
                q = urllib.parse.parse_qs(url.query)
                try:
                    size = int(q.get("size", [str(blob_size)])[0])
                except ValueError:
                    size = -1
                if size < 0 or size > MAX_BLOB:
                    self._send(400, b"bad size\n")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(size))
                self.send_header("X-Server", name)
                self.send_header("X-Sha256", labutil.blob_sha256(size))
                self.end_headers()
                if self.command != "HEAD":
                    for chunk in labutil.blob_chunks(size):
                        self.wfile.write(chunk)
            else:
                self._send(404, b"not found\n")

        do_HEAD = do_GET

        def do_POST(self):
            if urllib.parse.urlsplit(self.path).path != "/upload":
                self._send(404, b"not found\n")
                return
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                length = -1
            if length < 0 or length > MAX_UPLOAD:
                self.close_connection = True
                self._send(411, b"need Content-Length\n")
                return
            h = hashlib.sha256()
            got = 0
            while got < length:
                chunk = self.rfile.read(min(65536, length - got))
                if not chunk:
                    break
                h.update(chunk)
                got += len(chunk)
            if got != length:
                self.close_connection = True
                log(f"short upload: {got} of {length}")
                return
            self._send(200, f"{name} {h.hexdigest()} {got}\n".encode())

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--bind", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--blob-size", type=int, default=4 << 20)
    ap.add_argument("--health-file", default=None)
    labutil.helper_args(ap)
    args = ap.parse_args()

    log = labutil.start_helper(args, f"rs_server:{args.name}")
    cls = Server6 if ":" in args.bind else Server
    srv = cls((args.bind, args.port), make_handler(args.name, args.blob_size, log, args.health_file))
    labutil.write_pid(args.pid_file)
    log(f"listening on {args.bind}:{args.port} blob_size={args.blob_size}")
    labutil.write_pid(args.ready_file)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    t.start()
    code = 0
    try:
        while t.is_alive():
            t.join(0.5)
    except SystemExit as e:
        code = labutil.exit_code(e)
    finally:
        srv.shutdown()
        srv.server_close()
        labutil.remove_pid_files(args)
        log("stopped")
    sys.exit(code)


if __name__ == "__main__":
    main()
