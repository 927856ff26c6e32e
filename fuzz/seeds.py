#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets into fuzz/corpus/<target>/.

Frames are built here (Ethernet/IPv4/TCP/UDP/ICMP/ARP with correct
checksums) for the addresses the `pipeline` target configures: port 0 is
10.0.0.1/24 (clients 10.0.0.2-9), port 1 is 172.16.0.1/24 (real servers
172.16.0.11-15), VIPs 10.0.0.100 (tcp/80 NAT, tcp/443 DR persistent, udp/53
TUN) and 10.0.0.101 (tcp/80, DR/TUN/NAT). The text targets take the
repository's own files (conf/*.toml, the test fixtures) and a few command
and request lines. Run it again after changing the targets' configuration:

    python3 fuzz/seeds.py
"""

import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")

OUR_MAC = bytes([2, 0, 0, 0, 0, 0xD1])
CLIENT_MAC = bytes([2, 0, 0, 0, 1, 5])
RS_MAC = bytes([2, 0, 0, 0, 0, 11])
BCAST = b"\xff" * 6


def ip4(s):
    return bytes(int(x) for x in s.split("."))


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, payload, ttl=64, df=True, frag=0, options=b""):
    ihl = 5 + len(options) // 4
    flags = (0x4000 if df else 0) | frag
    h = struct.pack(
        "!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(payload), 0x4242, flags,
        ttl, proto, 0, ip4(src), ip4(dst)) + options
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def l4sum(src, dst, proto, seg):
    pseudo = ip4(src) + ip4(dst) + struct.pack("!BBH", 0, proto, len(seg))
    return csum(pseudo + seg)


SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08


def tcp(src, sport, dst, dport, flags, data=b"", seq=1000, ack=0):
    seg = struct.pack("!HHIIBBHHH", sport, dport, seq, ack if flags & ACK else 0,
                      5 << 4, flags, 64240, 0, 0) + data
    c = l4sum(src, dst, 6, seg)
    return ipv4(src, dst, 6, seg[:16] + struct.pack("!H", c) + seg[18:])


def udp(src, sport, dst, dport, data=b""):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    c = l4sum(src, dst, 17, seg) or 0xFFFF
    return ipv4(src, dst, 17, seg[:6] + struct.pack("!H", c) + seg[8:], df=False)


def icmp(src, dst, typ, code, rest, data):
    m = struct.pack("!BBH", typ, code, 0) + rest + data
    m = m[:2] + struct.pack("!H", csum(m)) + m[4:]
    return ipv4(src, dst, 1, m, df=False)


def eth(payload, dst=OUR_MAC, src=CLIENT_MAC, etype=0x0800, vlan=None):
    tag = struct.pack("!HH", 0x8100, vlan) if vlan is not None else b""
    return dst + src + tag + struct.pack("!H", etype) + payload


def arp(op, sha, spa, tha, tpa, dst=BCAST):
    body = struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + sha + ip4(spa) + tha + ip4(tpa)
    return eth(body, dst=dst, src=sha, etype=0x0806)


C, VIP, VIP2, OURS = "10.0.0.5", "10.0.0.100", "10.0.0.101", "10.0.0.1"
RS11 = "172.16.0.11"

syn80 = eth(tcp(C, 40000, VIP, 80, SYN))
ack80 = eth(tcp(C, 40000, VIP, 80, ACK, seq=1001, ack=5001))
data80 = eth(tcp(C, 40000, VIP, 80, ACK | PSH, b"GET / HTTP/1.0\r\n\r\n", seq=1001, ack=5001))
fin80 = eth(tcp(C, 40000, VIP, 80, FIN | ACK, seq=1019, ack=5001))
rst80 = eth(tcp(C, 40000, VIP, 80, RST, seq=1019))
synack_nat = eth(tcp(RS11, 8080, C, 40000, SYN | ACK, seq=5000, ack=1001), src=RS_MAC)
syn443 = eth(tcp(C, 40001, VIP, 443, SYN))
udp53 = eth(udp(C, 5353, VIP, 53, b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"))
syn_vip2 = eth(tcp("10.0.0.6", 41000, VIP2, 80, SYN))
big = eth(tcp(C, 40002, VIP2, 80, ACK, b"x" * 1460))
echo_ours = eth(icmp(C, OURS, 8, 0, b"\x00\x01\x00\x01", b"ping" * 8))
echo_vip = eth(icmp(C, VIP, 8, 0, b"\x00\x01\x00\x02", b"ping" * 8))
# frag-needed from a router about a NAT reply (quotes RS -> client)
quoted = tcp(RS11, 8080, C, 40000, ACK, seq=5001, ack=1001)[:28]
frag_needed = eth(icmp("172.16.0.254", RS11, 3, 4, b"\x00\x00\x05\x00", quoted), src=RS_MAC)
unreach_vip = eth(icmp("10.0.0.7", VIP, 3, 3, b"\x00\x00\x00\x00",
                       udp(VIP, 53, "10.0.0.7", 5353)[:28]))
arp_req = arp(1, CLIENT_MAC, C, b"\0" * 6, OURS)
arp_req_vip = arp(1, CLIENT_MAC, C, b"\0" * 6, VIP)
arp_reply_rs = eth(struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + bytes([2, 0, 0, 0, 0, 12])
                   + ip4("172.16.0.12") + OUR_MAC + ip4("172.16.0.1"),
                   src=bytes([2, 0, 0, 0, 0, 12]), etype=0x0806)
garp = arp(1, bytes([2, 0, 0, 0, 0, 15]), "172.16.0.15", b"\0" * 6, "172.16.0.15")
looped = arp(1, OUR_MAC, OURS, b"\0" * 6, C)
vlan_syn = eth(tcp(C, 40003, VIP, 80, SYN), vlan=100)
ttl1 = eth(tcp(C, 40004, VIP, 443, SYN)[:8] + b"\x01" + tcp(C, 40004, VIP, 443, SYN)[9:])
fragment = eth(ipv4(C, VIP, 17, b"\0" * 16, df=False, frag=0x2000))
options = eth(ipv4(C, VIP, 6, tcp(C, 40005, VIP, 80, SYN)[20:], options=b"\x01\x01\x01\x00"))
ospf = eth(ipv4("10.0.0.2", "224.0.0.5", 89, b"\x02\x01\x00\x2c" + b"\0" * 40, ttl=1),
           dst=bytes([1, 0, 0x5E, 0, 0, 5]))
ssh = eth(tcp(C, 50000, OURS, 22, SYN))
other_host = eth(tcp(C, 40006, VIP, 80, SYN), dst=bytes([2, 0, 0, 0, 0, 0x99]))
ipip = eth(ipv4("10.0.0.8", VIP, 4, tcp(C, 40007, VIP, 80, SYN)))

FRAMES = {
    "tcp_syn_nat": syn80, "tcp_ack": ack80, "tcp_data": data80, "tcp_fin": fin80,
    "tcp_rst": rst80, "nat_synack_reply": synack_nat, "tcp_syn_dr_persistent": syn443,
    "udp_tun": udp53, "tcp_syn_vip2": syn_vip2, "tcp_1460": big, "echo_ours": echo_ours,
    "echo_vip": echo_vip, "icmp_frag_needed": frag_needed, "icmp_unreach_vip": unreach_vip,
    "arp_request": arp_req, "arp_request_vip": arp_req_vip, "arp_reply": arp_reply_rs,
    "arp_gratuitous": garp, "arp_looped": looped, "vlan_syn": vlan_syn, "ttl1": ttl1,
    "fragment": fragment, "ip_options": options, "ospf_multicast": ospf, "ssh_local": ssh,
    "other_host": other_host, "ipip": ipip,
}


def op(kind, worker=0, port=0, step=0):
    return bytes([kind | worker << 3 | port << 4 | step << 5])


def fr(f):
    return struct.pack("!H", len(f)) + f


def one(f, worker=0, port=0, step=1):
    return op(0, worker, port, step) + fr(f)


def burst(frames, worker=0, port=0, step=1):
    return op(4, worker, port, step) + bytes([len(frames) - 1]) + b"".join(fr(f) for f in frames)


def control(answer=True, worker=0, step=2):
    return op(6 if answer else 5, worker, 0, step)


def local(f, port=0, step=1):
    return op(7, 0, port, step) + fr(f)


PROGRAMS = {
    # a NAT connection: handshake, the reply from the real server on port
    # 1, data, close
    "nat_flow": one(syn80) + one(synack_nat, port=1) + one(ack80) + one(data80)
    + one(fin80) + one(rst80, step=4),
    # DR persistent, TUN, the second VIP, each to both workers
    "modes": one(syn443) + one(syn443, worker=1) + one(udp53) + one(udp53, worker=1)
    + one(syn_vip2) + one(big, worker=1),
    # a burst of everything, received on port 0
    "burst_mixed": burst([syn80, ack80, syn443, udp53, echo_ours, arp_req, vlan_syn,
                          ttl1, fragment, other_host, ssh, ospf]),
    # a SYN scheduled to the unknown 172.16.0.12 is held, then resolved
    "hold_resolve": one(syn80) + one(eth(tcp(C, 40010, VIP, 80, SYN))) + control(False)
    + control(True) + one(arp_reply_rs, port=1) + control(True),
    # more connections than the tables hold, then time passes
    "fill_and_expire": b"".join(
        burst([eth(tcp("10.0.0.%d" % (2 + i % 8), 30000 + i * 32 + j, VIP, 80, SYN))
               for j in range(32)], worker=i % 2) for i in range(5))
    + op(0, 0, 0, 7) + fr(syn80) + op(0, 1, 0, 6) + fr(udp53),
    # ARP and ICMP, the kernel's share
    "arp_icmp": one(arp_req) + one(arp_req_vip) + one(garp, port=1) + one(looped)
    + one(looped, step=4) + one(echo_vip) + one(frag_needed, port=1) + one(unreach_vip)
    + one(ospf) + one(ssh) + one(ipip) + one(options),
    # health-check probes from the kernel interface through a VIP
    "local": local(syn80) + one(synack_nat, port=1) + local(ack80) + local(udp53),
}

REQUESTS = [
    '{"v":1,"id":1,"req":{"op":"list"}}',
    '{"v":1,"id":1,"req":{"op":"clear"}}',
    '{"v":1,"id":1,"req":{"op":"zero"}}',
    '{"v":1,"id":1,"req":{"op":"ports"}}',
    '{"v":1,"id":2,"req":{"op":"add_service","service":{"key":{"proto":"udp","vip":"1.2.3.4",'
    '"port":53},"sched":"rr"}}}',
    '{"v":1,"id":3,"req":{"op":"add_service","service":{"key":{"proto":"tcp","vip":"10.0.0.100",'
    '"port":443},"sched":"wlc","flags":{"sh_port":true},"persistent":300,"netmask":"255.255.255.0"}}}',
    '{"v":1,"id":4,"req":{"op":"add_dest","service":{"proto":"tcp","vip":"10.0.0.100","port":80},'
    '"dest":{"key":{"addr":"172.16.0.11","port":8080},"method":"nat","weight":1,"upper":0,"lower":0}}}',
    '{"v":1,"id":5,"req":{"op":"del_dest","service":{"proto":"tcp","vip":"10.0.0.100","port":80},'
    '"dest":{"addr":"172.16.0.11","port":8080}}}',
    '{"v":1,"id":6,"req":{"op":"set_timeouts","timeouts":{"tcp":900,"tcpfin":120,"udp":300}}}',
    '{"v":1,"id":7,"req":{"op":"restore_batch","cmds":[{"op":"clear"},{"op":"add_service",'
    '"service":{"key":{"proto":"tcp","vip":"10.0.0.1","port":80},"sched":"rr"}}]}}',
    '{"v":1,"id":42,"req":{"op":"addr_add","port":0,"addr":"10.0.0.1","prefix_len":24}}',
    '{"v":1,"id":42,"req":{"op":"addr_del","port":1,"addr":"10.0.0.1"}}',
    '{"v":1,"id":42,"req":{"op":"neigh_add","port":1,"addr":"10.0.0.2","mac":"02:00:00:00:00:01"}}',
    '{"v":1,"id":42,"req":{"op":"neigh_flush","port":null}}',
    '{"v":1,"id":42,"req":{"op":"list_conns","limit":100}}',
    '{"v":1,"id":42,"req":{"op":"reload"}}',
    '{"v":1,"id":42,"req":{"op":"health"}}',
    '{"v":1,"id":1,"ok":{"kind":"addresses","data":[{"port":0,"addr":"10.0.0.1","prefix_len":24}]}}',
    '{"v":1,"id":1,"err":{"code":"no_dest","msg":"No such destination","at":3}}',
    '{"v":1,"id":3,"ok":{"kind":"done"}}',
]

ADM = [
    "-A -t 10.0.0.100:80 -s rr",
    "-A -t 10.0.0.100:443 -s wlc -p 300 -M 255.255.255.0",
    "-a -t 10.0.0.100:80 -r 172.16.0.11:8080 -m -w 2",
    "-a -u 10.0.0.100:53 -r 172.16.0.14 -i -x 100 -y 50",
    "-e -t 10.0.0.100:80 -r 172.16.0.11:8080 -g -w 0",
    "-E -t10.0.0.100:http -s mh -b mh-fallback,mh-port",
    "-D -t 10.0.0.100:80",
    "-d -t 10.0.0.100:80 -r 172.16.0.11:8080",
    "-Ln --stats --exact",
    "-L -n -c",
    "-l --rate -t 10.0.0.100:80",
    "--set 900 120 300",
    "-Z",
    "-C",
    "-S -n",
    "--socket /run/dirigo.sock -L",
    "--add-service --tcp-service=10.0.0.100:80 --scheduler=sh --sched-flags=sh-port",
]



def sync_entry(proto, flags, state, cport, vport, dport, caddr, vaddr, daddr,
               fwmark=0, timeout=900, options=b""):
    """One IPv4 entry of an IPVS sync message (struct ip_vs_sync_v4)."""
    size = 36 + len(options)
    return struct.pack("!BBHIHHHHII4s4s4s", 0, proto, size, flags, state, cport, vport,
                       dport, fwmark, timeout, ip4(caddr), ip4(vaddr), ip4(daddr)) + options


def sync_message(entries, syncid=1, count=None):
    """A version 1 IPVS sync message: the header, each entry on a 4-byte boundary."""
    body = b""
    for e in entries:
        body += b"\0" * (-len(body) % 4) + e
    n = len(entries) if count is None else count
    return struct.pack("!BBHBBH", 0, syncid, 8 + len(body), n, 1, 0) + body


SEQ_DATA = bytes([1, 24]) + bytes(range(24))
SYNC_V6 = struct.pack("!BBHIHHHHII", 1, 17, 72, 3, 0, 5000, 53, 53, 0, 300) + (
    b"\x20\x01\x0d\xb8" + b"\0" * 11 + b"\x02") * 3
SYNC = {
    # what a Linux master sends: DR and NAT connections, a template, UDP
    "conns": sync_message([
        sync_entry(6, 0x0003, 1, 40000, 80, 80, C, VIP, "172.16.0.11"),
        sync_entry(6, 0x0000, 3, 40001, 80, 8080, C, VIP, "172.16.0.12", timeout=60),
        sync_entry(6, 0x1803, 0, 0, 443, 443, C, VIP, "172.16.0.13", timeout=300),
        sync_entry(17, 0x0002, 0, 5353, 53, 53, C, VIP, "172.16.0.14", fwmark=7),
    ], syncid=7),
    # a NAT connection with sequence-adjust data, then an IPv6 entry and
    # one with persistence-engine data and name
    "options": sync_message([
        sync_entry(6, 0x0600, 1, 40002, 80, 8080, C, VIP, "172.16.0.11", options=SEQ_DATA),
        SYNC_V6,
        sync_entry(17, 0x1003, 0, 5060, 5060, 5060, C, VIP, "172.16.0.15",
                   options=bytes([2, 4, 1, 2, 3, 4, 3, 3]) + b"sip"),
        sync_entry(6, 0x0003, 1, 40003, 80, 80, C, VIP, "172.16.0.11"),
    ]),
    "empty": sync_message([]),
    # the old version 0 format: count 1 in the first byte
    "version0": struct.pack("!BBH", 1, 0, 28) + struct.pack(
        "!BBHHH4s4s4sHH", 0, 6, 40000, 80, 80, ip4(C), ip4(VIP), ip4("172.16.0.11"), 3, 1),
}

# IPv6 packets for `ipv6_wire` (no Ethernet header): the client
# 2001:db8::2 and a VIP 2001:db8::64 on port 0's link.
def ip6(s):
    head, _, tail = s.partition("::")
    h = [int(x, 16) for x in head.split(":") if x]
    t = [int(x, 16) for x in tail.split(":") if x]
    return struct.pack("!8H", *(h + [0] * (8 - len(h) - len(t)) + t))


def ipv6(src, dst, nh, payload, hop=64):
    return struct.pack("!IHBB", 0x60000000, len(payload), nh, hop) + ip6(src) + ip6(dst) + payload


def icmp6(src, dst, typ, code, rest, data, hop=64, exts=b"", first=58):
    m = struct.pack("!BBH", typ, code, 0) + rest + data
    ph = ip6(src) + ip6(dst) + struct.pack("!IxxxB", len(m), 58)
    m = m[:2] + struct.pack("!H", csum(ph + m)) + m[4:]
    return ipv6(src, dst, first, exts + m, hop)


C6, VIP6, SNMC6 = "2001:db8::2", "2001:db8::64", "ff02::1:ff00:64"
LL_SRC = bytes([1, 1]) + CLIENT_MAC
LL_TGT = bytes([2, 1]) + OUR_MAC
IPV6 = {
    "ns": icmp6(C6, SNMC6, 135, 0, bytes(4), ip6(VIP6) + LL_SRC, hop=255),
    "ns_dad": icmp6("::", SNMC6, 135, 0, bytes(4), ip6(VIP6), hop=255),
    "ns_unicast": icmp6(C6, VIP6, 135, 0, bytes(4), ip6(VIP6), hop=255),
    "na": icmp6(VIP6, C6, 136, 0, bytes([0x60, 0, 0, 0]), ip6(VIP6) + LL_TGT, hop=255),
    "echo": icmp6(C6, VIP6, 128, 0, struct.pack("!HH", 0x1234, 1), b"abcdefgh"),
    "too_big": icmp6("2001:db8::1", C6, 2, 0, struct.pack("!I", 1280),
                     ipv6(C6, VIP6, 17, struct.pack("!HHHH", 5353, 53, 8, 0))),
    # Hop-by-Hop (PadN) -> Destination Options -> Routing -> AH -> ICMPv6
    "ext_chain": icmp6(C6, VIP6, 128, 0, struct.pack("!HH", 7, 7), b"", first=0, exts=(
        bytes([60, 0, 1, 4, 0, 0, 0, 0]) + bytes([43, 1, 1, 12]) + bytes(12)
        + bytes([51, 0, 0, 0, 0, 0, 0, 0]) + bytes([58, 4, 0, 0, 0, 0, 0x10, 1, 0, 0, 0, 1])
        + bytes(12))),
    "fragment": ipv6(C6, VIP6, 44, bytes([17, 0, 0, 1, 0, 0, 0, 9])
                     + struct.pack("!HHHH", 5353, 53, 16, 0) + bytes(8)),
}


def l4_6(src, dst, nh, seg):
    ph = ip6(src) + ip6(dst) + struct.pack("!IxxxB", len(seg), nh)
    return csum(ph + seg)


def tcp6(src, sport, dst, dport, flags, data=b""):
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1000, 1 if flags & ACK else 0,
                      5 << 4, flags, 64240, 0, 0) + data
    c = l4_6(src, dst, 6, seg)
    return ipv6(src, dst, 6, seg[:16] + struct.pack("!H", c) + seg[18:])


def udp6(src, sport, dst, dport, data=b""):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    c = l4_6(src, dst, 17, seg) or 0xFFFF
    return ipv6(src, dst, 17, seg[:6] + struct.pack("!H", c) + seg[8:])


def e6(p, src=CLIENT_MAC):
    return eth(p, src=src, etype=0x86DD)


# IPv6 services of the `pipeline` target: [2001:db8::64]:80 (NAT to
# [2001:db8:1::11]:8080, DR to 2001:db8:1::13), UDP [2001:db8::64]:53 (TUN
# to 2001:db8:1::14); 2001:db8:1::12 has no neighbour entry
RS6 = "2001:db8:1::11"
PROGRAMS6 = {
    "v6_nat_flow": b"".join(one(e6(tcp6(C6, 41000 + i, VIP6, 80, SYN)), worker=i % 2)
                            for i in range(4))
    + one(e6(tcp6(RS6, 8080, C6, 41000, SYN | ACK), src=RS_MAC), port=1)
    + one(e6(tcp6(C6, 41000, VIP6, 80, ACK, b"GET / HTTP/1.0\r\n\r\n")))
    + one(e6(tcp6(C6, 41000, VIP6, 80, FIN | ACK)), step=4),
    "v6_burst": burst([e6(tcp6(C6, 42000 + i, VIP6, 80, SYN)) for i in range(8)]
                      + [e6(udp6(C6, 5353, VIP6, 53, b"q")), e6(IPV6["too_big"]),
                         e6(IPV6["fragment"]), e6(IPV6["echo"])], worker=1),
}


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def copy_files(target, paths):
    for p in paths:
        name = os.path.relpath(p, ROOT).replace("/", "_")
        with open(p, "rb") as f:
            write(target, name, f.read())


def files_in(d, ext):
    d = os.path.join(ROOT, d)
    out = []
    for base, _, names in os.walk(d):
        out += [os.path.join(base, n) for n in sorted(names) if n.endswith(ext)]
    return sorted(out)


def main():
    # start over, keeping the inputs that once crashed (crash-*: every
    # crash found becomes a seed, beside its regression test)
    for base, _, names in os.walk(CORPUS):
        for n in names:
            if not n.startswith("crash-"):
                os.remove(os.path.join(base, n))
    for n, f in FRAMES.items():
        write("classify", n, f)
    for n, p in PROGRAMS.items():
        write("pipeline", n, p)
    for n, p in PROGRAMS6.items():
        write("pipeline", n, p)
    for n, m in SYNC.items():
        write("ipvs_sync", n, m)
    for n, p in IPV6.items():
        write("ipv6_wire", n, p)
        # the same packets in Ethernet frames, for the whole receive path
        # (classify, then the IPv6 responder); a group destination gets its
        # 33:33 MAC
        dst = p[24:40]
        mac = b"\x33\x33" + dst[12:] if dst[0] == 0xFF else OUR_MAC
        write("classify", "ipv6_" + n, eth(p, dst=mac, etype=0x86DD))
    for i, r in enumerate(REQUESTS):
        write("ctl_proto", "line%02d" % i, r.encode())
    for i, a in enumerate(ADM):
        write("adm_args", "argv%02d" % i, "\0".join(a.split()).encode())
    write("adm_args", "restore", "\n".join(ADM[:7]).encode())
    copy_files("config", files_in("conf", ".toml") + files_in("tests/fixtures/check", ".toml")
               + [os.path.join(ROOT, "debian", "dirigo.toml")])
    copy_files("keepalived", files_in("tests/fixtures/keepalived", ".conf"))
    total = sum(os.path.getsize(os.path.join(b, n))
                for b, _, ns in os.walk(CORPUS) for n in ns)
    print("fuzz/corpus: %d bytes" % total, file=sys.stderr)


if __name__ == "__main__":
    main()
