//! The hold area on `VecBuf`s, with a fake pipeline whose view knows the
//! neighbors in `known` and whose verdict is `verdict`.

use super::*;
use crate::dataplane::Arrival;
use crate::net::buf::VecBuf;

const A: u32 = 0x0a00_0001;
const B: u32 = 0x0a00_0002;
const T0: u64 = 1_000_000_000;

#[derive(Default)]
struct Fake {
    known: Vec<u32>,
    /// What processing a packet again answers (Tx(1) when None).
    verdict: Option<Verdict>,
    /// Packets processed again: (first byte, receiving port).
    processed: Vec<(u8, u16)>,
}

impl Pipeline for Fake {
    fn begin_burst(&mut self, _now_ns: u64) {}
    fn process<Buf: PacketBuf>(&mut self, buf: &mut Buf, at: Arrival) -> Verdict {
        self.processed.push((buf.data()[0], at.port));
        self.verdict.unwrap_or(Verdict::Tx(1))
    }
    fn housekeeping(&mut self, _now_ns: u64) {}
    fn resolved(&self, ip: u32) -> bool {
        self.known.contains(&ip)
    }
}

/// Packet number `i` (its first byte).
fn pkt(i: u8) -> VecBuf {
    VecBuf::new(&[i; 60])
}

fn counts(h: &HoldArea<VecBuf>) -> [u64; 4] {
    let c = h.counts();
    [
        c[HoldCount::Held],
        c[HoldCount::Released],
        c[HoldCount::Overflow],
        c[HoldCount::Expired],
    ]
}

/// Release with `pipe`; returns what was sent: (first byte, verdict).
fn release(h: &mut HoldArea<VecBuf>, pipe: &mut Fake, now: u64) -> Vec<(u8, Verdict)> {
    let mut sent = Vec::new();
    h.release(pipe, now, |b, v| sent.push((b.data()[0], v)));
    sent
}

#[test]
fn counters_are_declared_once() {
    crate::counters::check::<HoldCount>();
    let names: Vec<_> = HoldCount::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        ["held", "held_released", "held_overflow", "held_expired"]
    );
    let drops: Vec<_> = HoldCount::ALL.iter().map(|c| c.is_drop()).collect();
    assert_eq!(drops, [false, false, true, true]);
}

#[test]
fn held_until_resolved_then_released_as_received() {
    let mut h = HoldArea::new();
    let mut p = Fake::default();
    h.hold(pkt(1), A, 0, T0);
    h.hold(pkt(2), B, 3, T0);
    assert_eq!((h.len(), counts(&h)), (2, [2, 0, 0, 0]));
    // nothing known yet: nothing processed, nothing sent
    assert!(release(&mut h, &mut p, T0 + 1_000_000).is_empty());
    assert!(p.processed.is_empty());
    assert_eq!(h.len(), 2);
    // B resolves: only its packet goes, processed as received on port 3
    p.known.push(B);
    assert_eq!(
        release(&mut h, &mut p, T0 + 2_000_000),
        [(2, Verdict::Tx(1))]
    );
    assert_eq!(p.processed, [(2, 3)]);
    assert_eq!((h.len(), counts(&h)), (1, [2, 1, 0, 0]));
    // whatever the verdict then (here: dropped by the pipeline), it is sent on
    p.known.push(A);
    p.verdict = Some(Verdict::Drop);
    assert_eq!(
        release(&mut h, &mut p, T0 + 3_000_000),
        [(1, Verdict::Drop)]
    );
    assert_eq!((h.len(), counts(&h)), (0, [2, 2, 0, 0]));
    assert!(h.is_empty());
}

#[test]
fn at_most_four_per_next_hop() {
    let mut h = HoldArea::new();
    for i in 0..6 {
        h.hold(pkt(i), A, 0, T0);
    }
    h.hold(pkt(9), B, 0, T0);
    assert_eq!((h.len(), counts(&h)), (5, [5, 0, 2, 0]));
    let mut p = Fake {
        known: vec![A, B],
        ..Default::default()
    };
    let mut sent: Vec<u8> = release(&mut h, &mut p, T0).iter().map(|s| s.0).collect();
    sent.sort();
    assert_eq!(sent, [0, 1, 2, 3, 9], "the first four for A, and B's");
}

#[test]
fn at_most_sixty_four_in_all() {
    let mut h = HoldArea::new();
    for i in 0..HOLD_SLOTS as u32 + 3 {
        // a different next hop each: only the area's size limits
        h.hold(pkt(i as u8), 0x0a00_1000 + i, 0, T0);
    }
    assert_eq!(h.len(), HOLD_SLOTS);
    assert_eq!(counts(&h), [HOLD_SLOTS as u64, 0, 3, 0]);
    // a slot freed is a slot to hold in again
    let mut p = Fake {
        known: vec![0x0a00_1000],
        ..Default::default()
    };
    assert_eq!(release(&mut h, &mut p, T0).len(), 1);
    h.hold(pkt(200), A, 0, T0);
    assert_eq!(
        (h.len(), counts(&h)[0]),
        (HOLD_SLOTS, HOLD_SLOTS as u64 + 1)
    );
}

#[test]
fn dropped_when_the_neighbor_does_not_resolve_in_time() {
    let mut h = HoldArea::new();
    let mut p = Fake::default();
    h.hold(pkt(1), A, 0, T0);
    h.hold(pkt(2), B, 0, T0 + 1_000_000);
    assert!(release(&mut h, &mut p, T0 + HOLD_NS - 1).is_empty());
    assert_eq!(h.len(), 2);
    // A's deadline passed, B's not yet
    assert!(release(&mut h, &mut p, T0 + HOLD_NS).is_empty());
    assert_eq!((h.len(), counts(&h)), (1, [2, 0, 0, 1]));
    assert!(p.processed.is_empty(), "an expired packet is not processed");
    assert!(release(&mut h, &mut p, T0 + 1_000_000 + HOLD_NS).is_empty());
    assert_eq!((h.len(), counts(&h)), (0, [2, 0, 0, 2]));
}

#[test]
fn unresolved_again_is_held_again_until_its_first_deadline() {
    let mut h = HoldArea::new();
    h.hold(pkt(1), A, 2, T0);
    // A resolves, but processing again finds the packet now goes via B
    // (say a route changed), still unknown
    let mut p = Fake {
        known: vec![A],
        verdict: Some(Verdict::Hold(B)),
        ..Default::default()
    };
    assert!(release(&mut h, &mut p, T0 + 1_000_000).is_empty());
    assert_eq!(p.processed, [(1, 2)]);
    assert_eq!(
        (h.len(), counts(&h)),
        (1, [1, 0, 0, 0]),
        "held again, counted once"
    );
    // it waits for B now: A being known no longer releases it
    assert!(release(&mut h, &mut p, T0 + 2_000_000).is_empty());
    assert_eq!(p.processed.len(), 1);
    // B resolves and the packet goes
    p.known.push(B);
    p.verdict = None;
    assert_eq!(
        release(&mut h, &mut p, T0 + 3_000_000),
        [(1, Verdict::Tx(1))]
    );
    assert_eq!(counts(&h), [1, 1, 0, 0]);
    // held again past the first deadline: expired, not held for longer
    h.hold(pkt(5), A, 0, T0);
    p.verdict = Some(Verdict::Hold(A));
    assert!(release(&mut h, &mut p, T0 + HOLD_NS).is_empty());
    assert_eq!((h.len(), counts(&h)), (0, [2, 1, 0, 1]));
}

#[test]
fn waits_for_a_connection_are_bounded_and_retried() {
    let mut h: HoldArea<VecBuf> = HoldArea::new();
    for i in 0..HOLD_PER_CONN as u8 + 2 {
        h.wait(VecBuf::new(&[i]), 7, 0, T0);
    }
    assert_eq!(
        h.len(),
        HOLD_PER_CONN,
        "at most HOLD_PER_CONN per connection"
    );
    assert_eq!(counts(&h), [HOLD_PER_CONN as u64, 0, 2, 0]);
    // a neighbor key with the same number is another key
    h.hold(VecBuf::new(&[99]), 7, 0, T0);
    assert_eq!(h.len(), HOLD_PER_CONN + 1);
}
