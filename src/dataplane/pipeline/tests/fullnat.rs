//! FullNAT through two workers' pipelines: a request leaves from the
//! service's local address with a port of its owner's share; the real
//! server's reply to that address and port, arriving at the other worker,
//! is steered by the port to the owner and goes back to the client from
//! the VIP. IPv4 and IPv6.

use super::v6nat::{client6, client_mac, setup6_workers, tcp6, RS6, RS_MAC, VIP6};
use super::{run, setup, VIP};
use crate::dataplane::Verdict;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, Snapshot, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use crate::lb::testutil::{tcp_frame, verify, OUR_MAC};
use crate::net::buf::VecBuf;
use crate::net::classify::{classify, Classified};
use crate::net::meta::tcp_flags::{ACK, SYN};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

const RS4: [u8; 4] = [172, 16, 0, 11];
const LADDR4: [u8; 4] = [172, 16, 0, 200];
const LADDR6: u128 = 0x2001_0db8_0098_0000_0000_0000_0000_0200;

/// One FullNAT TCP service `vip`:80 -> `rs`:8080 from `laddr`.
fn fullnat_service(vip: IpAddr, rs: IpAddr, laddr: IpAddr) -> Snapshot {
    let mut ids = LbIds::new(16, 64);
    let mut b = SnapshotBuilder::new();
    b.service(
        ServiceSpec {
            members: Vec::new(),
            local_addresses: vec![laddr],
            ops: false,
            client_address: Default::default(),
            key: ServiceKey {
                fwmark: 0,
                proto: Proto::Tcp,
                vip,
                port: 80,
            },
            sched: SchedKind::Rr,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
        },
        vec![DestSpec {
            key: DestKey {
                addr: rs,
                port: 8080,
            },
            method: Method::FullNat,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        }],
    );
    b.build(&mut ids, 5).unwrap()
}

#[test]
fn fullnat4_replies_steered_by_local_port() {
    let (shared, mut pipes) = setup(2);
    shared.lb.store(Arc::new(fullnat_service(
        IpAddr::V4(VIP.into()),
        IpAddr::V4(RS4.into()),
        IpAddr::V4(LADDR4.into()),
    )));
    for p in pipes.iter_mut() {
        crate::dataplane::Pipeline::begin_burst(p, 2);
    }
    let mut owners = [0usize; 2];
    for c in 2..=21u8 {
        let cport = 42000 + c as u16;
        let mut syn = VecBuf::new(&tcp_frame(
            [10, 0, 0, c],
            cport,
            VIP,
            80,
            SYN,
            b"",
            64,
            true,
        ));
        let (v, owner) = run(&mut pipes, (c % 2) as usize, &mut syn, 0);
        assert_eq!(v, Verdict::Tx(1), "request of client {c}");
        owners[owner] += 1;
        let out = syn.to_vec();
        verify(&out);
        assert_eq!(&out[26..30], &LADDR4, "from the local address");
        assert_eq!(&out[30..34], &RS4);
        let lport = u16::from_be_bytes([out[34], out[35]]);
        assert_eq!(lport as usize % 2, owner, "a port of the owner's share");
        let reply = tcp_frame(RS4, 8080, LADDR4, lport, SYN | ACK, b"", 64, true);
        let mut rb = VecBuf::new(&reply);
        let (v, rowner) = run(&mut pipes, 1 - owner, &mut rb, 1);
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
        assert_eq!(rowner, owner, "steered to the owner by its port");
        let out = rb.to_vec();
        verify(&out);
        match classify(&out, 0) {
            Classified::Ipv4(m) => {
                assert_eq!(m.key.src, u32::from_be_bytes(VIP));
                assert_eq!(m.key.dst, u32::from_be_bytes([10, 0, 0, c]));
                assert_eq!((m.key.sport, m.key.dport), (80, cport));
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(owners[0] > 3 && owners[1] > 3, "{owners:?}");
}

#[test]
fn fullnat6_replies_steered_by_local_port() {
    let (shared, mut pipes) = setup6_workers(2, [false, false]);
    shared.lb.store(Arc::new(fullnat_service(
        IpAddr::V6(VIP6.into()),
        IpAddr::V6(RS6.into()),
        IpAddr::V6(LADDR6.into()),
    )));
    for p in pipes.iter_mut() {
        crate::dataplane::Pipeline::begin_burst(p, 2);
    }
    let mut owners = [0usize; 2];
    for c in 2..=21u8 {
        let cport = 43000 + c as u16;
        let mut syn = VecBuf::new(&tcp6(
            client6(c),
            cport,
            VIP6,
            80,
            false,
            [client_mac(c), OUR_MAC],
        ));
        let (v, owner) = run(&mut pipes, (c % 2) as usize, &mut syn, 0);
        assert_eq!(v, Verdict::Tx(1), "request of client {c}");
        owners[owner] += 1;
        let Classified::Ipv6(m) = classify(&syn.to_vec(), 0) else {
            panic!("an IPv6 request")
        };
        assert_eq!((m.key.src, m.key.dst, m.key.dport), (LADDR6, RS6, 8080));
        let lport = m.key.sport;
        assert_eq!(lport as usize % 2, owner, "a port of the owner's share");
        let mut rb = VecBuf::new(&tcp6(RS6, 8080, LADDR6, lport, true, [RS_MAC, OUR_MAC]));
        let (v, rowner) = run(&mut pipes, 1 - owner, &mut rb, 1);
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
        assert_eq!(rowner, owner, "steered to the owner by its port");
        let Classified::Ipv6(m) = classify(&rb.to_vec(), 0) else {
            panic!("an IPv6 reply")
        };
        assert_eq!((m.key.src, m.key.dst), (VIP6, client6(c)));
        assert_eq!((m.key.sport, m.key.dport), (80, cport));
    }
    assert!(owners[0] > 3 && owners[1] > 3, "{owners:?}");
}
