use super::*;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

#[test]
fn bucket_passes_its_burst_then_its_rate() {
    let mut b = TokenBucket::new(1000, 10);
    let t0 = 5 * S;
    let passed = (0..100).filter(|_| b.take(t0)).count();
    assert_eq!(passed, 10, "a full bucket passes its burst at once");
    assert!(!b.take(t0));
    // 1000/s: one token per millisecond
    assert!(b.take(t0 + MS));
    assert!(!b.take(t0 + MS));
    // a second at a steady offered load of 10k/s passes about 1000
    let mut n = 0;
    for i in 0..10_000u64 {
        if b.take(t0 + MS + i * 100_000) {
            n += 1;
        }
    }
    assert!(
        (990..=1010).contains(&n),
        "passed {n} in a second at 1000/s"
    );
}

#[test]
fn calls_closer_than_a_microsecond_lose_nothing() {
    // a flood every 400 ns for a second at 20000/s: 20000 (+ the burst)
    let mut b = TokenBucket::new(20_000, 1000);
    let t0 = S;
    let n = (0..2_500_000u64).filter(|i| b.take(t0 + i * 400)).count();
    assert!((20_990..=21_010).contains(&n), "passed {n}");
    // and every 1.5 µs
    let mut b = TokenBucket::new(20_000, 1000);
    let n = (0..666_667u64).filter(|i| b.take(t0 + i * 1500)).count();
    assert!((20_990..=21_010).contains(&n), "passed {n}");
}

#[test]
fn bucket_refills_only_up_to_its_burst() {
    let mut b = TokenBucket::new(100, 5);
    for _ in 0..5 {
        assert!(b.take(0));
    }
    assert!(!b.take(0));
    // an hour idle refills 5, not 360000
    let t = 3600 * S;
    assert_eq!((0..100).filter(|_| b.take(t)).count(), 5);
}

#[test]
fn slow_rates_accumulate_fractions() {
    // 3/s polled every millisecond: still 3 per second (a bucket that
    // never fills, so no fraction is cut off at its top)
    let mut b = TokenBucket::new(3, 5);
    assert_eq!((0..5).filter(|_| b.take(0)).count(), 5);
    let n = (1..=1000u64).filter(|i| b.take(i * MS)).count();
    assert_eq!(n, 3);
}

#[test]
fn zero_rate_passes_nothing_and_time_going_back_is_harmless() {
    let mut b = TokenBucket::new(0, 100);
    assert!(!(0..10).any(|i| b.take(i * S)));
    let mut b = TokenBucket::new(10, 2);
    assert!(b.take(10 * S));
    assert!(b.take(10 * S));
    assert!(!b.take(S), "an earlier time adds nothing");
    assert!(b.take(10 * S + 100 * MS));
}

#[test]
fn copies_keep_frames_and_ports_until_drained() {
    let mut c = KernelCopies::default();
    assert!(c.is_empty());
    assert!(c.push(1, &[1, 2, 3]));
    assert!(c.push(0, &[9; COPY_LEN]));
    assert!(!c.push(0, &[0; COPY_LEN + 1]), "too long to keep");
    let mut got = Vec::new();
    c.drain(|p, f| got.push((p, f.to_vec())));
    assert_eq!(got, vec![(1, vec![1, 2, 3]), (0, vec![9; COPY_LEN])]);
    assert!(c.is_empty());
    for i in 0..COPY_SLOTS {
        assert!(c.push(i as u16, &[i as u8]));
    }
    assert!(!c.push(0, &[0]), "full");
    let mut n = 0;
    c.drain(|p, f| {
        assert_eq!(f, [p as u8]);
        n += 1;
    });
    assert_eq!(n, COPY_SLOTS);
}
