"""Parsing of the tunnel headers a dirigo TUN real server receives (stdlib only).

Used by ipip_decap.py and ip6ip6_decap.py. parse_gre and parse_gue take
one IPv4 packet as a raw socket hands it over (outer header included);
gre_body and gue_body what follows the outer header (an IPv6 raw socket
hands over no header). Each returns (kind, inner) where kind
names what was checked (e.g. "gre+csum", "gue+udpcsum"), or a reason string
when the packet is rejected.

* GRE (RFC 2784, with RFC 2890's key and sequence number): version 0, no
  routing (R) or strict-source-route bits, protocol type 0x0800 or 0x86DD;
  with the C bit the checksum (over the GRE header and payload) must verify.
* GUE (draft-ietf-intarea-gue) variant 0 over UDP to the given port: the UDP
  checksum verifies when it is not 0 (0: none, allowed in IPv4), version 0,
  a data message (C bit 0), the header length covers the optional fields
  (only the private-flags field is known: GUE_FLAG_PRIV); the inner protocol
  is 4 or 41. A remote checksum offload option (private flag bit 31, as
  Linux's fou writes it for a locally sent packet) is counted and refused:
  a director forwards packets whose checksums are complete and never writes
  it (Linux's ip_vs_xmit does not either).
"""

import socket

IPPROTO_GRE = 47
IPPROTO_UDP = 17

GRE_C = 0x8000
GRE_R = 0x4000
GRE_K = 0x2000
GRE_S = 0x1000
GRE_SSR = 0x0800
GRE_VER = 0x0007

GUE_FLAG_PRIV = 0x0001
GUE_PFLAG_REMCSUM = 0x80000000


def ones_sum(data, start=0):
    """The 16-bit one's complement sum of data (odd length padded), folded."""
    if len(data) % 2:
        data = bytes(data) + b"\0"
    s = start + sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def outer(pkt, proto, local):
    """(ihl, total) of a well-formed IPv4 outer header of protocol proto, or a reason."""
    if len(pkt) < 20:
        return "short outer"
    if pkt[0] >> 4 != 4:
        return "outer not ipv4"
    ihl = (pkt[0] & 0x0F) * 4
    if ihl < 20 or len(pkt) < ihl:
        return "bad outer ihl"
    if pkt[9] != proto:
        return "outer proto"
    if local is not None and pkt[16:20] != local:
        return "outer dst not local"
    total = int.from_bytes(pkt[2:4], "big")
    if total < ihl or total > len(pkt):
        return "bad outer length"
    return ihl, total


def inner_packet(data, proto):
    """The inner IPv4 (proto 4) or IPv6 (41) packet at the start of data, or a reason."""
    if proto == 4:
        if len(data) < 20 or data[0] >> 4 != 4:
            return "inner not ipv4"
        iihl = (data[0] & 0x0F) * 4
        ilen = int.from_bytes(data[2:4], "big")
        if iihl < 20 or ilen < iihl or ilen > len(data):
            return "bad inner length"
        return bytes(data[:ilen])
    if proto == 41:
        if len(data) < 40 or data[0] >> 4 != 6:
            return "inner not ipv6"
        ilen = 40 + int.from_bytes(data[4:6], "big")
        if ilen > len(data):
            return "bad inner length"
        return bytes(data[:ilen])
    return "inner proto"


def parse_gre(pkt, local):
    """GRE over IPv4: (kind, inner) or a reason."""
    o = outer(pkt, IPPROTO_GRE, local)
    if isinstance(o, str):
        return o
    ihl, total = o
    return gre_body(pkt[ihl:total])


def gre_body(gre):
    """The GRE header and what follows (any outer family): (kind, inner) or a reason."""
    if len(gre) < 4:
        return "short gre"
    flags = int.from_bytes(gre[0:2], "big")
    if flags & GRE_VER:
        return "gre version"
    if flags & (GRE_R | GRE_SSR):
        return "gre routing bits"
    ptype = int.from_bytes(gre[2:4], "big")
    hlen = 4 + 4 * sum(1 for b in (GRE_C, GRE_K, GRE_S) if flags & b)
    if len(gre) < hlen:
        return "short gre"
    kind = "gre"
    if flags & GRE_C:
        if ones_sum(gre) != 0xFFFF:
            return "gre checksum"
        kind += "+csum"
    if flags & GRE_K:
        kind += "+key"
    if flags & GRE_S:
        kind += "+seq"
    proto = {0x0800: 4, 0x86DD: 41}.get(ptype)
    if proto is None:
        return "gre protocol type"
    inner = inner_packet(gre[hlen:], proto)
    return inner if isinstance(inner, str) else (kind, inner)


def parse_gue(pkt, local, port):
    """GUE variant 0 over UDP/IPv4 to port: (kind, inner), None when the
    datagram is not for port (not a tunnel packet), or a reason."""
    o = outer(pkt, IPPROTO_UDP, local)
    if isinstance(o, str):
        return None if o in ("outer proto", "outer dst not local") else o
    ihl, total = o
    return gue_body(pkt[ihl:total], bytes(pkt[12:20]), port, False)


def gue_body(udp, addrs, port, ipv6):
    """The UDP header and what follows, addrs the outer source and
    destination (for the checksum's pseudo header): (kind, inner), None
    when not for port, or a reason. A zero checksum is allowed in IPv6
    too (RFC 6935's tunnels, as Linux sends it)."""
    if len(udp) < 8:
        return "short udp"
    if int.from_bytes(udp[2:4], "big") != port:
        return None
    ulen = int.from_bytes(udp[4:6], "big")
    if ulen < 8 or ulen > len(udp):
        return "bad udp length"
    udp = udp[:ulen]
    kind = "gue"
    if int.from_bytes(udp[6:8], "big") != 0:
        if ipv6:
            pseudo = addrs + ulen.to_bytes(4, "big") + bytes([0, 0, 0, IPPROTO_UDP])
        else:
            pseudo = addrs + bytes([0, IPPROTO_UDP]) + ulen.to_bytes(2, "big")
        if ones_sum(udp, ones_sum(pseudo)) != 0xFFFF:
            return "udp checksum"
        kind += "+udpcsum"
    gue = udp[8:]
    if len(gue) < 4:
        return "short gue"
    if gue[0] >> 6 != 0:
        return "gue version"
    if gue[0] & 0x20:
        return "gue control message"
    hlen = 4 + 4 * (gue[0] & 0x1F)
    if len(gue) < hlen:
        return "short gue"
    flags = int.from_bytes(gue[2:4], "big")
    need = 4
    if flags & GUE_FLAG_PRIV:
        need += 4
        if hlen < need:
            return "gue private flags missing"
        pflags = int.from_bytes(gue[4:8], "big")
        if pflags & GUE_PFLAG_REMCSUM:
            return "gue remcsum option"
        if pflags:
            return "gue unknown private flags"
    if flags & ~GUE_FLAG_PRIV:
        return "gue unknown flags"
    if hlen != need:
        return "gue header length"
    inner = inner_packet(gue[hlen:], gue[1])
    return inner if isinstance(inner, str) else (kind, inner)


def gue_sink(port, family=socket.AF_INET):
    """A UDP socket bound to port, so the kernel sends no port unreachable
    for the tunnel's datagrams (the raw socket gets a copy of each)."""
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind(("::", port))
    else:
        s.bind(("0.0.0.0", port))
    s.setblocking(False)
    return s
