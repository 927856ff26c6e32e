//! fwmark services across workers: a marked request to an address that
//! is no VIP (a rule's wider prefix, routed to dirigo) is owned by its
//! client's worker, as a VIP's is, and its NAT reply meets it there.

use super::{run, setup, RS};
use crate::dataplane::pipeline::owner_of;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::mark::MarkRule;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Method, ServiceKey, ServiceSpec};
use crate::lb::testutil::{tcp_frame, verify};
use crate::net::buf::VecBuf;
use crate::net::meta::tcp_flags::{ACK, SYN};
use std::net::Ipv4Addr;
use std::sync::Arc;

/// A destination inside the rule's prefix, and no VIP.
const DST: [u8; 4] = [198, 18, 0, 7];

#[test]
fn marked_requests_are_owned_by_their_client_and_replies_meet_them() {
    let (shared, mut pipes) = setup(2);
    let mut b = SnapshotBuilder::new();
    b.service(
        ServiceSpec {
            members: Vec::new(),
            local_addresses: Vec::new(),
            key: ServiceKey::fwmark(1, false),
            sched: SchedKind::Rr,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
            ops: false,
            client_address: Default::default(),
        },
        vec![DestSpec {
            key: DestKey {
                addr: Ipv4Addr::from(RS).into(),
                port: 8080,
            },
            method: Method::Nat,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        }],
    );
    let rule: MarkRule = "tcp 198.18.0.0/24 80-90 mark 1".parse().unwrap();
    b.marks(&[rule]);
    shared
        .lb
        .store(Arc::new(b.build(&mut LbIds::new(16, 64), 2).unwrap()));
    for p in pipes.iter_mut() {
        p.begin_burst(0);
    }
    let mut owners = [0usize; 2];
    for c in 2..=31u8 {
        let client = [10, 0, 0, c];
        let sport = 41000 + c as u16;
        let req_at = (c % 2) as usize;
        let mut syn = VecBuf::new(&tcp_frame(client, sport, DST, 85, SYN, b"", 64, true));
        let (v, owner) = run(&mut pipes, req_at, &mut syn, 0);
        assert_eq!(v, Verdict::Tx(1), "request of client {c}");
        let want = owner_of(u32::from_be_bytes(client), u32::MAX, 2) as usize;
        assert_eq!(owner, want, "the client's worker owns the request");
        owners[owner] += 1;
        let out = syn.to_vec();
        verify(&out);
        assert_eq!(&out[30..34], &RS);
        assert_eq!(u16::from_be_bytes([out[36], out[37]]), 8080);
        let mut reply = VecBuf::new(&tcp_frame(
            RS,
            8080,
            client,
            sport,
            SYN | ACK,
            b"",
            64,
            true,
        ));
        let (v, rowner) = run(&mut pipes, 1 - req_at, &mut reply, 1);
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
        assert_eq!(rowner, owner);
        let out = reply.to_vec();
        verify(&out);
        assert_eq!(
            &out[26..30],
            &DST,
            "the reply's source is the address asked"
        );
        assert_eq!(u16::from_be_bytes([out[34], out[35]]), 85);
    }
    assert!(owners[0] > 3 && owners[1] > 3, "{owners:?}");
}
