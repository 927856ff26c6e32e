use crate::lb::shift::adjust::{Change, Dir, Recorded, SeqAdj, Shift, ShiftError};
use crate::lb::shift::seq;

fn ch(pos: u32, old_len: u16, new_len: u16) -> Change {
    Change {
        pos,
        old_len,
        new_len,
    }
}

#[test]
fn sequence_order_wraps() {
    assert!(seq::before(u32::MAX, 0));
    assert!(seq::after(0, u32::MAX));
    assert!(seq::before(5, 6) && !seq::before(6, 6) && seq::at_or_after(6, 6));
    assert!(seq::after(0x7fff_ffff, 0));
    assert!(seq::before(0x8000_0001, 0));
    assert_eq!(seq::add(u32::MAX, 2), 1);
    assert_eq!(seq::sub(1, 2), u32::MAX);
    assert_eq!(seq::add(1, -2), u32::MAX);
}

#[test]
fn an_insertion() {
    // 10 bytes inserted before sequence number 1000
    let mut a = SeqAdj::<1>::NONE;
    assert!(a.is_identity());
    assert_eq!(a.record(ch(1000, 0, 10)), Ok(Recorded::New));
    assert_eq!(a.offset(), 10);
    // before and at the change: unmoved; after: moved
    assert_eq!(a.seq(999), 999);
    assert_eq!(a.seq(1000), 1000);
    assert_eq!(a.seq(1001), 1011);
    // acknowledgments: at or below the insertion unmoved, inside it the
    // sender's 1000, past it moved back
    assert_eq!(a.ack(1000), 1000);
    assert_eq!(a.ack(1005), 1000);
    assert_eq!(a.ack(1010), 1000);
    assert_eq!(a.ack(1011), 1001);
    assert_eq!(a.ack(900), 900);
}

#[test]
fn a_replacement_shorter_and_longer() {
    // 18 bytes at 100 became 24; then 5 bytes at 300 became 2
    let mut a = SeqAdj::<2>::NONE;
    a.record(ch(100, 18, 24)).unwrap();
    a.record(ch(300, 5, 2)).unwrap();
    assert_eq!(a.offset(), 3);
    assert_eq!(a.seq(90), 90);
    assert_eq!(a.seq(100), 100);
    assert_eq!(a.seq(118), 124);
    assert_eq!(a.seq(300), 306);
    assert_eq!(a.seq(305), 308);
    // acks: the receiver's 124 is the sender's 118; inside the new bytes
    // in proportion, at most the old length
    assert_eq!(a.ack(124), 118);
    assert_eq!(a.ack(110), 110);
    assert_eq!(a.ack(123), 118);
    assert_eq!(a.ack(306), 300);
    assert_eq!(a.ack(307), 301);
    assert_eq!(a.ack(308), 305);
    assert_eq!(a.ack(400), 397);
}

#[test]
fn across_the_wrap() {
    let mut s = Shift::<1>::NONE;
    let p = u32::MAX - 3;
    s.record(Dir::Orig, ch(p, 2, 9)).unwrap();
    assert_eq!(s.seq(Dir::Orig, p), p);
    assert_eq!(s.seq(Dir::Orig, p.wrapping_add(2)), 5); // MAX-1 + 7
    assert_eq!(s.ack(Dir::Reply, 5), p.wrapping_add(2));
    // the other direction is untouched
    assert_eq!(s.seq(Dir::Reply, 77), 77);
    assert_eq!(s.ack(Dir::Orig, 77), 77);
}

#[test]
fn repeats_stale_and_conflicts() {
    let mut a = SeqAdj::<2>::NONE;
    assert_eq!(a.record(ch(100, 4, 8)), Ok(Recorded::New));
    assert_eq!(a.record(ch(100, 4, 8)), Ok(Recorded::Repeat));
    assert_eq!(a.record(ch(100, 4, 9)), Err(ShiftError::Conflict));
    assert_eq!(a.record(ch(50, 4, 9)), Err(ShiftError::Stale));
    // inside the bytes the last change replaced
    assert_eq!(a.record(ch(102, 1, 2)), Err(ShiftError::Stale));
    assert_eq!(a.record(ch(104, 1, 1)), Ok(Recorded::NoShift));
    assert_eq!(a.record(ch(200, 4, 1)), Ok(Recorded::New));
    // the older one is still kept: its retransmission is a repeat
    assert_eq!(a.record(ch(100, 4, 8)), Ok(Recorded::Repeat));
    assert_eq!(a.len(), 2);
    assert_eq!(ShiftError::Stale.name(), "shift_stale");
}

#[test]
fn forgetting_the_oldest_keeps_its_offset() {
    // K = 1, as Linux: three changes of +5 each
    let mut a = SeqAdj::<1>::NONE;
    for p in [100, 200, 300] {
        assert_eq!(a.record(ch(p, 0, 5)), Ok(Recorded::New));
    }
    assert_eq!(a.len(), 1);
    assert_eq!(a.offset(), 15);
    // after the last: +15; before it: +10 (the offset before it, exact
    // for bytes between 200 and 300, Linux's offset_before)
    assert_eq!(a.seq(301), 316);
    assert_eq!(a.seq(250), 260);
    assert_eq!(a.ack(316), 301);
    assert_eq!(a.ack(260), 250);
    // a retransmission of the forgotten change cannot be checked
    assert_eq!(a.record(ch(200, 0, 5)), Err(ShiftError::Stale));
    // K = 3 keeps all three exactly
    let mut b = SeqAdj::<3>::NONE;
    for p in [100, 200, 300] {
        b.record(ch(p, 0, 5)).unwrap();
    }
    assert_eq!(b.seq(150), 155);
    assert_eq!(b.seq(50), 50);
    assert_eq!(b.ack(155), 150);
    assert_eq!(b.ack(50), 50);
}

#[test]
fn sizes() {
    assert_eq!(std::mem::size_of::<SeqAdj<1>>(), 20);
    assert_eq!(std::mem::size_of::<Shift<1>>(), 40);
    assert_eq!(
        std::mem::size_of::<crate::lb::shift::once::HeaderInsert>(),
        28
    );
}

#[test]
fn a_removal_acknowledged_at_its_place() {
    // 2 bytes at 635 removed (an FTP line rewritten to nothing): the
    // receiver's 635 is the sender's 637 once the change is recorded
    let mut a = SeqAdj::<4>::NONE;
    assert_eq!(a.ack(635), 635);
    assert_eq!(a.record(ch(635, 2, 0)), Ok(Recorded::New));
    assert_eq!(a.offset(), -2);
    assert_eq!(a.seq(635), 635);
    assert_eq!(a.seq(637), 635);
    assert_eq!(a.ack(634), 634);
    assert_eq!(a.ack(635), 637);
    assert_eq!(a.ack(636), 638);
}
