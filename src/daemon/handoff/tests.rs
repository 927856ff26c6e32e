//! The handoff file between two processes' balancers, without EAL: what
//! one writes, the other installs into the owning workers; a file refused
//! whole is counted and removed, and dirigo starts without it.

use super::*;
use crate::dataplane::pipeline::owner_of;
use crate::lb::balancer::BalancerConfig;
use crate::lb::handoff::codec::encode;
use crate::lb::handoff::{ConnEntry, VERSION};
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use crate::lb::state::TcpState;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

const VIP: u32 = 0x0a00_0064;
const RS: [u32; 2] = [0x0a00_010b, 0x0a00_010c];

fn snapshot(servers: &[u32]) -> Snapshot {
    let mut ids = LbIds::new(16, 64);
    let dests = servers
        .iter()
        .map(|&a| DestSpec {
            key: DestKey {
                addr: IpAddr::V4(Ipv4Addr::from(a)),
                port: 80,
            },
            method: Method::Nat,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        })
        .collect();
    let mut b = SnapshotBuilder::new();
    b.service(
        ServiceSpec {
            members: Vec::new(),
            key: ServiceKey {
                fwmark: 0,
                proto: Proto::Tcp,
                vip: IpAddr::V4(Ipv4Addr::from(VIP)),
                port: 80,
            },
            sched: SchedKind::Rr,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
            local_addresses: Vec::new(),
            ops: false,
            client_address: Default::default(),
        },
        dests,
    );
    b.build(&mut ids, 1).unwrap()
}

fn workers(n: u32) -> Vec<Option<Balancer>> {
    (0..n)
        .map(|i| {
            let cfg = BalancerConfig {
                conn_capacity: 4096,
                seed: 42 + i,
                worker: i,
                workers: n,
                ..BalancerConfig::default()
            };
            Some(Balancer::new(&cfg, 64, 16))
        })
        .collect()
}

/// `n` established NAT connections from distinct clients, half to each
/// real server.
fn entries(n: u32) -> Vec<Entry> {
    (0..n)
        .map(|i| {
            Entry::Conn(ConnEntry {
                v6: false,
                proto: 6,
                state: TcpState::Established as u8,
                flags: crate::lb::conn::F_ACTIVE,
                method: Method::Nat,
                caddr: (0xc633_6400 + i) as u128,
                vaddr: VIP as u128,
                daddr: RS[(i % 2) as usize] as u128,
                cport: 40000,
                vport: 80,
                dport: 80,
                left_ms: 600_000,
                nat64: (0, 0),
                laddr6: 0,
                cip: 0,
                insert: None,
                fwmark: 0,
                sp: None,
            })
        })
        .collect()
}

fn file_with(dir: &tempfile::TempDir, bytes: &[u8]) -> String {
    let p = dir.path().join("handoff");
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

#[test]
fn what_one_process_writes_the_next_installs_in_the_owners() {
    let dir = tempfile::tempdir().unwrap();
    let snap = snapshot(&RS);
    let mut old = workers(2);
    let stats = HandoffStats::new(None);
    let inc = Incoming {
        bytes: encode(unix_ns(), &entries(100)),
    };
    install(&inc, &mut old, &snap, None, 1_000_000_000, &stats);
    assert_eq!(stats.get(HandoffCount::Installed), 100);
    let path = dir.path().join("handoff");
    let n = write(&path, &mut old, &snap, 2_000_000_000, unix_ns()).unwrap();
    assert_eq!(n, 100);

    // the next process: its own snapshot slots and clock
    let snap2 = snapshot(&RS);
    let mut new = workers(2);
    let stats = HandoffStats::new(Some(path.display().to_string()));
    let inc = read(&path.display().to_string(), &stats).expect("accepted");
    assert!(!path.exists(), "used once");
    install(&inc, &mut new, &snap2, None, 5_000_000_000, &stats);
    assert_eq!(stats.get(HandoffCount::Written), 100);
    assert_eq!(stats.get(HandoffCount::Installed), 100);
    // each connection in the worker its client's packets are steered to
    for (w, lb) in new.iter().enumerate() {
        let lb = lb.as_ref().unwrap();
        for c in lb.table().iter() {
            assert_eq!(owner_of(c.caddr, u32::MAX, 2) as usize, w);
        }
    }
    let total: u32 = new.iter().flatten().map(|b| b.table().len()).sum();
    assert_eq!(total, 100);
    // and both workers got some
    assert!(new.iter().flatten().all(|b| !b.table().is_empty()));
    stats.forwarding_starts();
    assert!(stats.gap_ms().is_some());
    assert_eq!(stats.info().outcome, "installed");
}

#[test]
fn a_removed_server_refuses_its_entries_only() {
    let stats = HandoffStats::new(None);
    let mut lbs = workers(2);
    let inc = Incoming {
        bytes: encode(unix_ns(), &entries(10)),
    };
    install(&inc, &mut lbs, &snapshot(&RS[..1]), None, 1, &stats);
    assert_eq!(stats.get(HandoffCount::Installed), 5);
    assert_eq!(stats.get(HandoffCount::NoDest), 5);
    assert!(stats.info().outcome.contains("refused"));
}

/// The timers ran on while no dirigo ran: a file from a stop longer ago
/// than the connections had left installs none of them.
#[test]
fn time_without_a_dirigo_counts_against_the_timers() {
    let stats = HandoffStats::new(None);
    let mut lbs = workers(2);
    // 10 minutes left each (entries()); stopped 11 minutes ago
    let stopped = unix_ns() - 11 * 60 * 1_000_000_000;
    let inc = Incoming {
        bytes: encode(stopped, &entries(4)),
    };
    install(&inc, &mut lbs, &snapshot(&RS), None, 1, &stats);
    assert_eq!(stats.get(HandoffCount::Expired), 4);
    assert_eq!(stats.get(HandoffCount::Installed), 0);
    // 9 minutes ago: all alive, with a minute left
    let stats = HandoffStats::new(None);
    let inc = Incoming {
        bytes: encode(unix_ns() - 9 * 60 * 1_000_000_000, &entries(4)),
    };
    install(&inc, &mut lbs, &snapshot(&RS), None, 1, &stats);
    assert_eq!(stats.get(HandoffCount::Installed), 4);
    let left: Vec<u32> = lbs
        .iter()
        .flatten()
        .flat_map(|b| b.conns(1).map(|c| c.expires_s).collect::<Vec<_>>())
        .collect();
    assert!(left.iter().all(|&s| (59..=60).contains(&s)), "{left:?}");
}

/// Each whole-file refusal: counted once under its reason, the file
/// removed, nothing installed.
#[test]
fn a_bad_file_is_refused_whole_and_removed() {
    let good = encode(unix_ns(), &entries(3));
    let mut version = good.clone();
    version[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    let mut checksum = good.clone();
    *checksum.last_mut().unwrap() ^= 1;
    let truncated = good[..good.len() - 5].to_vec();
    let mut magic = good.clone();
    magic[0] = b'#';
    for (bytes, why) in [
        (version, HandoffCount::FileVersion),
        (checksum, HandoffCount::FileChecksum),
        (truncated, HandoffCount::FileTruncated),
        (magic, HandoffCount::FileMagic),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let p = file_with(&dir, &bytes);
        let stats = HandoffStats::new(Some(p.clone()));
        assert!(read(&p, &stats).is_none(), "{why:?}");
        assert!(!Path::new(&p).exists(), "{why:?}: used once");
        for c in HandoffCount::ALL {
            assert_eq!(stats.get(c), u64::from(c == why), "{why:?}: {c:?}");
        }
        assert!(stats.info().outcome.starts_with("refused"), "{why:?}");
        stats.forwarding_starts();
        assert_eq!(stats.gap_ms(), None, "no gap without a handoff");
    }
    // no file: nothing to say
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("none").display().to_string();
    let stats = HandoffStats::new(Some(p.clone()));
    assert!(read(&p, &stats).is_none());
    assert_eq!(stats.info().outcome, "none");
}

/// The crash checkpoint: workers sweeping their tables a slice at a time
/// (here a thread per worker stepping its balancer as its housekeeping
/// would), the checkpoint thread gathering their buffers, twice over: the
/// file it makes holds what a clean stop's handoff holds, and installs.
#[test]
fn a_checkpoint_holds_what_a_handoff_holds() {
    use crate::dataplane::checkpoint::{CheckpointLane, Sweep};
    use crate::lb::handoff::codec::{decode, header_for};
    use std::sync::atomic::AtomicBool;
    const N: u32 = 3000;
    const NOW: u64 = 2_000_000_000;
    let snap = snapshot(&RS);
    let mut lbs = workers(2);
    let stats = HandoffStats::new(None);
    let inc = Incoming {
        bytes: encode(unix_ns(), &entries(N)),
    };
    install(&inc, &mut lbs, &snap, None, 1_000_000_000, &stats);
    assert_eq!(stats.get(HandoffCount::Installed), N as u64);
    let lanes: Vec<CheckpointLane> = (0..2).map(|_| CheckpointLane::default()).collect();
    let stop = AtomicBool::new(false);
    let sweeps = std::thread::scope(|sc| {
        for (lane, lb) in lanes.iter().zip(lbs.iter_mut()) {
            // each balancer in its own thread, as a worker's
            let (lb, snap, stop) = (lb.as_mut().unwrap(), &snap, &stop);
            sc.spawn(move || {
                let mut sw = Sweep::default();
                while !stop.load(Relaxed) {
                    sw.step(lane, &*lb, snap, NOW);
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            });
        }
        let refs: Vec<&CheckpointLane> = lanes.iter().collect();
        let never = AtomicBool::new(false);
        let a = checkpoint::sweep(&refs, 1, &never).expect("a sweep");
        let b = checkpoint::sweep(&refs, 2, &never).expect("another");
        stop.store(true, Relaxed);
        [a, b]
    });
    // the clean stop's file, for comparison
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("handoff");
    write(&path, &mut lbs, &snap, NOW, 7).unwrap();
    let clean = std::fs::read(&path).unwrap();
    let sorted = |f: &[u8]| {
        let mut v: Vec<(u32, u16)> = decode(f)
            .expect("decodes")
            .entries()
            .map(|e| match e {
                Entry::Conn(c) => (c.caddr as u32, c.cport),
                Entry::Template(_) => (0, 0),
            })
            .collect();
        v.sort();
        v
    };
    for chunks in &sweeps {
        assert!(chunks.len() >= 2, "{} chunks", chunks.len());
        assert!(chunks.iter().all(|c| c.epoch == chunks[0].epoch));
        let entries: u64 = chunks.iter().map(|c| c.entries as u64).sum();
        assert_eq!(entries, N as u64);
        let parts: Vec<&[u8]> = chunks.iter().map(|c| &c.bytes[..]).collect();
        let h = header_for(&parts, entries, unix_ns());
        let file = [&h[..], &parts.concat()].concat();
        assert_eq!(file.len(), clean.len());
        assert_eq!(sorted(&file), sorted(&clean));
        // and the next process installs all of it
        let mut next = workers(2);
        let stats = HandoffStats::new(None);
        install(&Incoming { bytes: file }, &mut next, &snap, None, 1, &stats);
        assert_eq!(stats.get(HandoffCount::Installed), N as u64);
    }
}

/// What the handoff adds to the gap in forwarding with `n` connections
/// over two workers: the old process's export and write, the new one's
/// read, check and install (a process's start, EAL and the ports, come on
/// top: the lab measures the whole gap). A measurement, run on purpose:
/// `cargo test --release --lib daemon::handoff::tests::timing -- --ignored --nocapture`
/// (docs/OPERATIONS.md, "Restarts and upgrades", has the numbers).
#[test]
#[ignore]
fn timing() {
    for n in [1_000u32, 1_000_000] {
        let snap = snapshot(&RS);
        let cap = (n / 2 + n / 8).max(4096);
        let mk = |seed: u32| {
            (0..2u32)
                .map(|i| {
                    let cfg = BalancerConfig {
                        conn_capacity: cap,
                        seed: seed + i,
                        worker: i,
                        workers: 2,
                        ..BalancerConfig::default()
                    };
                    Some(Balancer::new(&cfg, 64, 16))
                })
                .collect::<Vec<_>>()
        };
        let mut old = mk(1);
        let stats = HandoffStats::new(None);
        // n connections: distinct clients (address and port)
        let es: Vec<Entry> = (0..n)
            .map(|i| {
                let Entry::Conn(c) = entries(1)[0] else {
                    unreachable!()
                };
                Entry::Conn(ConnEntry {
                    caddr: (0xc000_0000 + (i >> 4)) as u128,
                    cport: 1024 + (i & 15) as u16,
                    daddr: RS[(i % 2) as usize] as u128,
                    ..c
                })
            })
            .collect();
        install(
            &Incoming {
                bytes: encode(unix_ns(), &es),
            },
            &mut old,
            &snap,
            None,
            1,
            &stats,
        );
        assert_eq!(stats.get(HandoffCount::Installed), n as u64);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("handoff");
        let t = Instant::now();
        let written = write(&path, &mut old, &snap, 2, unix_ns()).unwrap();
        let t_write = t.elapsed();
        assert_eq!(written, n as u64);
        let size = std::fs::metadata(&path).unwrap().len();
        drop(old);
        let mut new = mk(7);
        let stats = HandoffStats::new(None);
        let t = Instant::now();
        let inc = read(&path.display().to_string(), &stats).expect("accepted");
        let t_read = t.elapsed();
        let t = Instant::now();
        install(&inc, &mut new, &snap, None, 3, &stats);
        let t_install = t.elapsed();
        assert_eq!(stats.get(HandoffCount::Installed), n as u64);
        eprintln!(
            "handoff of {n} connections ({size} bytes): export+write {} ms, read+check {} ms, install {} ms, total {} ms",
            t_write.as_millis(),
            t_read.as_millis(),
            t_install.as_millis(),
            (t_write + t_read + t_install).as_millis()
        );
    }
}
