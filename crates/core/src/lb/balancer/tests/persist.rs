//! Persistence (`-p`, `-M`) through the worker: sans-IO, injected clock.

use super::*;
use crate::lb::persist::client_key;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Proto, ServiceKey, ServiceSpec, Timeouts};
use crate::net::buf::VecBuf;
use crate::net::meta::tcp_flags::{ACK, SYN};
use std::net::Ipv4Addr;

const S: u64 = 1_000_000_000;
const A: [u8; 4] = [10, 0, 0, 21];
const B: [u8; 4] = [10, 0, 0, 22];
const C: [u8; 4] = [10, 0, 0, 23];
const X: [u8; 4] = [198, 51, 100, 7];
const Y: [u8; 4] = [198, 51, 100, 8];
const HOST: [u8; 4] = [255, 255, 255, 255];

fn svc(proto: Proto, persistent: Option<u32>, mask: [u8; 4]) -> ServiceSpec {
    ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
            proto,
            vip: std::net::IpAddr::V4(Ipv4Addr::from(VIP)),
            port: 80,
        },
        sched: SchedKind::Rr,
        flags: SchedFlags::default(),
        persistent,
        netmask: Ipv4Addr::from(mask),
        prefix6: 128,
        synproxy: false,
        ops: false,
        client_address: Default::default(),
    }
}

fn dests(list: &[([u8; 4], u32)]) -> Vec<DestSpec> {
    list.iter()
        .map(|&(a, weight)| DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(a)),
                port: 0,
            },
            method: Method::Dr,
            weight,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        })
        .collect()
}

struct Env {
    ids: LbIds,
    w: Balancer,
    eg: FakeEgress,
}

fn env(persist_capacity: u32) -> Env {
    env_conns(1024, persist_capacity)
}

fn env_conns(conn_capacity: u32, persist_capacity: u32) -> Env {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity,
        persist_capacity,
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    Env {
        ids,
        w,
        eg: FakeEgress::default(),
    }
}

impl Env {
    fn snap(&mut self, epoch: u64, spec: ServiceSpec, ds: &[([u8; 4], u32)]) -> Snapshot {
        self.snap_with(epoch, spec, ds, Timeouts::default())
    }

    fn snap_with(
        &mut self,
        epoch: u64,
        spec: ServiceSpec,
        ds: &[([u8; 4], u32)],
        t: Timeouts,
    ) -> Snapshot {
        let mut b = SnapshotBuilder::new();
        b.service(spec, dests(ds)).timeouts(t);
        b.build(&mut self.ids, epoch).unwrap()
    }

    /// Send `frame`; the real server it went to (by the DR MAC rewrite,
    /// cross-checked with the connection listing).
    fn send(&mut self, snap: &Snapshot, frame: &[u8], now: u64) -> [u8; 4] {
        let m = meta_of(frame);
        let mut b = VecBuf::new(frame);
        let v = self
            .w
            .process(&BurstCtx::new(snap, &self.eg, now), &mut b, &m);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        let out = b.to_vec();
        let rs = [A, B, C]
            .into_iter()
            .find(|r| out[0..6] == mac_of(*r))
            .expect("sent to a known real server");
        let listed = self
            .w
            .conns(now)
            .find(|c| u32::from(c.client.ip().v4()) == m.key.src && c.client.port() == m.key.sport)
            .map(|c| c.rs.ip().v4().octets());
        assert_eq!(listed, Some(rs));
        rs
    }

    fn syn(&mut self, snap: &Snapshot, client: [u8; 4], cport: u16, now: u64) -> [u8; 4] {
        self.send(
            snap,
            &tcp_frame(client, cport, VIP, 80, SYN, b"", 64, true),
            now,
        )
    }

    fn udp(&mut self, snap: &Snapshot, client: [u8; 4], cport: u16, now: u64) -> [u8; 4] {
        self.send(snap, &udp_frame(client, cport, VIP, 80, b"x"), now)
    }

    /// The template of `client` (already masked) for the snapshot's service.
    fn template(&self, snap: &Snapshot, client: u32) -> Option<crate::lb::persist::TemplateInfo> {
        self.w
            .persist()
            .get(template_svc(snap.services()[0].id), client)
    }
}

fn dest_id(snap: &Snapshot, a: [u8; 4]) -> u64 {
    let d = snap.services()[0]
        .dests
        .iter()
        .find(|d| d.addr == ip(a))
        .expect("server in snapshot");
    template_dest(d.id)
}

fn udp_timeouts(udp: u32) -> Timeouts {
    Timeouts {
        udp,
        ..Timeouts::default()
    }
}

#[test]
fn same_client_same_server_while_rr_rotates_others() {
    // Control: without -p, rr rotates the same client over A, B, C.
    let mut e = env(0);
    let s = e.snap(1, svc(Proto::Tcp, None, HOST), &[(A, 1), (B, 1), (C, 1)]);
    let got: Vec<_> = (0..3).map(|i| e.syn(&s, X, 1000 + i, S)).collect();
    assert_eq!(got, [A, B, C]);
    assert!(e.w.persist().is_empty());

    let mut e = env(0);
    let s = e.snap(
        1,
        svc(Proto::Tcp, Some(300), HOST),
        &[(A, 1), (B, 1), (C, 1)],
    );
    for i in 0..5 {
        assert_eq!(e.syn(&s, X, 1000 + i, S + i as u64), A, "connection {i}");
    }
    assert_eq!(e.syn(&s, Y, 1000, 10 * S), B, "another client is scheduled");
    assert_eq!(e.syn(&s, X, 2000, 11 * S), A);
    let t = e.template(&s, ip(X)).unwrap();
    assert_eq!((t.dest, t.refs, t.timeout), (dest_id(&s, A), 6, 300 * S));
    assert_eq!(e.template(&s, ip(Y)).unwrap().dest, dest_id(&s, B));
    let attached = e.w.table().iter().filter(|c| c.flags & F_PERSIST != 0);
    assert_eq!(attached.count(), 7);
}

#[test]
fn netmask_groups_clients_of_one_network() {
    let mut e = env(0);
    let mask = [255, 255, 255, 0];
    let s = e.snap(
        1,
        svc(Proto::Tcp, Some(300), mask),
        &[(A, 1), (B, 1), (C, 1)],
    );
    assert_eq!(e.syn(&s, [198, 51, 100, 5], 1000, S), A);
    assert_eq!(e.syn(&s, [198, 51, 100, 200], 1000, S), A, "same /24");
    assert_eq!(e.syn(&s, [198, 51, 101, 5], 1000, S), B, "other /24");
    assert_eq!(e.syn(&s, [198, 51, 100, 9], 1001, S), A);
    assert_eq!(e.w.persist().len(), 2);
    let net = client_key(ip([198, 51, 100, 77]), 0xffff_ff00);
    assert_eq!(net, ip([198, 51, 100, 0]));
    let t = e.template(&s, net).unwrap();
    assert_eq!((t.dest, t.refs), (dest_id(&s, A), 3));
}

#[test]
fn template_outlives_last_connection_by_timeout_then_expires() {
    let mut e = env(0);
    let spec = svc(Proto::Udp, Some(60), HOST);
    let s = e.snap_with(1, spec, &[(A, 1), (B, 1), (C, 1)], udp_timeouts(10));
    assert_eq!(e.udp(&s, X, 1000, 0), A);
    assert_eq!(e.udp(&s, Y, 1000, 0), B);
    assert_eq!(e.w.expire(20 * S, u32::MAX), 2, "both connections expired");
    // Detached at 20 s: lives until 20 + 60 s.
    let t = e.template(&s, ip(X)).unwrap();
    assert_eq!((t.refs, t.expires), (0, 80 * S));
    assert_eq!(e.w.expire(79 * S, u32::MAX), 0);
    assert_eq!(e.w.persist().len(), 2, "not reclaimed before its time");
    assert_eq!(e.udp(&s, Y, 1001, 79 * S), B, "still bound at 79 s");
    assert_eq!(e.udp(&s, X, 1001, 80 * S), C, "expired at 80 s: rr goes on");
    let t = e.template(&s, ip(X)).unwrap();
    assert_eq!((t.dest, t.refs), (dest_id(&s, C), 1));
    assert_eq!(e.w.persist_stats().expired, 1);
    // Everything ends: connections at 200 s, templates 60 s later.
    assert_eq!(e.w.expire(200 * S, u32::MAX), 2);
    assert_eq!(e.w.persist().len(), 2);
    e.w.expire(260 * S, u32::MAX);
    assert!(e.w.persist().is_empty());
    assert_eq!(e.w.persist_stats().expired, 3);
}

#[test]
fn template_never_expires_while_its_connection_lives() {
    let mut e = env(0);
    let s = e.snap(1, svc(Proto::Tcp, Some(10), HOST), &[(A, 1), (B, 1)]);
    assert_eq!(e.syn(&s, X, 1000, 0), A);
    let ack = tcp_frame(X, 1000, VIP, 80, ACK, b"", 64, true);
    assert_eq!(e.send(&s, &ack, S), A); // ESTABLISHED: 900 s
    assert_eq!(e.w.expire(400 * S, u32::MAX), 0);
    assert_eq!(e.template(&s, ip(X)).unwrap().refs, 1);
    assert_eq!(e.syn(&s, X, 1001, 500 * S), A, "10 s timeout, yet bound");
    assert_eq!(e.syn(&s, Y, 1000, 500 * S), B, "rr would have given B");
}

#[test]
fn quiesced_server_keeps_its_persistent_clients() {
    let mut e = env(0);
    let spec = svc(Proto::Tcp, Some(300), HOST);
    let s1 = e.snap(1, spec.clone(), &[(A, 1), (B, 1)]);
    assert_eq!(e.syn(&s1, X, 1000, 0), A);
    let s2 = e.snap(2, spec, &[(A, 0), (B, 1)]);
    assert_eq!(e.syn(&s2, X, 1001, S), A, "template still sends X to A");
    assert_eq!(e.syn(&s2, Y, 1000, S), B, "A takes no new clients");
    assert_eq!(e.syn(&s2, [198, 51, 100, 9], 1000, S), B);
    assert_eq!(e.syn(&s2, X, 1002, 2 * S), A);
    assert_eq!(e.template(&s2, ip(X)).unwrap().refs, 3);
}

#[test]
fn removed_server_loses_its_persistent_clients() {
    let mut e = env(0);
    let spec = svc(Proto::Tcp, Some(300), HOST);
    let s1 = e.snap(1, spec.clone(), &[(A, 1), (B, 1), (C, 1)]);
    assert_eq!(e.syn(&s1, X, 1000, 0), A);
    let s2 = e.snap(2, spec, &[(B, 1), (C, 1)]);
    let moved = e.syn(&s2, X, 1001, S);
    assert_ne!(moved, A);
    // Re-pointed: the old connection (to A) is still attached.
    let t = e.template(&s2, ip(X)).unwrap();
    assert_eq!((t.dest, t.refs), (dest_id(&s2, moved), 2));
    assert_eq!(e.w.persist_stats().replaced, 1);
    assert_eq!(e.syn(&s2, X, 1002, 2 * S), moved, "and stays there");
}

#[test]
fn removed_server_template_without_connections_is_dropped() {
    let mut e = env(0);
    let spec = svc(Proto::Udp, Some(300), HOST);
    let s1 = e.snap_with(1, spec.clone(), &[(A, 1), (B, 1)], udp_timeouts(10));
    assert_eq!(e.udp(&s1, X, 1000, 0), A);
    assert_eq!(e.w.expire(20 * S, u32::MAX), 1);
    assert_eq!(e.template(&s1, ip(X)).unwrap().refs, 0);
    // A is removed: the template (no connection attached) is a miss and
    // dropped, and X gets a new one.
    let s2 = e.snap_with(2, spec, &[(B, 1)], udp_timeouts(10));
    assert_eq!(e.udp(&s2, X, 1001, 30 * S), B);
    let st = e.w.persist_stats();
    assert_eq!((st.removed, st.inserted), (1, 2));
    let t = e.template(&s2, ip(X)).unwrap();
    assert_eq!((t.dest, t.refs), (dest_id(&s2, B), 1));
}

#[test]
fn full_template_table_schedules_without_persistence() {
    // Capacity 1 rounds up to 2 buckets of 4: every key fits in the same 8.
    let mut e = env(1);
    assert_eq!(e.w.persist().capacity(), 8);
    let s = e.snap(1, svc(Proto::Tcp, Some(300), HOST), &[(A, 1), (B, 1)]);
    let clients: Vec<[u8; 4]> = (1..=9).map(|i| [198, 51, 100, i]).collect();
    for (i, c) in clients.iter().enumerate() {
        e.syn(&s, *c, 1000, i as u64 * S);
    }
    let st = e.w.persist_stats();
    assert_eq!((st.full, st.inserted), (1, 8));
    assert_eq!(e.w.persist().len(), 8);
    assert!(e.template(&s, ip(clients[8])).is_none());
    let unattached: Vec<u32> =
        e.w.table()
            .iter()
            .filter(|c| c.flags & F_PERSIST == 0)
            .map(|c| c.caddr)
            .collect();
    assert_eq!(unattached, [ip(clients[8])]);
    // Its end detaches nothing; the others' templates stay attached.
    let ends = e.w.expire(1000 * S, u32::MAX);
    assert_eq!(ends, 9);
    assert!(e.w.persist().iter().all(|t| t.refs == 0));
}

#[test]
fn netmask_change_drops_templates_and_old_connections_do_not_detach_new_ones() {
    let mut e = env(0);
    let t10 = udp_timeouts(10);
    let s1 = e.snap_with(1, svc(Proto::Udp, Some(300), HOST), &[(A, 1), (B, 1)], t10);
    assert_eq!(e.udp(&s1, X, 1000, 0), A);
    let net = [255, 255, 255, 0];
    let s2 = e.snap_with(2, svc(Proto::Udp, Some(300), net), &[(A, 1), (B, 1)], t10);
    assert_eq!(e.udp(&s2, Y, 1000, 5 * S), B, "old templates dropped, rr");
    assert_eq!(e.w.persist().len(), 1);
    let key = ip([198, 51, 100, 0]);
    assert_eq!(e.template(&s2, key).unwrap().refs, 1);
    // X's old connection (attached under /32) ends: the /24 template keeps
    // its reference.
    assert_eq!(e.w.expire(12 * S, u32::MAX), 1);
    assert_eq!(e.template(&s2, key).unwrap().refs, 1);
    assert_eq!(e.udp(&s2, X, 1001, 13 * S), B, "X now shares Y's network");
}

#[test]
fn evicted_connection_detaches() {
    let mut e = env_conns(1, 0);
    let s = e.snap(1, svc(Proto::Tcp, Some(30), HOST), &[(A, 1), (B, 1)]);
    assert_eq!(e.syn(&s, X, 1000, 0), A);
    assert_eq!(e.template(&s, ip(X)).unwrap().refs, 1);
    // The table holds one connection: Y's SYN evicts X's embryonic one.
    assert_eq!(e.syn(&s, Y, 1000, 5 * S), B);
    assert_eq!(e.w.stats().evicted.load(Relaxed), 1);
    let t = e.template(&s, ip(X)).unwrap();
    assert_eq!((t.refs, t.expires), (0, 35 * S));
    assert_eq!(e.template(&s, ip(Y)).unwrap().refs, 1);
}
