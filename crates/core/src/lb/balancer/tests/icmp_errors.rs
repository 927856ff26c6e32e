//! ICMP errors about a connection follow it: to its real server (IPIP
//! encapsulated for TUN) or, translated, back to the client.

use super::*;

#[test]
fn icmp_errors_follow_connections() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        b.service(svc(Proto::Tcp, 443), vec![dest(RIP2, 8443, Method::Nat, 1)]);
    });
    e.send(&s, &tcp(SYN, 1000), 0);
    // a router near the client complains about VIP:80 -> client:1000 (sent by the RS)
    let sent = tcp_frame(VIP, 80, CLIENT, 1000, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 4, [0, 0, 5, 0xdc], &sent[14..42]);
    let (v, out) = e.send(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(out, with_eth(err, mac_of(RIP), OUR_MAC));
    // untracked quote: the stack's business
    let other = tcp_frame(VIP, 80, CLIENT, 1001, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 4, [0; 4], &other[14..42]);
    assert_eq!(e.send(&s, &err, 0).0, LbVerdict::NotForUs);
    // NAT: the real server reports port unreachable about client -> RIP2:8443
    let f = tcp_frame(CLIENT, 2000, VIP, 443, SYN, b"", 64, true);
    e.send(&s, &f, 0);
    let fwd = tcp_frame(CLIENT, 2000, RIP2, 8443, SYN, b"", 63, true);
    let err = icmp_error(RIP2, CLIENT, 3, 3, [0; 4], &fwd[14..42]);
    let (v, out) = e.send(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    verify(&out);
    assert_eq!(&out[26..30], &VIP);
    assert_eq!(&out[42 + 16..42 + 20], &VIP);
    assert_eq!(&out[64..66], &443u16.to_be_bytes());
}

#[test]
fn tun_icmp_error_forwarded_encapsulated() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
        b.tunnel_src(Some(Ipv4Addr::new(10, 0, 0, 77)));
    });
    e.send(&s, &tcp(SYN, 1000), 0);
    let sent = tcp_frame(VIP, 80, CLIENT, 1000, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 11, 0, [0; 4], &sent[14..42]);
    let (v, out) = e.send(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(&out[0..6], &mac_of(RIP));
    assert_eq!(out[23], 4, "IPIP");
    assert_eq!(&out[26..30], &[10, 0, 0, 77], "configured tunnel source");
    assert_eq!(&out[30..34], &RIP);
    assert_eq!(&out[34..], &err[14..], "inner ICMP untouched");
    verify(&out);
}
