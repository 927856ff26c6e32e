//! The connection counts, model-based (issue 55): random sequences of
//! new connections, state changes, NAT replies, expiry, eviction from a
//! full table, real-server and service removal, weight-0 quiescing,
//! `expire_nodest_conn`, reloads and sync installs. After every step the
//! worker's [`Census`] agrees with itself (the table's count, a walk, the
//! published gauge, the real servers' active and inactive counters, the
//! walk's active flags), no connection is walked twice, and the ledger
//! holds: what the walk gained and lost since the last step is what the
//! counters say was created, installed, expired and evicted.

use super::*;
use crate::lb::balancer::Census;
use crate::lb::state::TcpState;
use crate::lb::sync::SyncConn;
use proptest::prelude::*;
use std::collections::BTreeMap;

const CLIENTS: [[u8; 4]; 3] = [CLIENT, [198, 51, 100, 8], [198, 51, 100, 9]];
const FLAGS: [u8; 5] = [SYN, ACK, ACK | PSH, FIN | ACK, RST];
/// The TCP services' ports: DR, NAT, persistent DR.
const TCP_PORTS: [u16; 3] = [80, 81, 82];
const UDP_PORT: u16 = 53;

#[derive(Clone, Debug)]
enum Op {
    /// A client's TCP segment to one of the TCP services.
    Tcp {
        svc: usize,
        client: usize,
        cport: u16,
        flags: usize,
    },
    /// A client's datagram to the UDP (NAT) service.
    Udp { client: usize, cport: u16 },
    /// A real server's answer to a client (NAT replies; to a DR or an
    /// unknown flow it is no reply at all).
    Reply {
        from_rip2: bool,
        client: usize,
        cport: u16,
        tcp: Option<usize>,
    },
    /// Time passes (ms) and the housekeeping sweep runs with `budget`.
    Tick { ms: u32, budget: u32 },
    /// A new configuration (an index into [`configs`]).
    Config(usize),
    /// Another director's connection (DR service, port 80).
    Sync {
        client: usize,
        cport: u16,
        rip2: bool,
        established: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 0..3usize, 1..12u16, prop_oneof![3 => Just(0usize), 4 => 1..FLAGS.len()]).prop_map(|(svc, client, cport, flags)| Op::Tcp {
            svc,
            client,
            cport,
            flags
        }),
        2 => (0..3usize, 1..12u16).prop_map(|(client, cport)| Op::Udp { client, cport }),
        2 => (any::<bool>(), 0..3usize, 1..12u16, proptest::option::of(0..FLAGS.len())).prop_map(
            |(from_rip2, client, cport, tcp)| Op::Reply {
                from_rip2,
                client,
                cport,
                tcp
            }
        ),
        2 => (prop_oneof![1..3_000u32, 30_000..400_000u32], 1..64u32)
            .prop_map(|(ms, budget)| Op::Tick { ms, budget }),
        1 => (0..CONFIGS).prop_map(Op::Config),
        1 => (0..3usize, 1..12u16, any::<bool>(), any::<bool>()).prop_map(
            |(client, cport, rip2, established)| Op::Sync {
                client,
                cport,
                rip2,
                established
            }
        ),
    ]
}

const CONFIGS: usize = 7;

/// Configuration `i`: 0 everything; 1 RIP at weight 0; 2 RIP removed; 3
/// the NAT services removed; 4 RIP removed with `expire_nodest_conn`; 5
/// a reload of 0; 6 0 with `sloppy_tcp`.
fn configs(b: &mut SnapshotBuilder, i: usize) {
    let rip_weight = if i == 1 { 0 } else { 1 };
    let servers = |m: Method| {
        let mut v = vec![dest(RIP2, 0, m, 1)];
        if !matches!(i, 2 | 4) {
            v.insert(0, dest(RIP, 0, m, rip_weight));
        }
        v
    };
    for (n, port) in TCP_PORTS.into_iter().enumerate() {
        let nat = n == 1;
        if nat && i == 3 {
            continue;
        }
        let mut s = svc(Proto::Tcp, port);
        if n == 2 {
            s.persistent = Some(300);
        }
        b.service(s, servers(if nat { Method::Nat } else { Method::Dr }));
    }
    if i != 3 {
        b.service(svc(Proto::Udp, UDP_PORT), servers(Method::Nat));
    }
    b.expire_nodest_conn(i == 4);
    b.sloppy_tcp(i == 6);
}

/// What the ledger reads: every creation, install and removal counter.
#[derive(Clone, Copy, Debug, Default)]
struct Ledger {
    expired: u64,
    evicted: u64,
    installed: u64,
}

fn ledger(w: &Balancer) -> Ledger {
    let st = w.stats();
    Ledger {
        expired: st.expired.load(Relaxed),
        evicted: st.evicted.load(Relaxed),
        installed: st.sync[crate::lb::sync::SyncCount::Installed.index()].load(Relaxed),
    }
}

/// Each service slot's (generation, connections created).
fn created(w: &Balancer) -> Vec<(u32, u64)> {
    w.stats()
        .services
        .iter()
        .map(|t| (t.gen.load(Relaxed), t.conns.load(Relaxed)))
        .collect()
}

/// Connections created between two readings of [`created`]: a slot whose
/// generation changed was reset by its first creation since.
fn created_between(a: &[(u32, u64)], b: &[(u32, u64)]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(&(g0, c0), &(g1, c1))| if g0 == g1 { c1 - c0 } else { c1 })
        .sum()
}

/// The walk, as a multiset of (protocol, client, VIP) tuples.
fn walk(w: &Balancer, now: u64) -> BTreeMap<String, u32> {
    let mut m = BTreeMap::new();
    for c in w.conns(now) {
        *m.entry(format!("{:?} {} {}", c.proto, c.client, c.vip))
            .or_insert(0) += 1;
    }
    m
}

fn check(e: &Env, now: u64, before: &(Ledger, Vec<(u32, u64)>, BTreeMap<String, u32>), step: &Op) {
    let c: Census = e.w.census();
    assert!(c.consistent(), "after {step:?}: {c:?}");
    let (l0, c0, w0) = before;
    let l1 = ledger(&e.w);
    let made = created_between(c0, &created(&e.w));
    let w1 = walk(&e.w, now);
    assert!(
        w1.values().all(|&n| n == 1),
        "walked twice after {step:?}: {w1:?}"
    );
    let (n0, n1) = (w0.len() as u64, w1.len() as u64);
    let gone = l1.expired - l0.expired + l1.evicted - l0.evicted;
    let came = made + l1.installed - l0.installed;
    assert_eq!(
        n0 + came,
        n1 + gone,
        "after {step:?}: {n0} walked before, {came} created or installed, {gone} expired or evicted, {n1} walked now"
    );
    let lost = w0.keys().filter(|k| !w1.contains_key(*k)).count() as u64;
    assert!(
        lost <= gone,
        "after {step:?}: {lost} left the walk, {gone} counted gone"
    );
    assert_eq!(c.walked, n1);
}

/// What a run went through: records moved to make room, connections
/// evicted, expired and installed from sync, and the most connections held.
#[derive(Clone, Copy, Debug, Default)]
struct Coverage {
    moved: u64,
    evicted: u64,
    expired: u64,
    installed: u64,
    most: u32,
}

fn run(ops: &[Op]) -> Coverage {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        // small: the full table evicts and refuses
        conn_capacity: 12,
        seed: 42,
        persist_capacity: 16,
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    let mut e = Env {
        ids,
        w,
        eg: FakeEgress::default(),
    };
    let mut epoch = 1;
    let mut snap = e.snap(epoch, |b| configs(b, 0));
    let mut now = S;
    let mut most = 0;
    for step in ops {
        let before = (ledger(&e.w), created(&e.w), walk(&e.w, now));
        match *step {
            Op::Tcp {
                svc,
                client,
                cport,
                flags,
            } => {
                let f = tcp_frame(
                    CLIENTS[client],
                    cport,
                    VIP,
                    TCP_PORTS[svc],
                    FLAGS[flags],
                    b"",
                    64,
                    true,
                );
                e.send(&snap, &f, now);
            }
            Op::Udp { client, cport } => {
                e.send(
                    &snap,
                    &udp_frame(CLIENTS[client], cport, VIP, UDP_PORT, b"q"),
                    now,
                );
            }
            Op::Reply {
                from_rip2,
                client,
                cport,
                tcp,
            } => {
                let rs = if from_rip2 { RIP2 } else { RIP };
                let f = match tcp {
                    Some(fl) => tcp_frame(
                        rs,
                        TCP_PORTS[1],
                        CLIENTS[client],
                        cport,
                        FLAGS[fl] | ACK,
                        b"",
                        64,
                        true,
                    ),
                    None => udp_frame(rs, UDP_PORT, CLIENTS[client], cport, b"a"),
                };
                e.send(&snap, &f, now);
            }
            Op::Tick { ms, budget } => {
                now += u64::from(ms) * 1_000_000;
                e.w.expire(now, budget);
                e.w.expire6(now, budget);
            }
            Op::Config(i) => {
                epoch += 1;
                snap = e.snap(epoch, |b| configs(b, i));
            }
            Op::Sync {
                client,
                cport,
                rip2,
                established,
            } => {
                let state = if established {
                    TcpState::Established
                } else {
                    TcpState::SynRecv
                };
                let s = SyncConn {
                    caddr: ip(CLIENTS[client]).into(),
                    ..sync::synced(state, if rip2 { RIP2 } else { RIP }, cport)
                };
                e.w.install_synced(&snap, &s, now);
            }
        }
        check(&e, now, &before, step);
        most = most.max(e.w.table().len());
    }
    let l = ledger(&e.w);
    Coverage {
        moved: e.w.table().moved(),
        evicted: l.evicted,
        expired: l.expired,
        installed: l.installed,
        most,
    }
}

/// The property over 256 random sequences; then what they went through
/// together, so that a generator that stopped reaching a path fails too.
#[test]
fn every_count_of_the_connections_agrees_after_every_step() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 256,
        ..Config::default()
    });
    let total = std::cell::Cell::new(Coverage::default());
    runner
        .run(&proptest::collection::vec(op(), 1..120), |ops| {
            let c = run(&ops);
            let t = total.get();
            total.set(Coverage {
                moved: t.moved + c.moved,
                evicted: t.evicted + c.evicted,
                expired: t.expired + c.expired,
                installed: t.installed + c.installed,
                most: t.most.max(c.most),
            });
            Ok(())
        })
        .unwrap();
    let t = total.get();
    assert!(
        t.moved > 0 && t.evicted > 0 && t.expired > 0 && t.installed > 0,
        "{t:?}"
    );
    assert_eq!(t.most, 12, "the table never filled: {t:?}");
}

/// A sequence that crosses every path the model draws from, deterministic.
#[test]
fn a_walk_through_every_kind_of_step() {
    let mut ops = Vec::new();
    for cport in 1..10 {
        ops.push(Op::Tcp {
            svc: (cport % 3) as usize,
            client: 0,
            cport,
            flags: 0,
        });
        ops.push(Op::Udp { client: 1, cport });
        ops.push(Op::Reply {
            from_rip2: cport % 2 == 0,
            client: 0,
            cport,
            tcp: Some(1),
        });
        ops.push(Op::Tcp {
            svc: (cport % 3) as usize,
            client: 0,
            cport,
            flags: 1,
        });
        ops.push(Op::Sync {
            client: 2,
            cport,
            rip2: cport % 2 == 1,
            established: cport % 3 == 0,
        });
        ops.push(Op::Config(cport as usize % CONFIGS));
        ops.push(Op::Tick {
            ms: 1_000 * u32::from(cport),
            budget: 8,
        });
    }
    ops.push(Op::Tick {
        ms: 1_000_000,
        budget: 64,
    });
    let c = run(&ops);
    assert!(c.installed > 0 && c.expired > 0, "{c:?}");
}
