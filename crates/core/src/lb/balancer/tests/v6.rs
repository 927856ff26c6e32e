//! IPv6 services through the worker (sans-IO, injected clock): frames
//! built by etherparse, classified by the real classifier, answers
//! compared byte for byte with etherparse's.

use super::*;
use crate::lb::spec::DestSpec;
use crate::net::classify::{classify, Classified};
use crate::net::meta::PacketMeta6;
use etherparse::PacketBuilder;

fn v6(a: u128) -> std::net::IpAddr {
    std::net::IpAddr::V6(a.into())
}

pub(super) fn svc6(proto: Proto, port: u16) -> ServiceSpec {
    let mut s = svc(proto, port);
    s.key.vip = v6(VIP6);
    s
}

pub(super) fn dest6(a: u128, port: u16, method: Method, weight: u32) -> DestSpec {
    let mut d = dest([0, 0, 0, 0], port, method, weight);
    d.key.addr = v6(a);
    d
}

pub(super) fn meta6(f: &[u8]) -> PacketMeta6 {
    match classify(f, 0) {
        Classified::Ipv6(m) => m,
        other => panic!("not an IPv6 packet for the balancer: {other:?}"),
    }
}

/// An Ethernet/IPv6/TCP frame; `eth` is (source MAC, destination MAC).
#[allow(clippy::too_many_arguments)]
pub(super) fn tcp6_frame(
    src: u128,
    sport: u16,
    dst: u128,
    dport: u16,
    flags: u8,
    payload: &[u8],
    hop: u8,
    eth: ([u8; 6], [u8; 6]),
) -> Vec<u8> {
    let mut v = Vec::new();
    let b = PacketBuilder::ethernet2(eth.0, eth.1)
        .ipv6(src.to_be_bytes(), dst.to_be_bytes(), hop)
        .tcp(sport, dport, 1000, 64240);
    let b = if flags & SYN != 0 { b.syn() } else { b };
    let b = if flags & ACK != 0 { b.ack(1) } else { b };
    let b = if flags & FIN != 0 { b.fin() } else { b };
    let b = if flags & RST != 0 { b.rst() } else { b };
    b.write(&mut v, payload).unwrap();
    v
}

pub(super) fn from_client(flags: u8, cport: u16, dport: u16) -> Vec<u8> {
    tcp6_frame(
        CLIENT6,
        cport,
        VIP6,
        dport,
        flags,
        b"",
        64,
        (CLIENT_MAC, OUR_MAC),
    )
}

impl Env {
    pub(super) fn send6(
        &mut self,
        snap: &Snapshot,
        frame: &[u8],
        now: u64,
    ) -> (LbVerdict, Vec<u8>) {
        let m = meta6(frame);
        let mut b = VecBuf::new(frame);
        let v = self
            .w
            .process6(&BurstCtx::new(snap, &self.eg, now), &mut b, &m);
        (v, b.to_vec())
    }
}

#[test]
fn dr6_lifecycle_counters_and_listing() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, 0, Method::Dr, 1)]);
    });
    let syn = from_client(SYN, 40000, 80);
    let (v, out) = e.send6(&s, &syn, 10 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let mut want = syn.clone();
    want[0..6].copy_from_slice(&mac_of([0, 0, 0, 0x21]));
    want[6..12].copy_from_slice(&OUR_MAC);
    assert_eq!(out, want, "DR changes the MACs only");
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    let (v, _) = e.send6(&s, &from_client(ACK, 40000, 80), 11 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    let c: Vec<_> = e.w.conns(11 * S).collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].state, "ESTABLISHED");
    assert_eq!(c[0].client.to_string(), "[2001:db8:c0::7]:40000");
    assert_eq!(c[0].vip.to_string(), "[2001:db8:f0::10]:80");
    assert_eq!(c[0].rs.to_string(), "[2001:db8:1::21]:80");
    // the IPv4 table is untouched; the conns gauge counts both
    assert_eq!(e.w.table().len(), 0);
    assert_eq!(e.w.table6().len(), 1);
    assert_eq!(e.w.stats().conns.load(Relaxed), 1);
    // expiry: 900 s later the sweep removes it and gives its count back
    let n = e.w.expire6(2000 * S, 4096);
    assert_eq!(n, 1);
    assert_eq!(e.load(&s, 0, 0), (0, 0));
    assert_eq!(e.w.stats().conns.load(Relaxed), 0);
}

#[test]
fn nat6_both_directions_byte_exact() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![dest6(RIP6, 8080, Method::Nat, 1)],
        );
    });
    let (v, out) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let want = tcp6_frame(
        CLIENT6,
        40000,
        RIP6,
        8080,
        SYN,
        b"",
        63,
        (OUR_MAC, mac_of([0, 0, 0, 0x21])),
    );
    assert_eq!(out, want, "request: VIP:80 -> RIP:8080, hop limit - 1");
    let synack = tcp6_frame(
        RIP6,
        8080,
        CLIENT6,
        40000,
        SYN | ACK,
        b"",
        64,
        (mac_of([0, 0, 0, 0x21]), OUR_MAC),
    );
    let (v, out) = e.send6(&s, &synack, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let want = tcp6_frame(
        VIP6,
        80,
        CLIENT6,
        40000,
        SYN | ACK,
        b"",
        63,
        (OUR_MAC, GW_MAC),
    );
    assert_eq!(out, want, "reply: RIP:8080 -> VIP:80 toward the gateway");
    let c: Vec<_> = e.w.conns(S).collect();
    assert_eq!(c[0].state, "SYN_RECV");
    assert_eq!(c[0].rs.to_string(), "[2001:db8:1::21]:8080");
    // a reply for no connection is not ours
    let stray = tcp6_frame(
        RIP6,
        8080,
        CLIENT6,
        40001,
        ACK,
        b"",
        64,
        (mac_of([0, 0, 0, 0x21]), OUR_MAC),
    );
    assert_eq!(e.send6(&s, &stray, S).0, LbVerdict::NotForUs);
}

#[test]
fn tun6_encapsulates_and_answers_packet_too_big() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, 0, Method::Tun, 1)]);
    });
    let syn = from_client(SYN, 40000, 80);
    let (v, out) = e.send6(&s, &syn, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    // Ethernet, outer IPv6 (next header 41) from our address to the RS,
    // then the client's packet unchanged
    assert_eq!(out.len(), syn.len() + 40);
    assert_eq!(&out[12..14], &[0x86, 0xdd]);
    assert_eq!(out[14 + 6], 41);
    assert_eq!(&out[14 + 8..14 + 24], &OUR_IP6.to_be_bytes());
    assert_eq!(&out[14 + 24..14 + 40], &RIP6.to_be_bytes());
    assert_eq!(&out[54..], &syn[14..]);
    // a full-size segment does not fit the 1500-byte link once wrapped:
    // Packet Too Big back to the client, from the VIP
    let big = tcp6_frame(
        CLIENT6,
        40000,
        VIP6,
        80,
        ACK,
        &[7u8; 1440],
        64,
        (CLIENT_MAC, OUR_MAC),
    );
    let (v, out) = e.send6(&s, &big, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let m = meta6(&out);
    assert_eq!(m.key.src, VIP6);
    assert_eq!(m.key.dst, CLIENT6);
    let q = m.icmp.expect("a Packet Too Big quoting the segment");
    assert_eq!(q.icmp_type, 2);
    assert_eq!(u32::from_be_bytes(out[58..62].try_into().unwrap()), 1460);
}

#[test]
fn rr6_spreads_and_weight_zero_quiesces() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![
                dest6(RIP6, 0, Method::Dr, 1),
                dest6(RIP6_2, 0, Method::Dr, 1),
            ],
        );
    });
    let mut seen = std::collections::HashMap::new();
    for p in 0..10u16 {
        let (v, out) = e.send6(&s, &from_client(SYN, 41000 + p, 80), 0);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        *seen.entry(out[5]).or_insert(0) += 1;
    }
    assert_eq!(seen.get(&0x21), Some(&5));
    assert_eq!(seen.get(&0x22), Some(&5));
    let s2 = e.snap(2, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![
                dest6(RIP6, 0, Method::Dr, 0),
                dest6(RIP6_2, 0, Method::Dr, 1),
            ],
        );
    });
    for p in 0..4u16 {
        let (_, out) = e.send6(&s2, &from_client(SYN, 42000 + p, 80), 0);
        assert_eq!(out[5], 0x22, "weight 0 takes no new connection");
    }
    // existing connections to the quiesced server continue
    let (_, out) = e.send6(&s2, &from_client(ACK, 41000, 80), 0);
    assert_eq!(out[5], 0x21);
}

#[test]
fn ipv6_drops_and_unresolved() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, 0, Method::Dr, 1)]);
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    assert_eq!(
        e.send6(&s, &from_client(SYN, 40000, 81), 0).0,
        LbVerdict::Drop(LbDrop::NotAService)
    );
    assert_eq!(
        e.send6(&s, &from_client(ACK, 40000, 80), 0).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    let other = tcp6_frame(CLIENT6, 1, RIP6, 80, SYN, b"", 64, (CLIENT_MAC, OUR_MAC));
    assert_eq!(e.send6(&s, &other, 0).0, LbVerdict::NotForUs);
    // the IPv4 path does not see the IPv6 service and vice versa
    assert_eq!(e.w.table6().len(), 0);
    e.eg.unresolved.push(RIP6 as u32);
    assert_eq!(
        e.send6(&s, &from_client(SYN, 40002, 80), 0).0,
        LbVerdict::Unresolved6 {
            ip: RIP6.into(),
            port: 1
        }
    );
    let st = e.w.stats();
    let drops = |d: LbDrop| st.drops[d.index()].load(Relaxed);
    assert_eq!(drops(LbDrop::NotAService), 1);
    assert_eq!(drops(LbDrop::NotTracked), 1);
}

#[test]
fn icmpv6_error_reaches_the_nat_client_translated() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![dest6(RIP6, 8080, Method::Nat, 1)],
        );
    });
    e.send6(&s, &from_client(SYN, 40000, 80), 0);
    // the real server's reply met a small link on the way back: the
    // router there quotes the reply as dirigo sent it (VIP:80 -> client)
    let mut reply = Vec::new();
    PacketBuilder::ipv6(VIP6.to_be_bytes(), CLIENT6.to_be_bytes(), 63)
        .tcp(80, 40000, 1, 1000)
        .ack(1)
        .write(&mut reply, &[0u8; 64])
        .unwrap();
    let router: u128 = 0x2001_0db8_00e0_0000_0000_0000_0000_00fe;
    let mut err = Vec::new();
    PacketBuilder::ethernet2(GW_MAC, OUR_MAC)
        .ipv6(router.to_be_bytes(), VIP6.to_be_bytes(), 64)
        .icmpv6(etherparse::Icmpv6Type::PacketTooBig { mtu: 1280 })
        .write(&mut err, &reply)
        .unwrap();
    let (v, out) = e.send6(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 }, "to the real server");
    let m = meta6(&out);
    assert_eq!(m.key.dst, RIP6);
    let q = m.icmp.unwrap();
    assert_eq!(q.inner_key.src, RIP6);
    assert_eq!(q.inner_key.sport, 8080);
    // etherparse accepts the translated ICMPv6 checksum
    let p = etherparse::SlicedPacket::from_ethernet(&out).unwrap();
    match p.transport {
        Some(etherparse::TransportSlice::Icmpv6(i)) => {
            let ip = match p.net {
                Some(etherparse::NetSlice::Ipv6(ip)) => ip,
                _ => panic!("not IPv6"),
            };
            let h = ip.header();
            let want = i
                .icmp_type()
                .calc_checksum(h.source(), h.destination(), i.payload())
                .unwrap();
            assert_eq!(i.checksum(), want);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn persistence6_by_prefix() {
    let mut e = env(1024);
    let mut p = svc6(Proto::Tcp, 80);
    p.persistent = Some(300);
    p.prefix6 = 64;
    let s = e.snap(1, |b| {
        b.service(
            p.clone(),
            vec![
                dest6(RIP6, 0, Method::Dr, 1),
                dest6(RIP6_2, 0, Method::Dr, 1),
            ],
        );
    });
    let syn_from = |client: u128, port: u16| {
        tcp6_frame(client, port, VIP6, 80, SYN, b"", 64, (CLIENT_MAC, OUR_MAC))
    };
    // clients of one /64 stick to the first one's server, rr or not
    let (_, out) = e.send6(&s, &syn_from(CLIENT6, 40000), 0);
    let first = out[5];
    for (i, host) in [0x8u128, 0x9, 0xffff_0000_0001].iter().enumerate() {
        let c = (CLIENT6 & !0xffff_ffff_ffff_ffff) | host;
        let (v, out) = e.send6(&s, &syn_from(c, 40001 + i as u16), S);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        assert_eq!(out[5], first, "client {c:x} of the same /64");
    }
    assert_eq!(e.w.persist().len(), 1, "one template for the /64");
    // another /64: its own template (rr gives it the other server)
    let other = CLIENT6 ^ (1u128 << 64);
    let (_, out) = e.send6(&s, &syn_from(other, 40100), S);
    assert_ne!(out[5], first);
    assert_eq!(e.w.persist().len(), 2);
    // connections gone (expired), the templates outlive them by the
    // persistence timeout, then go too
    e.w.expire6(100 * S, 4096);
    assert_eq!(e.w.table6().len(), 0);
    e.w.expire(100 * S, 4096);
    assert_eq!(
        e.w.persist().len(),
        2,
        "templates outlive their connections"
    );
    e.w.expire(500 * S, 4096);
    assert_eq!(e.w.persist().len(), 0);
    // a mask of the wrong family is refused
    let mut bad = p.clone();
    bad.netmask = std::net::Ipv4Addr::new(255, 255, 255, 0);
    let mut b = SnapshotBuilder::new();
    b.service(bad, vec![]);
    assert!(matches!(
        b.build(&mut e.ids, 2),
        Err(crate::lb::snapshot::BuildError::MaskFamily(_))
    ));
}

/// IPv6's established shortcut (a segment that keeps a connection
/// ESTABLISHED: only the timer restarts) writes what the general path
/// (state machine, then transmit) writes: for DR, TUN and NAT (both
/// directions), a balancer on the shortcut and one forced down the general
/// path (`expire_nodest_conn` on, the server present) give the same frames,
/// verdicts, states, timers and per-server counters.
#[test]
fn established_shortcut6_writes_what_the_general_path_writes() {
    for method in [Method::Dr, Method::Tun, Method::Nat] {
        let rport = if method == Method::Nat { 8080 } else { 0 };
        let mut short = env(64);
        let mut general = env(64);
        let s1 = short.snap(1, |b| {
            b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, rport, method, 1)]);
        });
        let s2 = general.snap(1, |b| {
            b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, rport, method, 1)]);
            b.expire_nodest_conn(true);
        });
        let reply = |flags: u8| {
            tcp6_frame(
                RIP6,
                8080,
                CLIENT6,
                40000,
                flags,
                b"",
                64,
                (mac_of([0, 0, 0, 0x21]), OUR_MAC),
            )
        };
        let mut frames = vec![
            (from_client(SYN, 40000, 80), 0),
            (from_client(ACK, 40000, 80), S),
            (from_client(ACK | PSH, 40000, 80), 2 * S),
            (from_client(ACK, 40000, 80), 3 * S),
            (from_client(SYN | ACK, 40000, 80), 4 * S),
            (from_client(ACK, 40001, 80), 5 * S),
        ];
        if method == Method::Nat {
            // the reply direction: its first segment clears NOOUTPUT (the
            // general path), the next ones keep ESTABLISHED (the shortcut)
            frames.push((reply(SYN | ACK), 5 * S));
            frames.push((reply(ACK), 6 * S));
            frames.push((reply(ACK | PSH), 7 * S));
        }
        frames.push((from_client(FIN | ACK, 40000, 80), 8 * S));
        frames.push((from_client(ACK, 40000, 80), 9 * S));
        shortcut_agrees(
            method,
            &mut short,
            &s1,
            &mut general,
            &s2,
            &frames,
            Env::send6,
        );
    }
}
