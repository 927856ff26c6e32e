use super::*;

#[test]
fn policy_rounds_the_refresh_up_to_a_power_of_two_ms() {
    let p = SyncPolicy::new(3, 60);
    assert_eq!((p.udp_threshold, p.refresh_shift), (3, 16));
    assert_eq!(p.refresh_ms(), 65_536);
    assert_eq!(SyncPolicy::new(3, 0).refresh_ms(), 0);
    assert_eq!(SyncPolicy::new(0, 1).udp_threshold, 1);
    assert_eq!(SyncPolicy::new(1000, 1).refresh_ms(), 1024);
    assert_eq!(SyncPolicy::new(3, u32::MAX).refresh_ms(), 1 << 30);
    assert_eq!(SyncPolicy::default(), SyncPolicy::new(3, 60));
}

#[test]
fn counters_have_names() {
    assert_eq!(SyncCount::Queued.name(), "sync_queued");
    assert!(SyncCount::QueueFull.is_drop());
    assert_eq!(SyncCount::ALL.len(), SyncCount::COUNT);
}
