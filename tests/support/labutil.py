"""Shared helpers for the dirigo lab support scripts (Python 3 stdlib only).

Used by rs_server.py, udp_echo.py, ipip_decap.py and ipip_encap.py: logging to a
file, pid/ready files, SIGTERM handling, the deterministic test blob, and TUN
device creation.
"""

import fcntl
import hashlib
import os
import signal
import socket
import struct
import sys
import time

# <linux/if_tun.h>
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000

BLOB_SEED = b"dirigo-lab-blob"


class Log:
    """Line logger with UTC timestamps to a file (or stderr when path is None)."""

    def __init__(self, path, tag):
        self.tag = tag
        self.fh = open(path, "a", buffering=1) if path else sys.stderr

    def __call__(self, msg):
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        self.fh.write(f"{ts} {self.tag}[{os.getpid()}] {msg}\n")
        self.fh.flush()


def write_file_atomic(path, text):
    """Write text to path via a temporary file and rename (readers never see partial)."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def remove_quiet(path):
    """Remove a file if it exists."""
    if path:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def on_sigterm_exit():
    """Make SIGTERM/SIGINT raise SystemExit so `finally` blocks run.

    Only the first one: a second signal (`timeout` sends SIGTERM to its child
    and then to its whole process group) would otherwise interrupt the
    `finally` block itself and the program would exit 143 without cleaning up.
    """

    def handler(signum, _frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def helper_args(ap):
    """The options of every lab helper daemon: --log, --pid-file, --ready-file."""
    for opt in ("--log", "--pid-file", "--ready-file"):
        ap.add_argument(opt)


def start_helper(args, tag):
    """Log as `tag` to --log (stderr without), exit on SIGTERM/SIGINT."""
    log = Log(args.log, tag)
    on_sigterm_exit()
    return log


def write_pid(path):
    """Write our pid to `path` (--pid-file, --ready-file) if it is given."""
    if path:
        write_file_atomic(path, f"{os.getpid()}\n")


def exit_code(e):
    """The exit status for a SystemExit: 0 when a signal asked us to stop."""
    return 0 if e.code in (128 + 15, 128 + 2) else e.code


def remove_pid_files(args):
    """Remove the --ready-file and --pid-file."""
    remove_quiet(args.ready_file)
    remove_quiet(args.pid_file)


def addrs(ip):
    """`src->dst` of an IPv4 header, for logs."""
    return f"{socket.inet_ntoa(ip[12:16])}->{socket.inet_ntoa(ip[16:20])}"


def sampled(n):
    """Whether the n-th packet is logged: the first three, then every 10000th."""
    return n <= 3 or n % 10000 == 0


def blob_chunks(size, chunk=65536):
    """Yield the deterministic test blob of `size` bytes in chunks.

    Byte stream = concat over k of sha256(BLOB_SEED || k as 8-byte big endian),
    truncated to `size`.  Anyone can recompute it (see blob_sha256).
    """
    k = 0
    buf = bytearray()
    remaining = size
    while remaining > 0:
        while len(buf) < min(chunk, remaining):
            buf += hashlib.sha256(BLOB_SEED + k.to_bytes(8, "big")).digest()
            k += 1
        n = min(chunk, remaining)
        yield bytes(buf[:n])
        del buf[:n]
        remaining -= n


def blob_bytes(size):
    """The whole deterministic blob (use for small sizes only)."""
    return b"".join(blob_chunks(size))


def blob_sha256(size):
    """Hex sha256 of the deterministic blob of `size` bytes."""
    h = hashlib.sha256()
    for c in blob_chunks(size):
        h.update(c)
    return h.hexdigest()


def open_tun(name):
    """Create (or attach to) TUN device `name` with IFF_TUN|IFF_NO_PI; return fd."""
    fd = os.open("/dev/net/tun", os.O_RDWR)
    ifr = struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI)
    fcntl.ioctl(fd, TUNSETIFF, ifr)
    return fd


def sysctl(key, value):
    """Set a sysctl via /proc/sys (key in dotted form)."""
    with open("/proc/sys/" + key.replace(".", "/"), "w") as f:
        f.write(str(value))


if __name__ == "__main__":
    # `python3 labutil.py blob-sha256 SIZE` prints the expected sha256 of /blob.
    # `python3 labutil.py blob SIZE > file` writes the blob itself.
    if len(sys.argv) == 3 and sys.argv[1] == "blob-sha256":
        print(blob_sha256(int(sys.argv[2])))
    elif len(sys.argv) == 3 and sys.argv[1] == "blob":
        out = sys.stdout.buffer
        for c in blob_chunks(int(sys.argv[2])):
            out.write(c)
    else:
        sys.exit("usage: labutil.py blob-sha256 SIZE | blob SIZE")
