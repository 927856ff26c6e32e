//! Fuzz the whole receive path of the sans-IO net layer: classify, then the
//! ARP responder, the ICMP echo responder or the IPv6 responder (NDP,
//! ping6) on a mutable copy, exactly as a worker would; IPv6 TCP/UDP and
//! ICMPv6 errors for the balancer are checked to lie inside the frame.
//! Any panic is a bug.
#![no_main]

use dirigo::net::addr::{link_local_of, Ipv4Cidr, Ipv6Cidr, OwnAddrs};
use dirigo::net::buf::VecBuf;
use dirigo::net::arp::arp_input;
use dirigo::net::classify::{classify, Classified};
use dirigo::net::icmp::echo_input;
use dirigo::net::nd::nd_input;
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
    // the seeds' port MAC and their IPv6 address 2001:db8::64 (fuzz/seeds.py)
    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xd1];
    let _ = addrs.add_port_addr6(0, Ipv6Cidr::new(link_local_of(MAC), 64).unwrap());
    let _ = addrs.add_port_addr6(0, Ipv6Cidr::new(0x2001_0db8 << 96 | 0x64, 64).unwrap());
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
        Classified::Ipv6(m) => {
            // the IPv6 classify path: every offset inside the frame
            assert!(m.l3_off < m.l4_off);
            assert!(m.l3_off as usize + m.ip_len as usize <= data.len());
            match m.icmp {
                Some(q) => {
                    assert!(m.l4_off < q.inner_l3_off && q.inner_l3_off < q.inner_l4_off);
                    assert!(q.inner_l4_off as usize + 8 <= data.len());
                }
                None => {
                    let l4 = if m.key.proto == 6 { 20 } else { 8 };
                    assert!(m.l4_off as usize + l4 <= data.len());
                }
            }
        }
        Classified::Icmpv6 {
            l3_off,
            l4_off,
            len,
            ..
        } => {
            assert!(l4_off as usize + len as usize <= data.len());
            let mut buf = VecBuf::new(data);
            let _ = nd_input(
                &mut buf,
                l3_off as usize,
                l4_off as usize,
                len as usize,
                0,
                MAC,
                &addrs,
            );
        }
        Classified::Drop(d) => {
            assert!(d.index() < dirigo::net::classify::NetDrop::COUNT);
        }
    }
});
