#!/usr/bin/env python3
"""STAND-IN director for TUN mode (lab self-test only; stdlib only).

Opens a TUN device (IFF_TUN|IFF_NO_PI), sets it up; the caller routes the VIP
into it.  Every IPv4 packet read from it is sent IPIP-encapsulated by the
kernel (raw socket IPPROTO_IPIP, outer header built by the kernel, outer src
chosen by routing) to one of the real servers, picked per flow by a hash of
the inner (src, dst, proto, ports) so a TCP connection sticks to one RS.

Usage: ipip_encap.py --rip 10.98.0.11 [--rip ...] [--tun enc0]
                     [--log FILE] [--pid-file FILE] [--ready-file FILE]
"""

import argparse
import os
import socket
import subprocess
import sys
import zlib

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402

IPPROTO_IPIP = 4
IP_MTU_DISCOVER = getattr(socket, "IP_MTU_DISCOVER", 10)
IP_PMTUDISC_DONT = getattr(socket, "IP_PMTUDISC_DONT", 0)


def flow_key(pkt):
    ihl = (pkt[0] & 0x0F) * 4
    key = pkt[9:10] + pkt[12:20]
    if pkt[9] in (6, 17) and len(pkt) >= ihl + 4:
        key += pkt[ihl:ihl + 4]
    return key


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rip", action="append", required=True)
    ap.add_argument("--tun", default="enc0")
    labutil.helper_args(ap)
    args = ap.parse_args()

    log = labutil.start_helper(args, "ipip_encap")
    labutil.write_pid(args.pid_file)
    tun = labutil.open_tun(args.tun)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_IPIP)
    # Let the kernel fragment outer packets bigger than the LAN MTU.
    raw.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)
    subprocess.run(["ip", "link", "set", args.tun, "up"], check=True)
    log(f"tun={args.tun} rips={','.join(args.rip)} ready")
    labutil.write_pid(args.ready_file)
    sent = 0
    code = 0
    try:
        while True:
            pkt = os.read(tun, 65535)
            if len(pkt) < 20 or pkt[0] >> 4 != 4:
                continue
            rip = args.rip[zlib.crc32(flow_key(pkt)) % len(args.rip)]
            try:
                raw.sendto(pkt, (rip, 0))
            except OSError as e:
                log(f"send to {rip} failed: {e}")
                continue
            sent += 1
            if labutil.sampled(sent):
                log(f"encap #{sent} {labutil.addrs(pkt)} proto={pkt[9]} len={len(pkt)} -> {rip}")
    except SystemExit as e:
        code = labutil.exit_code(e)
    finally:
        raw.close()
        os.close(tun)
        labutil.remove_pid_files(args)
        log(f"stopped: encapsulated={sent}")
    sys.exit(code)


if __name__ == "__main__":
    main()
