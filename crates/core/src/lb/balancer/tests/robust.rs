//! Robustness: whatever the frame and its metadata, the core never panics.

use super::*;

proptest::proptest! {
    /// Whatever the frame and however inconsistent the metadata, the core
    /// never panics (every offset is checked).
    #[test]
    fn never_panics(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
        l3 in 0u16..140, l4 in 0u16..160, ip_len in 0u16..2000,
        sport in 0u16..3, dport in proptest::sample::select(vec![80u16, 443, 53]),
        proto in proptest::sample::select(vec![6u8, 17, 1]),
        flags in proptest::prelude::any::<u8>(), df in proptest::prelude::any::<bool>(),
        quote in proptest::option::of((0u16..160, 0u16..160)),
        mtu in 0u16..1600,
    ) {
        let mut e = env(8);
        e.eg.mtu = mtu;
        let s = e.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
            b.service(svc(Proto::Tcp, 443), vec![dest(RIP, 8443, Method::Nat, 1)]);
            b.service(svc(Proto::Udp, 53), vec![dest(RIP, 0, Method::Dr, 1)]);
        });
        let key = crate::net::meta::FlowKey { src: ip(CLIENT), dst: ip(VIP), sport, dport, proto };
        let m = PacketMeta {
            port: 0, vlan: None, l3_off: l3, l4_off: l4, ip_len, key, tcp_flags: flags, ttl: 64, df,
            icmp: quote.map(|(a, b)| crate::net::meta::IcmpQuote {
                icmp_type: 3, code: 4, inner_l3_off: a, inner_l4_off: b, inner_key: key.reversed(),
            }),
        };
        for now in [0, S] {
            let mut b = VecBuf::with_room(&bytes, 20, 40);
            let _ = e.w.process(&BurstCtx::new(&s, &e.eg, now), &mut b, &m);
            // also with a tracked connection behind it
            let mut m2 = m;
            m2.icmp = None;
            m2.tcp_flags = crate::net::meta::tcp_flags::SYN;
            let mut b = VecBuf::with_room(&bytes, 20, 40);
            let _ = e.w.process(&BurstCtx::new(&s, &e.eg, now), &mut b, &m2);
            let mut b = VecBuf::with_room(&bytes, 20, 40);
            let _ = e.w.process(&BurstCtx::new(&s, &e.eg, now), &mut b, &m);
        }
    }
}
