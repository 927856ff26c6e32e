#!/usr/bin/env python3
"""STAND-IN director and test sender for IPv6 TUN mode (lab self-test only; stdlib only).

The IPv6 twin of ipip_encap.py: packets leave as IPv6-in-IPv6 (outer next
header 41, what IPVS sends an IPv6 real server in tunnel mode), through a raw
socket(AF_INET6, SOCK_RAW, 41): the kernel builds the outer header (outer src
chosen by routing) and fragments outer packets bigger than the link MTU.

Stand-in director (default): opens a TUN device (IFF_TUN|IFF_NO_PI) with
IPv6 on, no DAD and no link-local address, sets it up; the caller routes the
VIP (/128) into it. Every IPv6 packet read from it is sent encapsulated to one
of the real servers, picked per flow by a hash of the inner (next header, src,
dst, ports) so a TCP connection sticks to one RS. A real kernel TCP client can
then talk to the VIP; the real server answers it directly.

  ip6ip6_encap.py --rip 2001:db8:e::2 [--rip ...] [--tun enc6]
                  [--log FILE] [--pid-file FILE] [--ready-file FILE]

One-shot sender (--send udp|syn): builds inner IPv6/UDP (payload --payload)
or IPv6/TCP SYN packets (checksums correct) from --src to --dst and sends
--count of them encapsulated to the first --rip, then (--timeout > 0) waits
for the real server's direct answers to --src and prints one line each:
  reply udp [VIP]:DPORT -> [SRC]:SPORT payload=...
  reply tcp [VIP]:DPORT -> [SRC]:SPORT flags=SA
  icmp6 type=T code=C from ADDR
Exit status 0 when every packet got its answer (or no wait asked), 1 when an
answer is missing, 2 on a usage/setup error. For udp, --src must be a local
address (a UDP socket is bound to --src:--sport to receive the answers); the
kernel answers an unexpected SYN/ACK with a RST, which is harmless here.

  ip6ip6_encap.py --send udp --rip RIP6 --src CLIENT6 --dst VIP6 --dport 7
                  [--sport 40000] [--payload ping] [--count 1] [--timeout 2]
"""

import argparse
import os
import select
import socket
import struct
import subprocess
import sys
import time
import zlib

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labutil  # noqa: E402

IPPROTO_IPV6_ENCAP = 41
IPV6_MTU_DISCOVER = getattr(socket, "IPV6_MTU_DISCOVER", 23)
IPV6_PMTUDISC_DONT = 0


def flow_key(pkt):
    key = pkt[6:7] + pkt[8:40]
    if pkt[6] in (6, 17) and len(pkt) >= 44:
        key += pkt[40:44]
    return key


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv6_packet(src, dst, nh, l4):
    """An IPv6 header (hop limit 64) + `l4`, whose checksum field (at
    offset 6 for UDP, 16 for TCP) is filled in over the pseudo-header."""
    pseudo = src + dst + struct.pack("!I3xB", len(l4), nh)
    off = 6 if nh == 17 else 16
    l4 = bytearray(l4)
    c = checksum(pseudo + bytes(l4))
    if nh == 17 and c == 0:
        c = 0xFFFF  # RFC 8200: a zero UDP checksum is sent as all ones
    l4[off:off + 2] = struct.pack("!H", c)
    return struct.pack("!IHBB", 6 << 28, len(l4), nh, 64) + src + dst + bytes(l4)


def udp_packet(src, dst, sport, dport, payload):
    l4 = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    return ipv6_packet(src, dst, 17, l4)


def syn_packet(src, dst, sport, dport, seq):
    # data offset 6 words: one MSS option (1440)
    l4 = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 6 << 4, 0x02, 64240, 0, 0)
    l4 += struct.pack("!BBH", 2, 4, 1440)
    return ipv6_packet(src, dst, 6, l4)


def encap_socket():
    raw = socket.socket(socket.AF_INET6, socket.SOCK_RAW, IPPROTO_IPV6_ENCAP)
    # Let the kernel fragment outer packets bigger than the link MTU.
    raw.setsockopt(socket.IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DONT)
    return raw


def send_mode(args):
    a6 = socket.AF_INET6
    try:
        src = socket.inet_pton(a6, args.src)
        dst = socket.inet_pton(a6, args.dst)
        socket.inet_pton(a6, args.rip[0])
    except (OSError, TypeError):
        print("ip6ip6_encap: --send needs IPv6 --src, --dst and --rip", file=sys.stderr)
        return 2
    if args.dport is None:
        print("ip6ip6_encap: --send needs --dport", file=sys.stderr)
        return 2
    waiting = args.timeout > 0
    listen = []
    try:
        raw = encap_socket()
        icmp = socket.socket(a6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        listen.append(icmp)
        if args.send == "udp":
            rx = socket.socket(a6, socket.SOCK_DGRAM)
            rx.bind((args.src, args.sport))
        else:
            # a raw TCP socket sees a copy of every incoming segment (payload
            # from the TCP header on)
            rx = socket.socket(a6, socket.SOCK_RAW, socket.IPPROTO_TCP)
        listen.append(rx)
    except OSError as e:
        print(f"ip6ip6_encap: socket setup failed: {e}", file=sys.stderr)
        return 2
    for i in range(args.count):
        if args.send == "udp":
            pkt = udp_packet(src, dst, args.sport, args.dport, args.payload.encode())
        else:
            pkt = syn_packet(src, dst, args.sport + i, args.dport, 0x1000 + i)
        try:
            raw.sendto(pkt, (args.rip[0], 0))
        except OSError as e:
            print(f"ip6ip6_encap: send to {args.rip[0]} failed: {e}", file=sys.stderr)
            return 2
        print(f"sent {args.send} [{args.src}]:{args.sport + (i if args.send == 'syn' else 0)} -> "
              f"[{args.dst}]:{args.dport} len={len(pkt)} via {args.rip[0]}", flush=True)
    if not waiting:
        return 0
    got = 0
    end = time.monotonic() + args.timeout
    while got < args.count:
        left = end - time.monotonic()
        if left <= 0:
            break
        for s in select.select(listen, [], [], left)[0]:
            data, peer = s.recvfrom(65535)
            if s is icmp:
                if data[0] < 128:  # errors only, not our own echo/ND traffic
                    print(f"icmp6 type={data[0]} code={data[1]} from {peer[0]}", flush=True)
            elif args.send == "udp":
                got += 1
                print(f"reply udp [{peer[0]}]:{peer[1]} -> [{args.src}]:{args.sport} "
                      f"payload={data.decode(errors='replace')}", flush=True)
            elif (len(data) >= 14 and peer[0] == args.dst
                  and struct.unpack("!H", data[0:2])[0] == args.dport
                  and args.sport <= struct.unpack("!H", data[2:4])[0] < args.sport + args.count):
                flags = data[13]
                names = "".join(n for b, n in ((0x02, "S"), (0x10, "A"), (0x04, "R")) if flags & b)
                if flags & 0x12 == 0x12:
                    got += 1
                print(f"reply tcp [{peer[0]}]:{args.dport} -> [{args.src}]:"
                      f"{struct.unpack('!H', data[2:4])[0]} flags={names}", flush=True)
    if got < args.count:
        print(f"ip6ip6_encap: {got} of {args.count} answers within {args.timeout} s", file=sys.stderr)
        return 1
    return 0


def standin_mode(args):
    log = labutil.start_helper(args, "ip6ip6_encap")
    labutil.write_pid(args.pid_file)
    tun = labutil.open_tun(args.tun)
    raw = encap_socket()
    base = f"net.ipv6.conf.{args.tun}"
    labutil.sysctl(f"{base}.disable_ipv6", 0)
    labutil.sysctl(f"{base}.accept_dad", 0)
    labutil.sysctl(f"{base}.router_solicitations", 0)
    subprocess.run(["ip", "link", "set", "dev", args.tun, "addrgenmode", "none"], check=True)
    subprocess.run(["ip", "link", "set", args.tun, "up"], check=True)
    log(f"tun={args.tun} rips={','.join(args.rip)} ready")
    labutil.write_pid(args.ready_file)
    sent = 0
    code = 0
    try:
        while True:
            pkt = os.read(tun, 65535)
            if len(pkt) < 40 or pkt[0] >> 4 != 6:
                continue
            rip = args.rip[zlib.crc32(flow_key(pkt)) % len(args.rip)]
            try:
                raw.sendto(pkt, (rip, 0))
            except OSError as e:
                log(f"send to {rip} failed: {e}")
                continue
            sent += 1
            if labutil.sampled(sent):
                a = (socket.inet_ntop(socket.AF_INET6, pkt[8:24]),
                     socket.inet_ntop(socket.AF_INET6, pkt[24:40]))
                log(f"encap #{sent} {a[0]}->{a[1]} proto={pkt[6]} len={len(pkt)} -> {rip}")
    except SystemExit as e:
        code = labutil.exit_code(e)
    finally:
        raw.close()
        os.close(tun)
        labutil.remove_pid_files(args)
        log(f"stopped: encapsulated={sent}")
    return code


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rip", action="append", required=True)
    ap.add_argument("--tun", default="enc6")
    labutil.helper_args(ap)
    ap.add_argument("--send", choices=("udp", "syn"))
    ap.add_argument("--src")
    ap.add_argument("--dst")
    ap.add_argument("--sport", type=int, default=40000)
    ap.add_argument("--dport", type=int)
    ap.add_argument("--payload", default="ping")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=2.0)
    args = ap.parse_args()
    if args.send:
        sys.exit(send_mode(args))
    sys.exit(standin_mode(args))


if __name__ == "__main__":
    main()
