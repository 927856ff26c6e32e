//! The hold area on `VecBuf`s, with a fake pipeline whose view knows the
//! neighbors in `known`, whose verdict is `verdict` and whose IPv6 next
//! hop tickets are the positions in `tickets`.

use super::*;
use crate::dataplane::Arrival;
use crate::net::buf::VecBuf;

const A: u32 = 0x0a00_0001;
const B: u32 = 0x0a00_0002;
const T0: u64 = 1_000_000_000;

#[derive(Default)]
struct Fake {
    known: Vec<Hop>,
    /// Ticket `i` names `tickets[i]`.
    tickets: Vec<u128>,
    /// Tickets redeemed that it did not know.
    unknown_tickets: u32,
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
    fn resolved(&self, hop: Hop) -> bool {
        self.known.contains(&hop)
    }
    fn hop6(&mut self, ticket: u32) -> Option<u128> {
        let ip = self.tickets.get(ticket as usize).copied();
        self.unknown_tickets += ip.is_none() as u32;
        ip
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
    h.hold(pkt(1), Hop::V4(A), 0, T0);
    h.hold(pkt(2), Hop::V4(B), 3, T0);
    assert_eq!((h.len(), counts(&h)), (2, [2, 0, 0, 0]));
    // nothing known yet: nothing processed, nothing sent
    assert!(release(&mut h, &mut p, T0 + 1_000_000).is_empty());
    assert!(p.processed.is_empty());
    assert_eq!(h.len(), 2);
    // B resolves: only its packet goes, processed as received on port 3
    p.known.push(Hop::V4(B));
    assert_eq!(
        release(&mut h, &mut p, T0 + 2_000_000),
        [(2, Verdict::Tx(1))]
    );
    assert_eq!(p.processed, [(2, 3)]);
    assert_eq!((h.len(), counts(&h)), (1, [2, 1, 0, 0]));
    // whatever the verdict then (here: dropped by the pipeline), it is sent on
    p.known.push(Hop::V4(A));
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
        h.hold(pkt(i), Hop::V4(A), 0, T0);
    }
    h.hold(pkt(9), Hop::V4(B), 0, T0);
    assert_eq!((h.len(), counts(&h)), (5, [5, 0, 2, 0]));
    let mut p = Fake {
        known: vec![Hop::V4(A), Hop::V4(B)],
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
        h.hold(pkt(i as u8), Hop::V4(0x0a00_1000 + i), 0, T0);
    }
    assert_eq!(h.len(), HOLD_SLOTS);
    assert_eq!(counts(&h), [HOLD_SLOTS as u64, 0, 3, 0]);
    // a slot freed is a slot to hold in again
    let mut p = Fake {
        known: vec![Hop::V4(0x0a00_1000)],
        ..Default::default()
    };
    assert_eq!(release(&mut h, &mut p, T0).len(), 1);
    h.hold(pkt(200), Hop::V4(A), 0, T0);
    assert_eq!(
        (h.len(), counts(&h)[0]),
        (HOLD_SLOTS, HOLD_SLOTS as u64 + 1)
    );
}

#[test]
fn dropped_when_the_neighbor_does_not_resolve_in_time() {
    let mut h = HoldArea::new();
    let mut p = Fake::default();
    h.hold(pkt(1), Hop::V4(A), 0, T0);
    h.hold(pkt(2), Hop::V4(B), 0, T0 + 1_000_000);
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
    h.hold(pkt(1), Hop::V4(A), 2, T0);
    // A resolves, but processing again finds the packet now goes via B
    // (say a route changed), still unknown
    let mut p = Fake {
        known: vec![Hop::V4(A)],
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
    p.known.push(Hop::V4(B));
    p.verdict = None;
    assert_eq!(
        release(&mut h, &mut p, T0 + 3_000_000),
        [(1, Verdict::Tx(1))]
    );
    assert_eq!(counts(&h), [1, 1, 0, 0]);
    // held again past the first deadline: expired, not held for longer
    h.hold(pkt(5), Hop::V4(A), 0, T0);
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
    h.hold(VecBuf::new(&[99]), Hop::V4(7), 0, T0);
    assert_eq!(h.len(), HOLD_PER_CONN + 1);
}

/// IPv6 next hops: a `Hold6` verdict's ticket redeemed with the pipeline
/// names the next hop, which keys the packet as an IPv4 address does
/// (the same bound per next hop, the same slots and counters); an IPv6
/// next hop whose low 32 bits are an IPv4 one's is another key.
#[test]
fn ipv6_next_hops_are_held_like_ipv4_ones() {
    const C6: u128 = (0x2001_0db8 << 96) | A as u128;
    let mut h = HoldArea::new();
    let mut p = Fake {
        tickets: vec![C6],
        ..Default::default()
    };
    for i in 0..6 {
        h.hold6(&mut p, pkt(i), 0, 1, T0);
    }
    h.hold(pkt(9), Hop::V4(A), 0, T0);
    assert_eq!(
        (h.len(), counts(&h)),
        (5, [5, 0, 2, 0]),
        "four for the IPv6 next hop, then A's own"
    );
    // A resolves: only its packet goes
    p.known.push(Hop::V4(A));
    assert_eq!(release(&mut h, &mut p, T0 + 1), [(9, Verdict::Tx(1))]);
    // the IPv6 next hop resolves: its four, processed as received on port 1
    p.known.push(Hop::V6(C6));
    p.processed.clear();
    let mut sent: Vec<u8> = release(&mut h, &mut p, T0 + 2)
        .iter()
        .map(|s| s.0)
        .collect();
    sent.sort();
    assert_eq!(sent, [0, 1, 2, 3]);
    assert!(p.processed.iter().all(|&(_, port)| port == 1));
    assert_eq!((h.len(), counts(&h)), (0, [5, 5, 2, 0]));
    assert_eq!(p.unknown_tickets, 0);
}

#[test]
fn an_ipv6_next_hop_that_does_not_resolve_expires() {
    const C6: u128 = 0x2001_0db8 << 96 | 0x99;
    let mut h = HoldArea::new();
    let mut p = Fake {
        tickets: vec![C6],
        ..Default::default()
    };
    h.hold6(&mut p, pkt(1), 0, 0, T0);
    assert!(release(&mut h, &mut p, T0 + HOLD_NS - 1).is_empty());
    assert_eq!(h.len(), 1);
    assert!(release(&mut h, &mut p, T0 + HOLD_NS).is_empty());
    assert_eq!((h.len(), counts(&h)), (0, [1, 0, 0, 1]));
    assert!(p.processed.is_empty(), "an expired packet is not processed");
}

/// A ticket the pipeline does not know (too old) is no next hop: the
/// packet is not held (the pipeline counted the drop), at arrival or when
/// processed again; a known one taken again keys the packet by its new
/// next hop.
#[test]
fn held_again_for_an_ipv6_next_hop_by_ticket() {
    const C6: u128 = 0x2001_0db8 << 96 | 0x66;
    let mut h = HoldArea::new();
    let mut p = Fake {
        tickets: vec![C6],
        ..Default::default()
    };
    h.hold6(&mut p, pkt(1), 7, 0, T0);
    assert_eq!((h.len(), counts(&h), p.unknown_tickets), (0, [0; 4], 1));
    // held for A; processed again, it now waits for C6 (ticket 0)
    h.hold(pkt(2), Hop::V4(A), 0, T0);
    p.known.push(Hop::V4(A));
    p.verdict = Some(Verdict::Hold6(0));
    assert!(release(&mut h, &mut p, T0 + 1).is_empty());
    assert_eq!((h.len(), counts(&h)), (1, [1, 0, 0, 0]));
    assert!(release(&mut h, &mut p, T0 + 2).is_empty(), "C6 unknown");
    assert_eq!(p.processed.len(), 1);
    // C6 resolves, but processing again gives a ticket it does not know:
    // released as a drop (the pipeline counted it)
    p.known.push(Hop::V6(C6));
    p.verdict = Some(Verdict::Hold6(5));
    assert_eq!(release(&mut h, &mut p, T0 + 3), [(2, Verdict::Drop)]);
    assert_eq!(
        (h.len(), counts(&h), p.unknown_tickets),
        (0, [1, 1, 0, 0], 2)
    );
}
