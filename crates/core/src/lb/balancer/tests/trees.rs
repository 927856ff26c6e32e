//! The load schedulers over many servers pick from a winner tree
//! (`balancer/trees.rs`): every pick is the one the walk over the live
//! counters gives, while connections open, become active, close, expire
//! and the snapshot changes weights.

use super::super::trees::TREE_MIN;
use super::*;
use crate::lb::sched::{self, Cursor, DestLoad, Prepared};
use crate::lb::sync::{SyncConn, SyncCount};

/// Servers of the service: enough for the tree.
const N: usize = 40;

fn rs(i: usize) -> [u8; 4] {
    [10, 0, 0, 30 + i as u8]
}

fn weights(epoch: u64) -> Vec<u32> {
    // some 0 (quiesced, never picked), the rest 1-3, moved by the epoch
    (0..N).map(|i| ((i as u64 + epoch) % 4) as u32).collect()
}

/// Real server `i`'s IPv6 address.
fn rs6(i: usize) -> u128 {
    RIP6 + 0x100 + i as u128
}

fn snap_of(e: &mut Env, kind: SchedKind, epoch: u64, ip6: bool) -> Snapshot {
    let mut spec = if ip6 {
        super::v6::svc6(Proto::Tcp, 80)
    } else {
        svc(Proto::Tcp, 80)
    };
    spec.sched = kind;
    let ds = weights(epoch)
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if ip6 {
                super::v6::dest6(rs6(i), 0, Method::Dr, *w)
            } else {
                dest(rs(i), 0, Method::Dr, *w)
            }
        })
        .collect();
    e.snap(epoch, |b| {
        b.service(spec, ds);
    })
}

/// The walk's pick over the counters as they are now (its index).
fn walk(e: &Env, s: &Snapshot, kind: SchedKind, epoch: u64) -> Option<usize> {
    let w = weights(epoch);
    let loads: Vec<DestLoad> = (0..N)
        .map(|i| {
            let (active, inactive) = e.load(s, 0, i);
            DestLoad {
                weight: w[i],
                active: active as u32,
                inactive: inactive as u32,
                overloaded: false,
            }
        })
        .collect();
    let prep = Prepared::build(kind, SchedFlags::default(), &w);
    let key = crate::net::meta::FlowKey::default();
    sched::pick(&prep, &mut Cursor::default(), &loads, &key)
}

/// Send a TCP segment of connection `cport` (IPv4 or IPv6).
fn send(e: &mut Env, s: &Snapshot, ip6: bool, flags: u8, cport: u16, now: u64) -> LbVerdict {
    if ip6 {
        e.send6(s, &super::v6::from_client(flags, cport, 80), now).0
    } else {
        e.send(
            s,
            &tcp_frame(CLIENT, cport, VIP, 80, flags, b"", 64, true),
            now,
        )
        .0
    }
}

/// The index of the server connection `cport` went to.
fn server_of(e: &Env, ip6: bool, cport: u16) -> Option<usize> {
    if ip6 {
        let c = e.w.table6().iter().find(|c| c.cport == cport)?;
        (0..N).find(|i| rs6(*i) == c.daddr)
    } else {
        let c = e.w.table().iter().find(|c| c.cport == cport)?;
        (0..N).find(|i| u32::from_be_bytes(rs(*i)) == c.daddr)
    }
}

#[test]
fn many_servers_pick_what_the_walk_over_live_counters_picks() {
    picks_agree(false);
}

#[test]
fn many_ipv6_servers_pick_what_the_walk_over_live_counters_picks() {
    picks_agree(true);
}

fn picks_agree(ip6: bool) {
    const { assert!(N >= TREE_MIN, "the service must be large enough for a tree") };
    for kind in [
        SchedKind::Lc,
        SchedKind::Wlc,
        SchedKind::Sed,
        SchedKind::Nq,
        SchedKind::Fo,
    ] {
        let mut e = env(4096);
        let mut epoch = 1;
        let mut s = snap_of(&mut e, kind, epoch, ip6);
        let mut now = S;
        let mut rng = 0x9e37_79b9_u32;
        let mut expired = 0;
        for p in 1..=800u16 {
            if p == 400 {
                // new weights: the tree is built again
                epoch = 2;
                s = snap_of(&mut e, kind, epoch, ip6);
            }
            let want = walk(&e, &s, kind, epoch);
            let cport = 1000 + p;
            let v = send(&mut e, &s, ip6, SYN, cport, now);
            assert_eq!(v, LbVerdict::Tx { port: 1 }, "{kind:?} {p}");
            assert_eq!(server_of(&e, ip6, cport), want, "{kind:?}: connection {p}");
            // what happens to connections between picks: established,
            // reset, closed, expired
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            let old = 1000 + 1 + (rng >> 8) as u16 % p;
            match rng % 6 {
                0 | 1 => {
                    send(&mut e, &s, ip6, ACK, cport, now);
                }
                2 => {
                    send(&mut e, &s, ip6, RST | ACK, old, now);
                }
                3 => {
                    send(&mut e, &s, ip6, FIN | ACK, old, now);
                }
                _ => {}
            }
            if p % 150 == 0 {
                // past the closing states' timeouts, not ESTABLISHED's
                now += 70 * S;
                expired += e.w.expire(now, 1 << 20) + e.w.expire6(now, 1 << 20);
            }
        }
        assert!(
            expired > 0,
            "{kind:?}: nothing expired, the test lost its point"
        );
    }
}

/// A connection another director synced to server `i` (DR, no reply seen).
fn synced_to(i: usize, state: TcpState, cport: u16) -> SyncConn {
    super::sync::synced(state, rs(i), cport)
}

/// Connections installed from another director's sync messages, and the
/// later messages that change their state, move their server's counters:
/// the tree hears of both, so each new connection still goes where the
/// walk over the live counters says. The synced connections go to the
/// server the walk would pick next, so a tree that missed them would pick
/// it again.
#[test]
fn synced_connections_move_the_tree_too() {
    const { assert!(N >= TREE_MIN, "the service must be large enough for a tree") };
    for kind in [SchedKind::Wlc, SchedKind::Lc, SchedKind::Nq] {
        let mut e = env(4096);
        let s = snap_of(&mut e, kind, 1, false);
        let now = S;
        let mut installed = Vec::new();
        for p in 1..=300u16 {
            let want = walk(&e, &s, kind, 1);
            if p % 3 == 0 {
                // the next winner gets a synced connection (ESTABLISHED
                // or not), or a synced one changes state
                let target = want.expect("a server is available");
                let cport = 30_000 + p;
                let state = if p % 2 == 0 {
                    TcpState::Established
                } else {
                    TcpState::SynRecv
                };
                e.w.install_synced(&s, &synced_to(target, state, cport), now);
                installed.push((target, cport, state));
                if p % 5 == 0 {
                    let (i, cp, st) = installed[installed.len() / 2];
                    let flip = if st == TcpState::Established {
                        TcpState::SynRecv
                    } else {
                        TcpState::Established
                    };
                    e.w.install_synced(&s, &synced_to(i, flip, cp), now);
                    let n = installed.len() / 2;
                    installed[n].2 = flip;
                }
                continue;
            }
            let cport = 1000 + p;
            let v = send(&mut e, &s, false, SYN, cport, now);
            assert_eq!(v, LbVerdict::Tx { port: 1 }, "{kind:?} {p}");
            assert_eq!(
                server_of(&e, false, cport),
                want,
                "{kind:?}: connection {p}"
            );
        }
        let n = |c: SyncCount| e.w.stats().sync[c.index()].load(Relaxed);
        assert!(
            n(SyncCount::Installed) >= 90 && n(SyncCount::Updated) >= 15,
            "{kind:?}: the synced connections were not installed and updated"
        );
    }
}
