//! What is not forwarded: drop reasons counted and their fixed names, and
//! an unresolved next hop handed back (named for every path), not dropped.

use super::*;

#[test]
fn not_a_service_not_for_us_and_drop_reasons() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    let f = tcp_frame(CLIENT, 1, VIP, 81, SYN, b"", 64, false);
    assert_eq!(e.send(&s, &f, 0).0, LbVerdict::Drop(LbDrop::NotAService));
    let f = udp_frame(CLIENT, 1, VIP, 80, b"");
    assert_eq!(e.send(&s, &f, 0).0, LbVerdict::Drop(LbDrop::NotAService));
    let f = tcp_frame(CLIENT, 1, [192, 0, 2, 11], 80, SYN, b"", 64, false);
    assert_eq!(e.send(&s, &f, 0).0, LbVerdict::NotForUs);
    assert_eq!(
        e.send(&s, &tcp(SYN | RST, 5), 0).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    // an unresolved next hop is handed back, packet untouched, not counted
    e.eg.unresolved = vec![ip(RIP)];
    let syn = tcp(SYN, 6);
    let (v, out) = e.send(&s, &syn, 0);
    assert_eq!(
        v,
        LbVerdict::Unresolved {
            ip: ip(RIP),
            port: 1
        }
    );
    assert_eq!(out, syn, "left as it was, to be processed again");
    e.eg.unresolved.clear();
    e.eg.noroute = vec![ip(RIP)];
    assert_eq!(
        e.send(&s, &tcp(ACK, 6), 0).0,
        LbVerdict::Drop(LbDrop::NoRoute)
    );
    let st = e.w.stats();
    let counts: Vec<_> = st.drop_counts().filter(|(_, n)| *n > 0).collect();
    assert_eq!(
        counts,
        [("not_a_service", 2), ("no_route", 1), ("not_tracked", 1)]
    );
}

#[test]
fn drop_reason_names() {
    crate::counters::check::<LbDrop>();
    assert!(LbDrop::ALL.iter().all(|d| d.is_drop()));
    // listed as `lb_<name>` by `dirigoctl drops`: the names never change
    let names: Vec<_> = LbDrop::ALL.iter().map(|d| d.name()).collect();
    assert_eq!(
        names.join(" "),
        "not_a_service no_dest table_full no_route not_tracked too_big \
         icmp_rate_limited ttl_exceeded no_room malformed dest_removed \
         synproxy_cookie_invalid synproxy_cookie_expired nat64_ports_exhausted \
         fullnat_ports_exhausted mark_no_service client_address_no_room \
         ftp_no_room ftp_shift \
         snat_ports_exhausted snat_limit"
    );
}

/// Every way a packet leaves names its own unresolved next hop: the real
/// server (on-link, port 1) for requests and for ICMP errors forwarded to
/// it, the client's gateway (port 0) for NAT replies, translated ICMP
/// errors and TUN's fragmentation-needed; the packet is left as it was and
/// nothing is counted as dropped.
#[test]
fn unresolved_next_hop_named_for_every_path() {
    let mut e = env(64);
    e.eg.mtu = 1500;
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
        b.service(svc(Proto::Tcp, 443), vec![dest(RIP2, 8443, Method::Nat, 1)]);
        b.service(svc(Proto::Tcp, 22), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    let rs = |a| LbVerdict::Unresolved { ip: ip(a), port: 1 };
    let gw = LbVerdict::Unresolved {
        ip: ip(GW),
        port: 0,
    };
    let check = |e: &mut Env, frame: &[u8], unresolved: [u8; 4], want: LbVerdict| {
        e.eg.unresolved = vec![ip(unresolved)];
        let (v, out) = e.send(&s, frame, S);
        e.eg.unresolved.clear();
        assert_eq!(v, want);
        assert_eq!(out, frame, "left as it was");
    };
    // requests: to the real server
    let tun_syn = tcp(SYN, 40000);
    check(&mut e, &tun_syn, RIP, rs(RIP));
    let nat_syn = tcp_frame(CLIENT, 2000, VIP, 443, SYN, b"", 64, true);
    check(&mut e, &nat_syn, RIP2, rs(RIP2));
    let dr_syn = tcp_frame(CLIENT, 3000, VIP, 22, SYN, b"", 64, true);
    check(&mut e, &dr_syn, RIP, rs(RIP));
    for f in [&tun_syn, &nat_syn, &dr_syn] {
        assert!(matches!(e.send(&s, f, S).0, LbVerdict::Tx { .. }));
    }
    // a NAT reply: to the client, via its gateway
    let synack = tcp_frame(RIP2, 8443, CLIENT, 2000, SYN | ACK, b"", 64, true);
    check(&mut e, &synack, CLIENT, gw);
    // TUN, too big with DF: fragmentation-needed goes back to the client
    let big = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &[7u8; 1460], 64, true);
    check(&mut e, &big, CLIENT, gw);
    // ICMP errors: forwarded to a DR real server, translated to the client
    let sent = tcp_frame(VIP, 22, CLIENT, 3000, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 4, [0, 0, 5, 0xdc], &sent[14..42]);
    check(&mut e, &err, RIP, rs(RIP));
    let fwd = tcp_frame(CLIENT, 2000, RIP2, 8443, SYN, b"", 63, true);
    let err = icmp_error(RIP2, CLIENT, 3, 3, [0; 4], &fwd[14..42]);
    check(&mut e, &err, CLIENT, gw);
    let st = e.w.stats();
    assert!(
        st.drop_counts().all(|(_, n)| n == 0),
        "holding is not dropping"
    );
}
