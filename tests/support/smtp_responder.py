#!/usr/bin/env python3
"""A tiny SMTP responder for the dirigo health lab (stdlib only).

Greets every connection with "220 <name> ESMTP", answers HELO/EHLO with
"250 <name>", QUIT with "221" (then closes) and anything else with "500".
With --code-file, the greeting's code is read from that file at each
connection (e.g. 554 to refuse service), so a test can turn the server
down and up without stopping it.

Usage: smtp_responder.py --name rs1 [--bind 0.0.0.0] [--port 2525]
                         [--code-file FILE]
                         [--log FILE] [--pid-file FILE] [--ready-file FILE]
Exits cleanly on SIGTERM/SIGINT (removes pid/ready files).
"""

import argparse
import os
import socketserver
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--bind", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=2525)
    ap.add_argument("--code-file")
    labutil.helper_args(ap)
    args = ap.parse_args()
    log = labutil.start_helper(args, f"smtp_responder:{args.name}")

    def greeting_code():
        if args.code_file:
            try:
                with open(args.code_file) as f:
                    return int(f.read().strip() or "220")
            except (OSError, ValueError):
                pass
        return 220

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            code = greeting_code()
            self.wfile.write(f"{code} {args.name} ESMTP lab\r\n".encode())
            if code != 220:
                return
            for raw in self.rfile:
                cmd = raw.decode("ascii", "replace").strip()
                verb = cmd.split(" ", 1)[0].upper()
                if verb in ("HELO", "EHLO"):
                    log(f"{cmd} from {self.client_address[0]}")
                    self.wfile.write(f"250 {args.name}\r\n".encode())
                elif verb == "QUIT":
                    self.wfile.write(b"221 bye\r\n")
                    return
                else:
                    self.wfile.write(b"500 unknown command\r\n")

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True

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
