//! Fuzz the whole receive path of the sans-IO net layer: classify, then the
//! ARP responder or the ICMP echo responder on a mutable copy, exactly as a
//! worker would. Any panic is a bug.
#![no_main]

use dirigo::net::addr::{Ipv4Cidr, OwnAddrs};
use dirigo::net::arp::arp_input;
use dirigo::net::classify::{classify, Classified};
use dirigo::net::icmp::echo_input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut addrs = OwnAddrs::new();
    let _ = addrs.add_port_addr(
        0,
        Ipv4Cidr {
            addr: 0x0a00_0001,
            len: 24,
        },
    );
    addrs.add_vip(0x0a00_0064); // 10.0.0.100, the seeds' VIP
    let mut frame = data.to_vec();
    match classify(data, 0) {
        Classified::Arp { .. } => {
            let _ = arp_input(&mut frame, [2, 0, 0, 0, 0, 1], &addrs);
        }
        Classified::Ipv4(meta) => {
            assert!(meta.l3_off as usize + meta.ip_len as usize <= data.len());
            if let Some(q) = meta.icmp {
                assert!(q.inner_l4_off as usize + 8 <= data.len());
            }
            let _ = echo_input(&mut frame, &meta, &addrs);
        }
        Classified::Drop(d) => {
            assert!(d.index() < dirigo::net::classify::NetDrop::COUNT);
        }
    }
});
