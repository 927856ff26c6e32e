//! Pinned client sockets (health checks through a VIP) reach their
//! real server whatever the weights and the scheduler.

use super::*;

#[test]
fn pinned_client_sockets_reach_their_server_whatever_the_weights() {
    let mut e = env(256);
    let a = dest(RIP, 0, Method::Dr, 0); // inhibited: weight 0
    let b2 = dest(RIP2, 0, Method::Dr, 1);
    let client = |port| std::net::SocketAddrV4::new(Ipv4Addr::from(CLIENT), port);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![a.clone(), b2.clone()])
            .pin(
                svc(Proto::Tcp, 80).key,
                std::net::SocketAddr::V4(client(61000)),
                a.key,
            )
            .pin(
                svc(Proto::Tcp, 80).key,
                std::net::SocketAddr::V4(client(61001)),
                b2.key,
            )
            // a pin to a server the service does not have is ignored
            .pin(
                svc(Proto::Tcp, 80).key,
                std::net::SocketAddr::V4(client(61002)),
                dest([10, 0, 0, 99], 0, Method::Dr, 1).key,
            );
    });
    assert_eq!(s.services()[0].pins.len(), 2);
    for round in 0..3u64 {
        let (v, out) = e.send(&s, &tcp(SYN, 61000), round * S);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        assert_eq!(&out[0..6], &mac_of(RIP), "pinned to the weight-0 server");
        let (_, out) = e.send(&s, &tcp(SYN, 61001), round * S);
        assert_eq!(&out[0..6], &mac_of(RIP2));
        // the probe ends with a reset; the next one is scheduled anew
        e.send(&s, &tcp(RST | ACK, 61000), round * S);
        e.send(&s, &tcp(RST | ACK, 61001), round * S);
    }
    // anyone else goes by the weights
    for p in 1..10 {
        let (_, out) = e.send(&s, &tcp(SYN, p), 5 * S);
        assert_eq!(&out[0..6], &mac_of(RIP2));
    }
    let (_, out) = e.send(&s, &tcp(SYN, 61002), 5 * S);
    assert_eq!(&out[0..6], &mac_of(RIP2), "an ignored pin");
}
