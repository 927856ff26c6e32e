#!/usr/bin/env python3
"""Self-test of tunparse.py (no root, no network): GRE and GUE packets built
here, good ones decapsulated, each kind of bad one refused with its reason.
Prints one line per check; exits 0 only when all pass.
Run by tests/vdev_tun_types.rs (tunparse_refuses_what_it_must)."""

import os
import socket
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tunparse as t  # noqa: E402

SRC4, DST4 = socket.inet_aton("10.98.0.1"), socket.inet_aton("10.98.0.11")
SRC6 = socket.inet_pton(socket.AF_INET6, "2001:db8:98::1")
DST6 = socket.inet_pton(socket.AF_INET6, "2001:db8:98::11")
INNER4 = bytes([0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0]) + socket.inet_aton(
    "10.99.0.2") + socket.inet_aton("10.99.0.100") + bytes(8)
INNER6 = bytes([0x60, 0, 0, 0, 0, 8, 17, 64]) + SRC6 + DST6 + bytes(8)
FAILED = []


def check(name, got, want):
    ok = got == want
    print(f"{'ok' if ok else 'FAILED'}: {name}: {got!r}" + ("" if ok else f" (want {want!r})"))
    if not ok:
        FAILED.append(name)


def ipv4(proto, payload):
    return bytes([0x45, 0]) + (20 + len(payload)).to_bytes(2, "big") + bytes(4) + bytes(
        [64, proto, 0, 0]) + SRC4 + DST4 + payload


def gre(flags, ptype, inner, csum_ok=True):
    h = bytearray(flags.to_bytes(2, "big") + ptype.to_bytes(2, "big"))
    if flags & t.GRE_C:
        h += bytes(4)
    body = h + inner
    if flags & t.GRE_C:
        c = 0xFFFF - t.ones_sum(body)
        body[4:6] = (c if csum_ok else c ^ 1).to_bytes(2, "big")
    return bytes(body)


def udp(payload, port=6080, csum=None, ipv6=False):
    u = bytearray((40000).to_bytes(2, "big") + port.to_bytes(2, "big")
                  + (8 + len(payload)).to_bytes(2, "big") + bytes(2) + payload)
    if csum is not None:
        if ipv6:
            ps = SRC6 + DST6 + len(u).to_bytes(4, "big") + bytes([0, 0, 0, 17])
        else:
            ps = SRC4 + DST4 + bytes([0, 17]) + len(u).to_bytes(2, "big")
        c = 0xFFFF - t.ones_sum(u, t.ones_sum(ps))
        u[6:8] = (c if csum else c ^ 1).to_bytes(2, "big")
    return bytes(u)


def kind(r):
    return r[0] if isinstance(r, tuple) else r


def main():
    check("gre", kind(t.parse_gre(ipv4(47, gre(0, 0x0800, INNER4)), DST4)), "gre")
    check("gre inner", t.parse_gre(ipv4(47, gre(0, 0x0800, INNER4)), DST4)[1], INNER4)
    check("gre+csum", kind(t.parse_gre(ipv4(47, gre(t.GRE_C, 0x0800, INNER4)), None)), "gre+csum")
    check("gre bad csum", t.parse_gre(ipv4(47, gre(t.GRE_C, 0x0800, INNER4, False)), None),
          "gre checksum")
    check("gre version 1", t.parse_gre(ipv4(47, gre(1, 0x0800, INNER4)), None), "gre version")
    check("gre routing", t.parse_gre(ipv4(47, gre(t.GRE_R, 0x0800, INNER4)), None),
          "gre routing bits")
    check("gre type", t.parse_gre(ipv4(47, gre(0, 0x6558, INNER4)), None), "gre protocol type")
    check("gre not local", t.parse_gre(ipv4(47, gre(0, 0x0800, INNER4)), SRC4),
          "outer dst not local")
    check("gre ipv6 inside", kind(t.gre_body(gre(t.GRE_C, 0x86DD, INNER6))), "gre+csum")
    check("gre short inner", t.gre_body(gre(0, 0x0800, INNER4[:24])), "bad inner length")
    g4, g6 = bytes([0, 4, 0, 0]) + INNER4, bytes([0, 41, 0, 0]) + INNER6
    check("gue", kind(t.parse_gue(ipv4(17, udp(g4)), DST4, 6080)), "gue")
    check("gue inner", t.parse_gue(ipv4(17, udp(g4)), DST4, 6080)[1], INNER4)
    check("gue csum", kind(t.parse_gue(ipv4(17, udp(g4, csum=True)), None, 6080)), "gue+udpcsum")
    check("gue bad csum", t.parse_gue(ipv4(17, udp(g4, csum=False)), None, 6080), "udp checksum")
    check("other port", t.parse_gue(ipv4(17, udp(g4, port=53)), None, 6080), None)
    check("gue version 1", t.parse_gue(ipv4(17, udp(bytes([0x40, 4, 0, 0]) + INNER4)), None, 6080),
          "gue version")
    check("gue control", t.parse_gue(ipv4(17, udp(bytes([0x20, 4, 0, 0]) + INNER4)), None, 6080),
          "gue control message")
    remcsum = bytes([1, 4, 0, 1]) + (t.GUE_PFLAG_REMCSUM).to_bytes(4, "big") + INNER4
    check("gue remcsum option", t.parse_gue(ipv4(17, udp(remcsum)), None, 6080),
          "gue remcsum option")
    priv0 = bytes([1, 4, 0, 1]) + bytes(4) + INNER4
    check("gue empty private flags", kind(t.parse_gue(ipv4(17, udp(priv0)), None, 6080)), "gue")
    check("gue unknown flag", t.parse_gue(ipv4(17, udp(bytes([0, 4, 0x80, 0]) + INNER4)), None,
                                          6080), "gue unknown flags")
    check("gue hlen", t.parse_gue(ipv4(17, udp(bytes([1, 4, 0, 0]) + bytes(4) + INNER4)), None,
                                  6080), "gue header length")
    check("gue proto", t.parse_gue(ipv4(17, udp(bytes([0, 6, 0, 0]) + INNER4)), None, 6080),
          "inner proto")
    check("gue6", kind(t.gue_body(udp(g6, ipv6=True), SRC6 + DST6, 6080, True)), "gue")
    check("gue6 csum", kind(t.gue_body(udp(g6, csum=True, ipv6=True), SRC6 + DST6, 6080, True)),
          "gue+udpcsum")
    check("gue6 bad csum", t.gue_body(udp(g6, csum=False, ipv6=True), SRC6 + DST6, 6080, True),
          "udp checksum")
    if FAILED:
        sys.exit(f"tunparse self-test: {len(FAILED)} failed: {FAILED}")
    print("tunparse self-test: all passed")


if __name__ == "__main__":
    main()
