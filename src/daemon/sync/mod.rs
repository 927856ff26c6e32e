//! Connection sync with other directors: the `dirigo-sync` thread.
//!
//! Linux IPVS's sync protocol, version 1 ([`crate::net::wire::ipvs_sync`]),
//! over an ordinary kernel UDP socket in the exception namespace: the
//! messages leave and arrive through the `[sync] port`'s kernel interface,
//! never through a worker's system call.
//!
//! ```text
//!  workers ─ SyncConn ─► WorkerSync::out (bounded) ─┐
//!                                                   ▼
//!            dirigo-sync: batch into full messages (or flush after 100 ms)
//!                         ─► UDP to 224.0.0.81:8848 (or each unicast peer)
//!            ◄─ UDP :8848: parse, check syncid, per connection: the owning
//!               worker (the steering hash of the client address, as the
//!               pipeline's: IPv4's or IPv6's) ─► WorkerSync::inbound
//!               (bounded) ─► installed at housekeeping, INSTALL_PER_TICK per ms
//! ```
//!
//! IPv4 connections travel in IPv4 entries (36 bytes), IPv6 ones in IPv6
//! entries (72 bytes, `struct ip_vs_sync_v6`); a message is filled to
//! `max_message` bytes whatever its mix.
//!
//! Bounded everywhere: a full queue, a malformed message or entry, a
//! foreign syncid, our own message looped back are counted
//! ([`SyncThreadCount`], [`SyncStats::bad`]) and dropped; the thread never
//! waits for a worker and a worker never waits for it.

use crate::counters::counter_enum;
use crate::daemon::error::DaemonError;
use crate::dataplane::pipeline::{owner6, owner_with, steer_mask, steer_mask6};
use crate::dataplane::rss::ClientOwner;
use crate::dataplane::shared::Shared;
use crate::lb::spec::Method;
use crate::lb::sync::SyncConn;
use crate::net::wire::ipvs_sync::{self as wire, flags, ConnRepr, MessageWriter, SyncError};
use dirigo_config::Sync as SyncConfig;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant};

counter_enum! {
    /// What the sync thread did.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum SyncThreadCount {
        /// Messages sent (to the group, or once per unicast peer).
        MessagesSent: count = "sync_messages_sent",
        /// Connections sent.
        ConnsSent: count = "sync_conns_sent",
        /// Messages the socket refused to send.
        SendFailed: drop = "sync_send_failed",
        /// Messages received and parsed.
        MessagesReceived: count = "sync_messages_received",
        /// Connections received and handed to their worker.
        ConnsReceived: count = "sync_conns_received",
        /// Messages from one of this director's own addresses (ignored).
        OwnIgnored: count = "sync_own_ignored",
        /// Messages with another syncid (ignored).
        SyncidMismatch: drop = "sync_syncid_mismatch",
        /// Connections lost: the owning worker's queue was full.
        WorkerQueueFull: drop = "sync_worker_queue_full",
        /// Messages without entries: a director that started (answered by
        /// sending the whole table again, at most once a second).
        PeerHello: count = "sync_peer_hello",
    }
}

/// The sync thread's counters (single writer: the thread).
pub struct SyncStats {
    /// By [`SyncThreadCount`].
    pub counts: [AtomicU64; SyncThreadCount::COUNT],
    /// Malformed messages and entries, by [`SyncError`] (in `SyncError::ALL` order).
    pub bad: [AtomicU64; SyncError::ALL.len()],
}

impl Default for SyncStats {
    fn default() -> Self {
        SyncStats {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            bad: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl SyncStats {
    /// Connections received and handed to their worker so far.
    pub fn conns_received(&self) -> u64 {
        self.counts[SyncThreadCount::ConnsReceived.index()].load(Relaxed)
    }

    fn bump(&self, c: SyncThreadCount, n: u64) {
        self.counts[c.index()].fetch_add(n, Relaxed);
    }

    fn bad(&self, e: SyncError) {
        if let Some(i) = SyncError::ALL.iter().position(|x| *x == e) {
            self.bad[i].fetch_add(1, Relaxed);
        }
    }

    /// Every counter as (name, value): the thread's, then the malformed
    /// ones as `sync_bad_<reason>`.
    pub fn named(&self) -> Vec<(String, u64, bool)> {
        let mut v: Vec<(String, u64, bool)> = SyncThreadCount::ALL
            .iter()
            .map(|c| {
                (
                    c.name().to_string(),
                    self.counts[c.index()].load(Relaxed),
                    c.is_drop(),
                )
            })
            .collect();
        for (i, e) in SyncError::ALL.iter().enumerate() {
            v.push((
                format!("sync_bad_{}", e.name()),
                self.bad[i].load(Relaxed),
                true,
            ));
        }
        v
    }
}

/// A flush of a partly filled message after this long (IPVS waits 2 s;
/// a takeover wants the state sooner).
pub const FLUSH: Duration = Duration::from_millis(100);

/// The connections a worker's queue gives the thread per round.
const POP_PER_ROUND: usize = 4096;

/// How a connection is written on the wire (IPVS `IP_VS_CONN_F_BACKUP_MASK`
/// flags: the forwarding method, no-output, inactive).
pub fn to_repr(c: &SyncConn) -> ConnRepr {
    let fwd = match c.method {
        // FullNAT connections are not sent (the entry has no room for the
        // local address and port): not reached
        Some(Method::Nat | Method::FullNat) | None => flags::MASQ,
        Some(Method::Tun) => flags::TUNNEL,
        Some(Method::Dr) => flags::DROUTE,
    };
    let tcp = c.proto == crate::net::meta::PROTO_TCP;
    let established = tcp && c.state == crate::lb::state::TcpState::Established as u8;
    let mut f = fwd;
    if c.no_output {
        f |= flags::NOOUTPUT;
    }
    if !established {
        f |= flags::INACTIVE;
    }
    if c.template {
        f |= flags::TEMPLATE;
    }
    ConnRepr {
        protocol: c.proto,
        flags: f,
        state: c.state as u16,
        cport: c.cport,
        vport: c.vport,
        dport: c.dport,
        fwmark: 0,
        timeout: c.timeout_s,
        caddr: ip_of(c.v6, c.caddr),
        vaddr: ip_of(c.v6, c.vaddr),
        daddr: ip_of(c.v6, c.daddr),
    }
}

/// A [`SyncConn`] address as the wire's: IPv6, or IPv4 from its low 32 bits.
fn ip_of(v6: bool, a: u128) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(a))
    } else {
        IpAddr::V4(Ipv4Addr::from(a as u32))
    }
}

/// A wire address as a [`SyncConn`]'s (an IPv4 one widened).
fn bits_of(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u32::from(a).into(),
        IpAddr::V6(a) => a.into(),
    }
}

/// What a received entry says, in the core's terms.
pub fn from_repr(r: &ConnRepr) -> SyncConn {
    let method = match r.flags & flags::FWD_MASK {
        flags::MASQ => Some(Method::Nat),
        flags::TUNNEL => Some(Method::Tun),
        flags::DROUTE => Some(Method::Dr),
        _ => None,
    };
    SyncConn {
        v6: r.is_ipv6(),
        proto: r.protocol,
        state: u8::try_from(r.state).unwrap_or(u8::MAX),
        no_output: r.flags & flags::NOOUTPUT != 0,
        method,
        template: r.flags & flags::TEMPLATE != 0,
        caddr: bits_of(r.caddr),
        vaddr: bits_of(r.vaddr),
        daddr: bits_of(r.daddr),
        cport: r.cport,
        vport: r.vport,
        dport: r.dport,
        timeout_s: r.timeout,
    }
}

/// The running sync thread.
pub struct SyncThread {
    /// Its counters.
    pub stats: Arc<SyncStats>,
    /// What it was started with.
    pub config: SyncConfig,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl SyncThread {
    /// Wait for the thread (after `stop` was set).
    pub fn join(mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The socket, made in the namespace of the kernel interface (socket2 for
/// the multicast options std lacks, then used as a std socket).
fn socket(cfg: &SyncConfig) -> std::io::Result<UdpSocket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.bind(&SockAddr::from(SocketAddrV4::new(
        Ipv4Addr::UNSPECIFIED,
        cfg.udp_port,
    )))?;
    s.set_multicast_if_v4(&cfg.source)?;
    s.set_multicast_ttl_v4(cfg.ttl)?;
    s.set_multicast_loop_v4(false)?;
    if cfg.receive && cfg.peers.is_empty() {
        s.join_multicast_v4(&cfg.group, &cfg.source)?;
    }
    s.set_read_timeout(Some(Duration::from_millis(5)))?;
    Ok(s.into())
}

/// Start the thread in namespace `netns` (`None`: dirigo's own); the
/// socket is made before this returns, so a port in use or a missing
/// interface stops dirigo at start with one line.
pub fn start(
    cfg: SyncConfig,
    netns: Option<String>,
    shared: Arc<Shared>,
    owner: Option<Arc<ClientOwner>>,
    stop: Arc<AtomicBool>,
) -> Result<SyncThread, DaemonError> {
    let stats = Arc::new(SyncStats::default());
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(), String>>(1);
    let st = Arc::clone(&stats);
    let c = cfg.clone();
    let handle = std::thread::Builder::new()
        .name("dirigo-sync".into())
        .spawn(move || {
            let made = (|| -> Result<UdpSocket, String> {
                if let Some(n) = &netns {
                    let ns = crate::kernel::netns::Netns::ensure(n).map_err(|e| e.to_string())?;
                    ns.enter_current_thread().map_err(|e| e.to_string())?;
                }
                socket(&c).map_err(|e| {
                    format!(
                        "sync socket on {} (UDP {}, group {}): {e}",
                        c.interface, c.udp_port, c.group
                    )
                })
            })();
            match made {
                Ok(sock) => {
                    let _ = tx.send(Ok(()));
                    run(&c, &sock, &shared, owner.as_deref(), &st, &stop);
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        })
        .map_err(|e| DaemonError::Other(format!("sync thread: {e}")))?;
    match rx.recv() {
        Ok(Ok(())) => Ok(SyncThread {
            stats,
            config: cfg,
            handle: Some(handle),
        }),
        Ok(Err(e)) => {
            let _ = handle.join();
            Err(DaemonError::Other(e))
        }
        Err(_) => Err(DaemonError::Other("sync thread ended at start".into())),
    }
}

/// Entry bytes per message: what fits in `max_message` after the header,
/// at least one IPv6 entry (the largest dirigo writes).
pub fn entry_room(max_message: usize) -> usize {
    max_message
        .saturating_sub(wire::HEADER_LEN)
        .max(wire::CONN_V6_LEN)
}

/// The thread's loop: until `stop`, send what the workers queued and
/// hand what arrives to its owning worker.
fn run(
    cfg: &SyncConfig,
    sock: &UdpSocket,
    shared: &Shared,
    owner: Option<&ClientOwner>,
    stats: &SyncStats,
    stop: &AtomicBool,
) {
    let mut batch = Batch::new(cfg.max_message);
    let mut out = Out::new(cfg, sock, stats);
    let mut rbuf = vec![0u8; 65_536];
    // a director that starts says so (a message without entries) and the
    // others send it their tables; said again each second for the first
    // HELLO_FOR, as the links may come up after the process
    let started = Instant::now();
    let mut hellos = 0u32;
    let mut last_resend: Option<Instant> = None;
    while !stop.load(Relaxed) {
        if cfg.receive && started.elapsed() >= HELLO_EVERY * hellos && started.elapsed() < HELLO_FOR
        {
            hellos += 1;
            out.send(&mut Vec::new());
        }
        if cfg.send {
            batch.collect(shared, &mut out);
        }
        // the read timeout paces the loop when nothing arrives
        match sock.recv_from(&mut rbuf) {
            Ok((n, from)) if cfg.receive => {
                let src = match from.ip() {
                    std::net::IpAddr::V4(a) => Some(a),
                    std::net::IpAddr::V6(_) => None,
                };
                let hello = receive(cfg, shared, owner, stats, &rbuf[..n.min(rbuf.len())], src);
                if hello && cfg.send && last_resend.is_none_or(|t| t.elapsed() >= RESEND_HOLDOFF) {
                    last_resend = Some(Instant::now());
                    resend_all(shared);
                }
            }
            Ok(_) => {}
            Err(_) => {}
        }
    }
    if cfg.send {
        batch.flush(&mut out);
    }
}

/// Ask every worker to send its table again (a peer said hello).
fn resend_all(shared: &Shared) {
    for w in &shared.workers {
        if let Some(q) = &w.sync {
            q.resend.store(true, Relaxed);
        }
    }
}

/// Where messages go: the group, or each unicast peer.
struct Out<'a> {
    /// The `[sync]` section.
    cfg: &'a SyncConfig,
    /// The sync socket.
    sock: &'a UdpSocket,
    /// Where sends are counted.
    stats: &'a SyncStats,
    /// The group, or the peers.
    targets: Vec<SocketAddrV4>,
    /// The message being written.
    buf: Vec<u8>,
}

impl<'a> Out<'a> {
    /// Sending with `cfg` over `sock`, counted in `stats`.
    fn new(cfg: &'a SyncConfig, sock: &'a UdpSocket, stats: &'a SyncStats) -> Out<'a> {
        let targets: Vec<SocketAddrV4> = if cfg.peers.is_empty() {
            vec![SocketAddrV4::new(cfg.group, cfg.udp_port)]
        } else {
            cfg.peers
                .iter()
                .map(|p| SocketAddrV4::new(*p, cfg.udp_port))
                .collect()
        };
        Out {
            cfg,
            sock,
            stats,
            targets,
            buf: vec![0u8; wire::HEADER_LEN + entry_room(cfg.max_message)],
        }
    }

    /// Send `pending` (emptied; none: a hello) as one message to each
    /// target.
    fn send(&mut self, pending: &mut Vec<ConnRepr>) {
        let mut w = MessageWriter::new(&mut self.buf, self.cfg.syncid);
        let n = pending.len();
        for c in pending.drain(..) {
            let _ = w.push(&c);
        }
        let msg = w.finish();
        for t in &self.targets {
            match self.sock.send_to(msg, t) {
                Ok(_) => {
                    self.stats.bump(SyncThreadCount::MessagesSent, 1);
                    self.stats.bump(SyncThreadCount::ConnsSent, n as u64);
                }
                Err(_) => self.stats.bump(SyncThreadCount::SendFailed, 1),
            }
        }
    }
}

/// The workers' connections not sent yet.
struct Batch {
    /// Connections waiting for a message.
    pending: Vec<ConnRepr>,
    /// Their entries' bytes.
    bytes: usize,
    /// Entry bytes a message holds ([`entry_room`]).
    room: usize,
    /// When the last message left (or nothing was waiting).
    last_flush: Instant,
}

impl Batch {
    /// Empty, for messages of at most `max_message` bytes.
    fn new(max_message: usize) -> Batch {
        Batch {
            pending: Vec::with_capacity(wire::MAX_ENTRIES),
            bytes: 0,
            room: entry_room(max_message),
            last_flush: Instant::now(),
        }
    }

    /// Add `r`, sending the message first when `r` would not fit in it
    /// (bytes, or 255 entries); true when a message left.
    fn add(&mut self, r: ConnRepr, out: &mut Out) -> bool {
        let n = r.entry_len();
        let full = !self.pending.is_empty()
            && (self.bytes + n > self.room || self.pending.len() >= wire::MAX_ENTRIES);
        if full {
            out.send(&mut self.pending);
            self.bytes = 0;
        }
        self.pending.push(r);
        self.bytes += n;
        full
    }

    /// Send what waits (if anything).
    fn flush(&mut self, out: &mut Out) {
        if !self.pending.is_empty() {
            out.send(&mut self.pending);
        }
        self.bytes = 0;
    }

    /// Take what the workers queued (`POP_PER_ROUND` each), sending each
    /// full message, and what waited `FLUSH`.
    fn collect(&mut self, shared: &Shared, out: &mut Out) {
        for w in &shared.workers {
            let Some(q) = &w.sync else { continue };
            for _ in 0..POP_PER_ROUND {
                let Some(c) = q.out.pop() else { break };
                if self.add(to_repr(&c), out) {
                    self.last_flush = Instant::now();
                }
            }
        }
        if !self.pending.is_empty() && self.last_flush.elapsed() >= FLUSH {
            self.flush(out);
            self.last_flush = Instant::now();
        }
        if self.pending.is_empty() {
            self.last_flush = Instant::now();
        }
    }
}

/// A starting director says hello this often ...
const HELLO_EVERY: Duration = Duration::from_secs(1);
/// ... for this long.
const HELLO_FOR: Duration = Duration::from_secs(5);

/// A director's tables are sent again at most this often.
const RESEND_HOLDOFF: Duration = Duration::from_secs(1);

/// One received datagram from `src`; true when it is a peer's hello (a
/// message without entries: that director just started). `owner` is the
/// NIC's owner function when the ports hash on the client address (see
/// [`owner_with`]).
pub fn receive(
    cfg: &SyncConfig,
    shared: &Shared,
    owner: Option<&ClientOwner>,
    stats: &SyncStats,
    data: &[u8],
    src: Option<Ipv4Addr>,
) -> bool {
    if src == Some(cfg.source) {
        stats.bump(SyncThreadCount::OwnIgnored, 1);
        return false;
    }
    let (hdr, entries) = match wire::parse(data) {
        Ok(x) => x,
        Err(e) => {
            stats.bad(e);
            return false;
        }
    };
    if cfg.syncid != 0 && hdr.syncid != cfg.syncid {
        stats.bump(SyncThreadCount::SyncidMismatch, 1);
        return false;
    }
    stats.bump(SyncThreadCount::MessagesReceived, 1);
    if hdr.count == 0 {
        stats.bump(SyncThreadCount::PeerHello, 1);
        return true;
    }
    let snap = shared.lb.load();
    let mask = steer_mask(&snap);
    let mask6 = steer_mask6(&snap);
    let workers = shared.workers.len().max(1) as u32;
    for e in entries {
        match e {
            Ok(r) => {
                let c = from_repr(&r);
                // the worker the pipeline steers the client's packets to
                let w = if c.v6 {
                    owner6(c.caddr & mask6, workers)
                } else {
                    owner_with(owner, c.caddr4(), mask, workers)
                } as usize;
                let Some(q) = shared.workers.get(w).and_then(|w| w.sync.as_ref()) else {
                    stats.bump(SyncThreadCount::WorkerQueueFull, 1);
                    continue;
                };
                if q.inbound.push(c).is_ok() {
                    stats.bump(SyncThreadCount::ConnsReceived, 1);
                } else {
                    stats.bump(SyncThreadCount::WorkerQueueFull, 1);
                }
            }
            Err(e) => stats.bad(e),
        }
    }
    false
}

#[cfg(test)]
mod tests;
