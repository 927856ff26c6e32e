//! Service groups (keepalived's `virtual_server_group`): every member
//! key reaches the one service, its scheduler state shared; connections
//! keep the member the client used (NAT replies come from it, DR keeps
//! its port); member keys that collide or do not fit are refused.

use super::*;
use crate::lb::group::parse_member;
use crate::lb::mark::{MarkRule, Prefix};
use crate::lb::snapshot::BuildError;
use crate::lb::spec::{DestSpec, MAX_MEMBERS};

const M1: [u8; 4] = [192, 0, 2, 11];
const M2: [u8; 4] = [192, 0, 2, 12];

fn key(a: [u8; 4], port: u16) -> ServiceKey {
    ServiceKey {
        fwmark: 0,
        proto: Proto::Tcp,
        vip: std::net::IpAddr::V4(Ipv4Addr::from(a)),
        port,
    }
}

/// TCP VIP:80 with members 192.0.2.11-12:80 and VIP:8080.
fn group() -> ServiceSpec {
    let mut s = svc(Proto::Tcp, 80);
    s.members = parse_member("192.0.2.11-12:80", Proto::Tcp, false).unwrap();
    s.members.push(key(VIP, 8080));
    s
}

#[test]
fn every_member_reaches_the_group_and_shares_its_scheduler() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(
            group(),
            vec![dest(RIP, 0, Method::Dr, 1), dest(RIP2, 0, Method::Dr, 1)],
        );
    });
    assert_eq!(s.services().len(), 1, "one service");
    // rr over the group: one cursor whatever member the client used
    let mut macs = Vec::new();
    for (i, (vip, port)) in [(VIP, 80), (M1, 80), (M2, 80), (VIP, 8080)]
        .into_iter()
        .enumerate()
    {
        let f = tcp_frame(CLIENT, 1000 + i as u16, vip, port, SYN, b"", 64, true);
        let (v, out) = e.send(&s, &f, 0);
        assert_eq!(v, LbVerdict::Tx { port: 1 }, "{vip:?}:{port}");
        // DR keeps the member's address and port
        assert_eq!(out[30..34], vip);
        assert_eq!(out[36..38], port.to_be_bytes());
        macs.push(out[0..6].to_vec());
    }
    assert_eq!(macs[0], macs[2]);
    assert_eq!(macs[1], macs[3]);
    assert_ne!(macs[0], macs[1], "round robin across the members");
    // the connections name the member used, its port included
    let mut vips: Vec<String> = e.w.conns(0).map(|c| c.vip.to_string()).collect();
    vips.sort();
    assert_eq!(
        vips,
        [
            "192.0.2.10:80",
            "192.0.2.10:8080",
            "192.0.2.11:80",
            "192.0.2.12:80"
        ]
    );
    let mut rs: Vec<u16> = e.w.conns(0).map(|c| c.rs.port()).collect();
    rs.sort();
    assert_eq!(rs, [80, 80, 80, 8080], "DR's server port is the member's");
    // a non-member of the group's addresses is still no service
    let (v, _) = e.send(&s, &tcp_frame(CLIENT, 9, M1, 81, SYN, b"", 64, true), 0);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NotAService));
}

#[test]
fn nat_replies_come_from_the_member_the_client_used() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(group(), vec![dest(RIP, 8000, Method::Nat, 1)]);
    });
    let (v, out) = e.send(&s, &tcp_frame(CLIENT, 40000, M2, 80, SYN, b"", 64, true), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let want = with_eth(
        tcp_frame(CLIENT, 40000, RIP, 8000, SYN, b"", 63, true),
        mac_of(RIP),
        OUR_MAC,
    );
    assert_eq!(out, want);
    let synack = tcp_frame(RIP, 8000, CLIENT, 40000, SYN | ACK, b"", 64, true);
    let (v, out) = e.send(&s, &synack, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let want = with_eth(
        tcp_frame(M2, 80, CLIENT, 40000, SYN | ACK, b"", 63, true),
        GW_MAC,
        OUR_MAC,
    );
    assert_eq!(out, want, "the reply comes from 192.0.2.12:80, not the VIP");
    verify(&out);
    // a NAT server of port 0 takes the member's port
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(group(), vec![dest(RIP, 0, Method::Nat, 1)]);
    });
    let (_, out) = e.send(
        &s,
        &tcp_frame(CLIENT, 40001, VIP, 8080, SYN, b"", 64, true),
        0,
    );
    assert_eq!(out[36..38], 8080u16.to_be_bytes());
}

#[test]
fn an_fwmark_member_takes_its_marks_packets() {
    let mut e = env(64);
    let mut spec = svc(Proto::Tcp, 80);
    spec.members = vec![ServiceKey::fwmark(5, false)];
    let rule = MarkRule {
        proto: Proto::Tcp,
        dst: "192.0.2.64/26".parse::<Prefix>().unwrap(),
        port_lo: 443,
        port_hi: 443,
        src: None,
        mark: 5,
    };
    let s = e.snap(1, |b| {
        b.service(spec, vec![dest(RIP, 0, Method::Dr, 1)])
            .marks(&[rule]);
    });
    let (v, out) = e.send(
        &s,
        &tcp_frame(CLIENT, 1, [192, 0, 2, 70], 443, SYN, b"", 64, true),
        0,
    );
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(out[0..6], mac_of(RIP));
}

#[test]
fn members_that_collide_or_do_not_fit_are_refused() {
    let build = |svcs: Vec<ServiceSpec>| {
        let mut b = SnapshotBuilder::new();
        for s in svcs {
            b.service(s, vec![dest(RIP, 0, Method::Dr, 1)]);
        }
        b.build(&mut LbIds::new(16, 64), 1).map(|_| ())
    };
    // a member that is another service's key
    let other = ServiceSpec {
        key: key(M1, 80),
        ..svc(Proto::Tcp, 80)
    };
    let e = build(vec![group(), other.clone()]).unwrap_err();
    assert!(matches!(e, BuildError::MemberTaken(..)), "{e}");
    assert_eq!(
        e.to_string(),
        "service group TCP 192.0.2.10:80: member TCP 192.0.2.11:80 is taken by service TCP 192.0.2.11:80"
    );
    // another group's member
    let mut second = other;
    second.key = key(M1, 443);
    second.members = vec![key(M2, 80)];
    let e = build(vec![group(), second]).unwrap_err();
    assert!(
        e.to_string()
            .contains("member TCP 192.0.2.12:80 is taken by service TCP 192.0.2.10:80"),
        "{e}"
    );
    // another family, another protocol
    let mut mixed = group();
    mixed.members.push(ServiceKey {
        vip: "2001:db8::1".parse().unwrap(),
        ..key(M1, 80)
    });
    let e = build(vec![mixed]).unwrap_err();
    assert!(e.to_string().contains("a group is of one family"), "{e}");
    let mut udp = group();
    udp.members.push(ServiceKey {
        proto: Proto::Udp,
        ..key(M1, 53)
    });
    let e = build(vec![udp]).unwrap_err();
    assert!(e.to_string().contains("is not TCP"), "{e}");
    // too many
    let mut big = svc(Proto::Tcp, 80);
    big.members = (0..=MAX_MEMBERS as u16)
        .map(|p| key(M1, 1000 + p))
        .collect();
    let e = build(vec![big]).unwrap_err();
    assert!(e.to_string().contains("at most 256"), "{e}");
    // a bad address
    let mut bad = group();
    bad.members.push(key([224, 0, 0, 1], 80));
    assert!(matches!(
        build(vec![bad]).unwrap_err(),
        BuildError::BadAddress(..)
    ));
    // and the lookup cost of a group-less configuration is the same table
    let ok: Vec<DestSpec> = vec![dest(RIP, 0, Method::Dr, 1)];
    let mut b = SnapshotBuilder::new();
    b.service(svc(Proto::Tcp, 80), ok);
    let s = b.build(&mut LbIds::new(16, 64), 1).unwrap();
    assert!(s.service(6, u32::from_be_bytes(M1), 80).is_none());
}

#[test]
fn ipv6_members_are_looked_up_and_are_vips() {
    let mut spec = svc(Proto::Tcp, 80);
    spec.key.vip = std::net::IpAddr::V6(VIP6.into());
    spec.members = parse_member("[2001:db8:f0::20-21]:80", Proto::Tcp, true).unwrap();
    let d6 = DestSpec {
        key: crate::lb::spec::DestKey {
            addr: std::net::IpAddr::V6(RIP6.into()),
            port: 0,
        },
        ..dest(RIP, 0, Method::Dr, 1)
    };
    let mut b = SnapshotBuilder::new();
    b.service(spec, vec![d6]);
    let s = b.build(&mut LbIds::new(16, 64), 1).unwrap();
    let m: u128 = "2001:db8:f0::21"
        .parse::<std::net::Ipv6Addr>()
        .unwrap()
        .into();
    let (i, svc) = s.service6(6, m, 80).unwrap();
    assert_eq!(
        (i, svc.spec.key.vip),
        (0, std::net::IpAddr::V6(VIP6.into()))
    );
    assert!(s.service6(6, m, 81).is_none());
    assert!(s.service6(17, m, 80).is_none());
    assert!(s.is_vip6(m) && s.is_vip6(VIP6));
    assert!(s.service(6, u32::from_be_bytes(VIP), 80).is_none());
}
