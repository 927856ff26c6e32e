use super::*;
use proptest::prelude::*;

fn ip(a: u8, b: u8, c: u8, d: u8) -> [u8; 4] {
    [a, b, c, d]
}

/// Microsoft's RSS verification suite (also DPDK's app/test/test_thash.c):
/// (source, destination, source port, destination port, hash over the two
/// addresses, hash over addresses and ports).
/// One vector: source, destination, ports, the two hashes.
type Vector = ([u8; 4], [u8; 4], u16, u16, u32, u32);

#[rustfmt::skip]
const VECTORS: [Vector; 5] = [
    ([66, 9, 149, 187], [161, 142, 100, 80], 2794, 1766, 0x323e_8fc2, 0x51cc_c178),
    ([199, 92, 111, 2], [65, 69, 140, 83], 14230, 4739, 0xd718_262a, 0xc626_b0ea),
    ([24, 19, 198, 95], [12, 22, 207, 184], 12898, 38024, 0xd2d0_a5de, 0x5c2b_394a),
    ([38, 27, 205, 30], [209, 142, 163, 6], 48228, 2217, 0x8298_9176, 0xafc7_327f),
    ([153, 39, 163, 191], [202, 188, 127, 2], 44251, 1303, 0x5d18_09c5, 0x10e8_28a2),
];

#[test]
fn toeplitz_matches_the_published_vectors() {
    for (src, dst, sp, dp, l3, l4) in VECTORS {
        let mut input = Vec::new();
        input.extend_from_slice(&src);
        input.extend_from_slice(&dst);
        assert_eq!(toeplitz(&KEY, &input), l3, "{src:?} -> {dst:?}");
        input.extend_from_slice(&sp.to_be_bytes());
        input.extend_from_slice(&dp.to_be_bytes());
        assert_eq!(toeplitz(&KEY, &input), l4, "{src:?}:{sp} -> {dst:?}:{dp}");
    }
}

#[test]
fn table_hash_is_the_bitwise_hash() {
    let o = ClientOwner::new(&KEY, &[0]);
    for a in [ip(0, 0, 0, 0), ip(66, 9, 149, 187), ip(255, 255, 255, 255)] {
        assert_eq!(o.hash(u32::from_be_bytes(a)), toeplitz(&KEY, &a));
    }
}

proptest! {
    #[test]
    fn table_hash_is_the_bitwise_hash_everywhere(a in any::<u32>()) {
        let o = ClientOwner::new(&KEY, &[0]);
        prop_assert_eq!(o.hash(a), toeplitz(&KEY, &a.to_be_bytes()));
    }
}

/// A device with the L3-only modifiers in its `flow_type_rss_offloads`
/// (DPDK 22.11's mlx5 reports them; i40e, ice and ixgbe do not, see
/// docs/OPERATIONS.md), with `reta` RETA entries and a `key`-byte key.
fn nic(reta: u16, key: u8) -> RssCaps {
    RssCaps {
        driver: "net_mlx5".into(),
        rss_offloads: RSS_PLAIN | RSS_L3_SRC_ONLY | RSS_L3_DST_ONLY,
        max_rx_queues: 64,
        reta_size: reta,
        hash_key_size: key,
    }
}

fn tap() -> RssCaps {
    RssCaps {
        driver: "net_tap".into(),
        rss_offloads: 0,
        max_rx_queues: 16,
        reta_size: 0,
        hash_key_size: 0,
    }
}

#[test]
fn l3_only_nic_hashes_the_client_on_both_sides() {
    let p = plan(
        &[
            (nic(512, 52), PortRole::Client),
            (nic(128, 40), PortRole::Server),
        ],
        4,
        true,
    );
    let (wan, lan) = (&p.ports[0], &p.ports[1]);
    assert_eq!(wan.hashed, Some(Hashed::Source));
    assert_eq!(wan.rss_hf, RSS_CLIENT_TYPES | RSS_L3_SRC_ONLY);
    assert_eq!(wan.software, None);
    assert_eq!(lan.hashed, Some(Hashed::Destination));
    assert_eq!(lan.rss_hf, RSS_CLIENT_TYPES | RSS_L3_DST_ONLY);
    assert_eq!(lan.software, None);
    for port in [wan, lan] {
        assert_eq!(port.rx_queues, 4);
        assert_eq!(port.key[..8], KEY[..8], "one key on every port");
        assert!(port.reta.iter().all(|&q| q < 4));
    }
    assert_eq!(wan.key.len(), 52);
    assert_eq!(lan.key.len(), 40);
    assert_eq!(wan.reta.len(), 512);
    assert_eq!(lan.reta.len(), 128);
    // the software table is the smaller RETA's, so both map onto it
    let soft = p.owner_reta.as_ref().expect("an owner table");
    for h in [0u32, 1, 127, 128, 300, 511, 0xdead_beef] {
        let a = wan.reta[(h & 511) as usize];
        let b = lan.reta[(h & 127) as usize];
        assert_eq!(a, b, "hash {h:#x}");
        assert_eq!(soft[(h as usize) & (MAX_RETA - 1)], a);
    }
    assert_eq!(
        wan.to_string(),
        "RSS on the client address (source, L3_SRC_ONLY), no software steering"
    );
    assert_eq!(
        lan.to_string(),
        "RSS on the client address (destination, L3_DST_ONLY), no software steering"
    );
}

#[test]
fn plain_ipv4_rss_keeps_software_steering() {
    // e.g. ixgbe, i40e, ice in DPDK 22.11: 5-tuple RSS, no L3-only modifiers
    let c = RssCaps {
        driver: "net_ixgbe".into(),
        rss_offloads: RSS_PLAIN,
        max_rx_queues: 16,
        reta_size: 128,
        hash_key_size: 40,
    };
    let p = plan(&[(c, PortRole::Client)], 2, true);
    let port = &p.ports[0];
    assert_eq!(port.hashed, None);
    assert_eq!(port.rss_hf, RSS_PLAIN, "today's 5-tuple RSS");
    assert!(port.key.is_empty() && port.reta.is_empty());
    assert_eq!(port.rx_queues, 2);
    assert_eq!(
        port.software,
        Some(Why::NoL3Only {
            driver: "net_ixgbe".into(),
            want: "the source address"
        })
    );
    assert_eq!(p.owner_reta, None, "the pipeline keeps its own hash");
    assert_eq!(
        port.to_string(),
        "software steering: net_ixgbe cannot hash on the source address alone"
    );
}

#[test]
fn src_only_nic_cannot_serve_the_server_side() {
    let mut c = nic(128, 40);
    c.rss_offloads &= !RSS_L3_DST_ONLY;
    let p = plan(
        &[(c.clone(), PortRole::Client), (c, PortRole::Server)],
        2,
        true,
    );
    assert_eq!(p.ports[0].hashed, Some(Hashed::Source));
    assert_eq!(p.ports[1].hashed, None);
    assert!(matches!(p.ports[1].software, Some(Why::NoL3Only { .. })));
    // the owner function is the NIC's: the other port steers by it
    assert!(p.owner_reta.is_some());
}

#[test]
fn no_rss_device_keeps_software_steering() {
    let p = plan(&[(tap(), PortRole::Client)], 2, true);
    let port = &p.ports[0];
    assert_eq!(port.rss_hf, 0);
    assert_eq!(port.rx_queues, 2);
    assert_eq!(port.to_string(), "software steering: net_tap has no RSS");
    assert_eq!(p.owner_reta, None);
    // net_pcap: one queue
    let pcap = RssCaps {
        driver: "net_pcap".into(),
        max_rx_queues: 1,
        ..RssCaps::default()
    };
    let p = plan(&[(pcap, PortRole::Both)], 2, true);
    assert_eq!(p.ports[0].rx_queues, 1);
    assert_eq!(p.ports[0].rss_hf, 0);
}

#[test]
fn fewer_queues_than_workers_keeps_software_steering() {
    let mut c = nic(512, 52);
    c.max_rx_queues = 2;
    let p = plan(&[(c, PortRole::Client)], 4, true);
    let port = &p.ports[0];
    assert_eq!(port.rx_queues, 2, "polled by the first workers");
    assert_eq!(port.rss_hf, RSS_PLAIN & port_offloads());
    assert_eq!(
        port.software,
        Some(Why::FewQueues {
            driver: "net_mlx5".into(),
            have: 2,
            need: 4
        })
    );
    assert_eq!(p.owner_reta, None);
}

fn port_offloads() -> u64 {
    nic(0, 0).rss_offloads
}

#[test]
fn one_arm_port_hashes_the_source_and_steers_replies() {
    let p = plan(&[(nic(128, 40), PortRole::Both)], 2, true);
    let port = &p.ports[0];
    assert_eq!(port.hashed, Some(Hashed::Source));
    assert_eq!(port.rss_hf, RSS_CLIENT_TYPES | RSS_L3_SRC_ONLY);
    assert_eq!(port.software, Some(Why::BothSides));
    assert!(port
        .to_string()
        .starts_with("RSS on the source address (L3_SRC_ONLY); "));
}

#[test]
fn odd_reta_short_key_one_worker_and_rss_off() {
    let p = plan(&[(nic(96, 40), PortRole::Client)], 2, true);
    assert!(matches!(
        p.ports[0].software,
        Some(Why::Reta { size: 96, .. })
    ));
    let p = plan(&[(nic(2, 40), PortRole::Client)], 4, true);
    assert!(matches!(
        p.ports[0].software,
        Some(Why::Reta { size: 2, .. })
    ));
    let p = plan(&[(nic(128, 0), PortRole::Client)], 2, true);
    assert!(matches!(
        p.ports[0].software,
        Some(Why::Key { size: 0, .. })
    ));
    let p = plan(&[(nic(128, 40), PortRole::Client)], 1, true);
    assert_eq!(p.ports[0].software, Some(Why::OneWorker));
    assert_eq!((p.ports[0].rx_queues, p.ports[0].rss_hf), (1, 0));
    let p = plan(&[(nic(128, 40), PortRole::Client)], 2, false);
    assert_eq!(p.ports[0].software, Some(Why::RssOff));
    assert_eq!(p.ports[0].rss_hf, 0);
    assert_eq!(p.owner_reta, None);
}

/// What the NIC does with a packet: hash the address its port is told to,
/// look the hash up in that port's RETA.
fn nic_queue(port: &PortPlan, src: u32, dst: u32) -> u16 {
    let addr = match port.hashed.expect("a NIC-hashed port") {
        Hashed::Source => src,
        Hashed::Destination => dst,
    };
    let h = toeplitz(&port.key, &addr.to_be_bytes());
    port.reta[(h as usize) & (port.reta.len() - 1)]
}

proptest! {
    /// Request (client -> VIP) on the client port and NAT reply (RIP ->
    /// client) on the server port land on the queue of the worker the
    /// software owner function names.
    #[test]
    fn nic_queue_is_the_software_owner_both_ways(
        client in any::<u32>(),
        vip in any::<u32>(),
        rip in any::<u32>(),
        workers in 2u16..=16,
        wan_reta in prop::sample::select(vec![64u16, 128, 512, 2048]),
        lan_reta in prop::sample::select(vec![64u16, 128, 512]),
    ) {
        let p = plan(
            &[(nic(wan_reta, 52), PortRole::Client), (nic(lan_reta, 40), PortRole::Server)],
            workers,
            true,
        );
        let owner = ClientOwner::new(&KEY, p.owner_reta.as_ref().unwrap());
        let want = owner.owner(client);
        prop_assert!(want < u32::from(workers));
        prop_assert_eq!(u32::from(nic_queue(&p.ports[0], client, vip)), want);
        prop_assert_eq!(u32::from(nic_queue(&p.ports[1], rip, client)), want);
    }
}

#[test]
fn owner_spreads_clients_over_workers() {
    let p = plan(&[(nic(128, 40), PortRole::Client)], 4, true);
    let owner = ClientOwner::new(&KEY, p.owner_reta.as_ref().unwrap());
    let mut n = [0u32; 4];
    for i in 0..4096u32 {
        n[owner.owner(0x0a00_0000 | i) as usize] += 1;
    }
    // 10.0.0.0/20 over 4 workers: each gets a fair share
    assert!(n.iter().all(|&c| c > 700), "{n:?}");
}
