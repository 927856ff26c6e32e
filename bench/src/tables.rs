//! The connection table beside the one-line table (`dirigo_core::lb::conn::lines`)
//! on the same keys in the same run: what issue 21's next step would buy
//! before the balancer moves over.
//!
//! Three cases, each table alone (no classify, no balancer, no I/O):
//! - `lookup`: `flows` established DR connections in a table of
//!   `capacity`, looked up in bursts of 32 in a fixed random order with
//!   the burst path's stages (hash + prefetch of the first line for the
//!   whole burst (both lines for the one-line table), the second stage
//!   [`TOUCH_LAG`] packets ahead, then the lookup and the expiry store); for the one-line table also with one
//!   line per connection (`wide`: 80 bytes per connection with its reply
//!   index, where the default has three lines per four);
//! - `reply`: the same with NAT connections, looked up by their reply
//!   tuples (the one-line table told to expect replies);
//! - `newconn`: a full table of `NEWCONN_CAP` embryonic connections with
//!   no eviction grace, every key new: the lookup misses and the insert
//!   evicts (the new-connection scenario's table work).

use dirigo_core::lb::balancer::TOUCH_LAG;
use dirigo_core::lb::conn::lines::LineTable;
use dirigo_core::lb::conn::{Conn, ConnTable};
use dirigo_core::lb::spec::Method;
use dirigo_core::lb::state::TcpState;
use dirigo_core::net::meta::{FlowKey, PROTO_TCP};
use std::hint::black_box;
use std::time::{Duration, Instant};

const B: usize = 32;
/// The new-connection case's table (the daemon scenario's).
pub const NEWCONN_CAP: u32 = 65536;

/// Nanoseconds per operation, by table.
#[derive(Clone, Copy, Debug)]
pub struct TableProbe {
    /// Index + records: an established lookup.
    pub index_lookup: f64,
    /// One-line: an established lookup.
    pub line_lookup: f64,
    /// One-line with one line per connection: the same.
    pub wide_lookup: f64,
    /// Index + records: a NAT reply's lookup.
    pub index_reply: f64,
    /// One-line: the same.
    pub line_reply: f64,
    /// Index + records: a miss and an insert that evicts.
    pub index_newconn: f64,
    /// One-line: the same.
    pub line_newconn: f64,
    /// Share of the one-line table's connections in their primary line.
    pub in_primary: f64,
    /// NAT connections (a record and a reply entry each) the one-line
    /// table placed of `flows` offered (the index table places them all).
    pub nat_placed: u32,
}

fn key(i: u32) -> FlowKey {
    FlowKey {
        src: 0x0a00_0000 | (i.wrapping_mul(2_654_435_761) & 0x00ff_ffff),
        dst: 0xc0a8_6464,
        sport: 1024 + (i >> 8) as u16,
        dport: 80,
        proto: PROTO_TCP,
    }
}

fn conn(k: &FlowKey, state: TcpState, expires: u32) -> Conn {
    Conn {
        ext: (),
        caddr: k.src,
        vaddr: k.dst,
        daddr: 0xac10_000b,
        dest: 0,
        expires,
        cport: k.sport,
        vport: k.dport,
        dport: 80,
        svc: 0,
        proto: k.proto,
        state: state as u8,
        flags: 0,
        method: Method::Dr,
    }
}

/// One table under the burst path's stages.
trait Staged {
    fn hash(&self, k: &FlowKey) -> u32;
    /// Stage one: the first line.
    fn first(&self, h: u32);
    /// Stage two, [`TOUCH_LAG`] keys ahead.
    fn second(&self, k: &FlowKey, h: u32);
    /// The lookup (and what follows it).
    fn look(&mut self, k: &FlowKey, h: u32);
}

/// The staged burst walk over `order` (indices into `keys`), in the burst
/// path's order: ns per key.
fn walk(t: &mut impl Staged, keys: &[FlowKey], order: &[u32], time: Duration) -> f64 {
    let mut done = 0u64;
    let t0 = Instant::now();
    let mut at = 0;
    let mut h = [0u32; B];
    while t0.elapsed() < time {
        for _ in 0..256 {
            let burst: [&FlowKey; B] = std::array::from_fn(|i| {
                let o = order[(at + i) % order.len()];
                &keys[o as usize]
            });
            at = (at + B) % order.len();
            for i in 0..B {
                h[i] = t.hash(burst[i]);
                t.first(h[i]);
                if i >= TOUCH_LAG {
                    t.second(burst[i - TOUCH_LAG], h[i - TOUCH_LAG]);
                }
            }
            for x in 0..B {
                if x + TOUCH_LAG >= B - TOUCH_LAG && x + TOUCH_LAG < B {
                    t.second(burst[x + TOUCH_LAG], h[x + TOUCH_LAG]);
                }
                t.look(burst[x], h[x]);
            }
            done += B as u64;
        }
    }
    t0.elapsed().as_nanos() as f64 / done as f64
}

/// Established lookups (`new`: false) or misses and inserts (`new`: true)
/// in the index + records table.
struct Index(ConnTable<Conn>, bool);
/// The same in the one-line table (the third field: expect NAT replies).
struct Lines(LineTable, bool, bool);

const FAR: u32 = 1 << 30;

impl Staged for Index {
    fn hash(&self, k: &FlowKey) -> u32 {
        self.0.hash(k)
    }
    fn first(&self, h: u32) {
        self.0.touch(h)
    }
    fn second(&self, _: &FlowKey, h: u32) {
        self.0.touch_records(h)
    }
    fn look(&mut self, k: &FlowKey, h: u32) {
        match self.0.lookup_probe_rec(k, h) {
            Ok((hit, _)) => {
                let i = black_box(hit.idx);
                self.0.set_expires(i, FAR);
            }
            Err(p) if self.1 => {
                black_box(self.0.insert_probed(conn(k, TcpState::SynRecv, 0), p, 0));
            }
            Err(_) => {}
        }
    }
}

impl Staged for Lines {
    fn hash(&self, k: &FlowKey) -> u32 {
        self.0.hash(k)
    }
    fn first(&self, h: u32) {
        if self.2 {
            self.0.touch_reply(h)
        } else {
            self.0.touch(h)
        }
    }
    fn second(&self, _: &FlowKey, h: u32) {
        if self.2 {
            self.0.touch_more_reply(h)
        }
    }
    fn look(&mut self, k: &FlowKey, h: u32) {
        match self.0.lookup_rec_from(k, h, self.2) {
            Some((hit, _)) => {
                let i = black_box(hit.idx);
                self.0.set_expires(i, FAR);
            }
            None if self.1 => {
                black_box(self.0.insert_hashed(conn(k, TcpState::SynRecv, 0), h, 0));
            }
            None => {}
        }
    }
}

/// An established NAT connection of `k` (its real server's port differs
/// from the virtual one, as a reply tuple's would).
fn nat(k: &FlowKey) -> Conn {
    let mut c = conn(k, TcpState::Established, FAR);
    c.method = Method::Nat;
    c.dport = 8080;
    c
}

/// `t` filled with `fill`'s DR connections (NAT when `reply`), walked
/// over `keys` in order: ns per key.
fn lines_walk(
    t: LineTable,
    fill: &[FlowKey],
    keys: &[FlowKey],
    seq: &[u32],
    time: Duration,
    reply: bool,
) -> f64 {
    let mut lt = Lines(t, false, reply);
    for k in fill {
        let c = if reply {
            nat(k)
        } else {
            conn(k, TcpState::Established, FAR)
        };
        lt.0.insert(c, 0);
    }
    walk(&mut lt, keys, seq, time)
}

/// Run every case for both tables, about `time` on each of the four.
pub fn run(capacity: u32, flows: u32, time: Duration) -> TableProbe {
    let keys: Vec<FlowKey> = (0..flows).map(key).collect();
    let order = shuffled(flows);
    let mut it = Index(ConnTable::<Conn>::new(capacity, 7), false);
    for k in &keys {
        it.0.insert(conn(k, TcpState::Established, FAR), 0);
    }
    // the keys in lookup order, read sequentially (as packets arrive)
    let in_order: Vec<FlowKey> = order.iter().map(|&o| keys[o as usize]).collect();
    let seq: Vec<u32> = (0..flows).collect();
    let index_lookup = walk(&mut it, &in_order, &seq, time);
    drop(it);
    let line_lookup = lines_walk(
        LineTable::new(capacity, 7),
        &keys,
        &in_order,
        &seq,
        time,
        false,
    );
    let wide = LineTable::with_lines(capacity, 7, capacity);
    let wide_lookup = lines_walk(wide, &keys, &in_order, &seq, time, false);
    let in_primary = in_primary(capacity, &keys);
    let (index_reply, line_reply) = replies(capacity, &keys, &in_order, &seq, time);
    let (index_newconn, line_newconn) = newconn(flows, time);
    let nat_placed = nat_placed(capacity, &keys);
    TableProbe {
        nat_placed,
        index_lookup,
        line_lookup,
        wide_lookup,
        index_reply,
        line_reply,
        index_newconn,
        line_newconn,
        in_primary,
    }
}

/// `0..flows` in a fixed random order (xorshift Fisher-Yates).
fn shuffled(flows: u32) -> Vec<u32> {
    let mut order: Vec<u32> = (0..flows).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    order
}

/// Share of `keys`' DR connections the one-line table puts in their
/// primary line.
fn in_primary(capacity: u32, keys: &[FlowKey]) -> f64 {
    let mut t = LineTable::new(capacity, 7);
    for k in keys {
        t.insert(conn(k, TcpState::Established, FAR), 0);
    }
    t.in_primary() as f64 / t.len().max(1) as f64
}

/// NAT replies: the same connections, NAT, looked up by reply tuple
/// (`in_order`'s): ns per key, index + records then one-line.
fn replies(
    capacity: u32,
    keys: &[FlowKey],
    in_order: &[FlowKey],
    seq: &[u32],
    time: Duration,
) -> (f64, f64) {
    let replies: Vec<FlowKey> = in_order.iter().map(|k| nat(k).out_key()).collect();
    let mut it = Index(ConnTable::<Conn>::new(capacity, 7), false);
    for k in keys {
        it.0.insert(nat(k), 0);
    }
    let index_reply = walk(&mut it, &replies, seq, time);
    drop(it);
    let line_reply = lines_walk(LineTable::new(capacity, 7), keys, &replies, seq, time, true);
    (index_reply, line_reply)
}

/// New connections: every key new, the table full of embryonic ones: ns
/// per key, index + records then one-line.
fn newconn(flows: u32, time: Duration) -> (f64, f64) {
    let stream: Vec<FlowKey> = (0..flows.max(4 * NEWCONN_CAP))
        .map(|i| key(i.wrapping_add(1 << 31)))
        .collect();
    let seq: Vec<u32> = (0..stream.len() as u32).collect();
    let mut it = Index(ConnTable::<Conn>::new(NEWCONN_CAP, 7), true);
    it.0.set_embryonic_grace(0);
    let index_newconn = walk(&mut it, &stream, &seq, time);
    drop(it);
    let mut lt = Lines(LineTable::new(NEWCONN_CAP, 7), true, false);
    lt.0.set_embryonic_grace(0);
    let line_newconn = walk(&mut lt, &stream, &seq, time);
    (index_newconn, line_newconn)
}

/// How many of `keys`' NAT connections the one-line table places.
fn nat_placed(capacity: u32, keys: &[FlowKey]) -> u32 {
    let mut nt = LineTable::new(capacity, 7);
    keys.iter()
        .filter(|k| nt.insert(nat(k), 0).result.is_ok())
        .count() as u32
}
