//! The pmd layer against real EAL and virtual devices: packets written into
//! mbufs, sent through net_ring (a loopback ring port) and a net_pcap
//! fixture, read back and compared byte for byte and by the port counters.
//! EAL initialises once per process, so everything runs in one test.

mod common;

use dirigo::net::buf::PacketBuf;
use dirigo::pmd::eal::Eal;
use dirigo::pmd::mbuf::Burst;
use dirigo::pmd::mempool::Mempool;
use dirigo::pmd::port::{Port, PortSetup};
use dirigo::pmd::ring::MbufRing;
use std::time::{Duration, Instant};

fn frame(i: u32, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 2]);
    f[12] = 0x88;
    f[13] = 0xb5; // local experimental EtherType
    f[14..18].copy_from_slice(&i.to_be_bytes());
    for (k, b) in f[18..].iter_mut().enumerate() {
        *b = (k as u32 ^ i) as u8;
    }
    f
}

#[test]
fn pmd_moves_packets_through_virtual_devices() {
    if !common::privileged("pmd_vdev") {
        return;
    }
    let dir = common::scratch("pmd_vdev");
    let in_pcap = dir.join("in.pcap");
    let out_pcap = dir.join("out.pcap");
    let input: Vec<Vec<u8>> = (0..100)
        .map(|i| frame(i, 60 + (i as usize * 13) % 1400))
        .collect();
    common::write_pcap(&in_pcap, &input);

    let args = common::DaemonConfig::new(&format!("dg-pmdtest-{}", std::process::id()), "")
        .lcores(&["-l", "0"])
        .eal("--log-level")
        .eal("*:warning")
        .vdev("net_ring0")
        .vdev(format!(
            "net_pcap0,rx_pcap={},tx_pcap={}",
            in_pcap.display(),
            out_pcap.display()
        ))
        .eal_args();
    let eal = Eal::init(&args).expect("EAL init");
    assert!(Eal::init(&args).is_err(), "EAL must refuse a second init");
    let pool = Mempool::new("pmdtest", 4095, 64).expect("mempool");

    // --- net_ring: what we transmit comes back on rx ---
    let ring = Port::by_name("net_ring0").expect("net_ring0");
    assert!(Port::by_name("net_nope9").is_err());
    ring.configure(&PortSetup::default(), &pool)
        .expect("configure ring");
    ring.start().expect("start ring");
    let mut sent_bytes = 0u64;
    let mut tx = Burst::new();
    for i in 0..32u32 {
        let mut m = pool.alloc().expect("alloc");
        let f = frame(i, 64 + i as usize);
        assert!(m.append(f.len()));
        m.data_mut().copy_from_slice(&f);
        sent_bytes += f.len() as u64;
        tx.push(m).unwrap();
    }
    let (sent, dropped) = tx.tx(ring.id(), 0);
    assert_eq!((sent, dropped), (32, 0));
    let mut rx = Burst::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while rx.len() < 32 && Instant::now() < deadline {
        rx.rx(ring.id(), 0);
    }
    assert_eq!(rx.len(), 32);
    for (i, m) in rx.as_slice().iter().enumerate() {
        assert_eq!(m.data(), &frame(i as u32, 64 + i)[..], "packet {i} content");
    }
    // Headroom operations on a real mbuf.
    let mut m = rx.drain().next().unwrap();
    let before = m.data().to_vec();
    assert!(m.headroom() >= 20);
    assert!(m.prepend(20));
    assert_eq!(&m.data()[20..], &before[..]);
    assert!(m.adj(20));
    assert_eq!(m.data(), &before[..]);
    assert!(m.trim_to(10));
    assert_eq!(m.data(), &before[..10]);
    drop(m);
    let st = ring.stats();
    assert_eq!(st.opackets, 32);
    assert_eq!(st.ipackets, 32);
    // net_ring counts packets only; bytes are checked on net_pcap below.
    assert!(st.obytes == sent_bytes || st.obytes == 0);

    // --- mbuf ring between "lcores" ---
    let r = MbufRing::new("pmdtest-ring", 64, true, true).expect("ring");
    for i in 0..10u32 {
        let mut m = pool.alloc().unwrap();
        assert!(m.append(60));
        m.data_mut().copy_from_slice(&frame(i, 60));
        r.enqueue(m).unwrap();
    }
    assert_eq!(r.count(), 10);
    let mut b = Burst::new();
    assert_eq!(r.dequeue(&mut b), 10);
    assert_eq!(b.as_slice()[9].data(), &frame(9, 60)[..]);
    b.free_all();

    // --- net_pcap: fixture in, everything echoed to the out file ---
    let pcap = Port::by_name("net_pcap0").expect("net_pcap0");
    pcap.configure(&PortSetup::default(), &pool)
        .expect("configure pcap");
    pcap.start().expect("start pcap");
    let mut got = 0usize;
    let deadline = Instant::now() + Duration::from_secs(10);
    while got < input.len() && Instant::now() < deadline {
        let mut b = Burst::new();
        got += b.rx(pcap.id(), 0);
        let (_, d) = b.tx(pcap.id(), 0);
        assert_eq!(d, 0);
    }
    assert_eq!(got, input.len());
    let st = pcap.stats();
    assert_eq!(st.ipackets, input.len() as u64);
    assert_eq!(st.opackets, input.len() as u64);
    assert_eq!(st.ibytes, input.iter().map(|f| f.len() as u64).sum::<u64>());
    let free_before_stop = pool.available();
    pcap.stop().unwrap();
    pcap.close(); // flushes and closes the tx pcap
    ring.stop().unwrap();
    ring.close();
    assert!(
        free_before_stop > 3000,
        "mbufs leaked: {free_before_stop} free"
    );
    let out = common::read_pcap(&out_pcap);
    assert_eq!(out, input, "pcap out must equal pcap in");
    drop(eal);
}
