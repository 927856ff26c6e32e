//! What needs no privilege: the name rules, the derived MAC, the error
//! messages and the extended-ack parsing. The kernel itself is exercised by
//! `tests/kernel_netlink.rs` (root).

use super::link::{broadcast, extack_message, locally_administered, valid_ifname};
use super::netns::{valid_name, Netns};
use super::KernelError;
use std::io;
use std::net::Ipv4Addr;

#[test]
fn interface_names_follow_dev_valid_name() {
    for ok in [
        "eth0",
        "a",
        "dirigo-wan",
        "x.y",
        "123456789012345",
        "tap_0",
        "é",
    ] {
        assert_eq!(valid_ifname(ok), Ok(()), "{ok:?}");
    }
    for bad in [
        "",
        ".",
        "..",
        "1234567890123456",
        "a/b",
        "eth0:1",
        "a b",
        "a\tb",
        "a\nb",
        "a\u{b}b",
        "a\u{c}b",
        "a\rb",
        "a\0b",
        "à", // UTF-8 c3 a0: the kernel's isspace counts 0xa0
    ] {
        let why = valid_ifname(bad).expect_err(bad);
        assert!(!why.is_empty() && !why.contains('\n'), "{bad:?}: {why}");
    }
    assert_eq!(
        valid_ifname("1234567890123456"),
        Err("an interface name has at most 15 bytes, this one has 16".into())
    );
    assert_eq!(
        valid_ifname("eth0:1"),
        Err("an interface name cannot contain ':'".into())
    );
    // 15 bytes of UTF-8 are fine, 16 are not, whatever the characters.
    assert!(valid_ifname("ééééééé").is_ok()); // 14 bytes
    assert!(valid_ifname("éééééééé").is_err()); // 16 bytes
}

#[test]
fn netns_names_follow_ip_netns() {
    for ok in ["x", "dgk-1234", "a.b", "..a", "n".repeat(255).as_str()] {
        assert_eq!(valid_name(ok), Ok(()), "{ok:?}");
    }
    for bad in ["", ".", "..", "a/b", "/x", "a\0b", "n".repeat(256).as_str()] {
        assert!(valid_name(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn invalid_netns_names_fail_before_any_system_call() {
    for bad in ["a/b", "", "..", "n".repeat(256).as_str()] {
        let e = Netns::ensure(bad).expect_err(bad);
        assert!(
            matches!(e, KernelError::InvalidName { kind: "netns", .. }),
            "{e:?}"
        );
        assert!(matches!(
            Netns::open(bad),
            Err(KernelError::InvalidName { .. })
        ));
        assert!(matches!(
            Netns::remove(bad),
            Err(KernelError::InvalidName { .. })
        ));
    }
    assert_eq!(
        Netns::ensure("a/b").unwrap_err().to_string(),
        "netns 'a/b': invalid name: a namespace name cannot contain '/'"
    );
    // A control character is shown escaped, keeping the message one line.
    let e = Netns::ensure("a\n/b").unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("a\\n/b"), "{e}");
}

#[test]
fn locally_administered_mac_is_unicast_local_and_different() {
    let samples = [
        [0x00, 0x1b, 0x21, 0x3c, 0x4d, 0x5e],
        [0x02, 0x00, 0x00, 0x00, 0x00, 0x01], // already LA unicast
        [0x02, 0x00, 0x00, 0x80, 0x00, 0x01],
        [0x03, 0xff, 0xff, 0xff, 0xff, 0xff], // LA multicast
        [0x01, 0x00, 0x5e, 0x00, 0x00, 0x01], // multicast
        [0xff; 6],
        [0x00; 6],
        [0xfe, 0xff, 0xff, 0x7f, 0xff, 0xff],
    ];
    for mac in samples {
        let la = locally_administered(mac);
        assert_ne!(la, mac, "{mac:02x?}");
        assert_eq!(la[0] & 0x01, 0, "unicast: {la:02x?}");
        assert_eq!(la[0] & 0x02, 0x02, "locally administered: {la:02x?}");
        assert_eq!(la, locally_administered(mac), "deterministic");
        // The vendor's other bits and the last two bytes are kept.
        assert_eq!(la[0] & 0xfc, mac[0] & 0xfc);
        assert_eq!(la[1..3], mac[1..3]);
        assert_eq!(la[4..], mac[4..]);
    }
    // Neighbouring port MACs stay distinct and never meet each other.
    let a = [0x02, 0, 0, 0, 0, 0x10];
    let b = [0x02, 0, 0, 0, 0, 0x11];
    assert_ne!(locally_administered(a), locally_administered(b));
    assert_ne!(locally_administered(a), b);
    assert_eq!(
        locally_administered([0x00, 0x1b, 0x21, 0x3c, 0x4d, 0x5e]),
        [0x02, 0x1b, 0x21, 0xbc, 0x4d, 0x5e]
    );
}

#[test]
fn broadcast_is_brd_plus() {
    let a = Ipv4Addr::new(10, 201, 0, 1);
    assert_eq!(broadcast(a, 24), Some(Ipv4Addr::new(10, 201, 0, 255)));
    assert_eq!(broadcast(a, 8), Some(Ipv4Addr::new(10, 255, 255, 255)));
    assert_eq!(broadcast(a, 0), Some(Ipv4Addr::BROADCAST));
    assert_eq!(broadcast(a, 30), Some(Ipv4Addr::new(10, 201, 0, 3)));
    assert_eq!(broadcast(a, 31), None);
    assert_eq!(broadcast(a, 32), None);
    assert_eq!(broadcast(a, 33), None);
}

#[test]
fn errors_read_as_one_line() {
    let e = KernelError::Netns {
        name: "x".into(),
        what: "cannot create /run/netns/x".into(),
        err: io::Error::from_raw_os_error(libc::EACCES),
    };
    assert_eq!(
        e.to_string(),
        "netns 'x': cannot create /run/netns/x: Permission denied"
    );
    assert_eq!(e.errno(), Some(libc::EACCES));
    let e = KernelError::Netlink {
        target: "interface 'tap0' (index 7)".into(),
        what: "cannot set MTU 100000".into(),
        err: io::Error::from_raw_os_error(libc::EINVAL),
        extack: Some("mtu greater than device maximum".into()),
    };
    assert_eq!(
        e.to_string(),
        "interface 'tap0' (index 7): cannot set MTU 100000: Invalid argument \
         (mtu greater than device maximum)"
    );
    let e = KernelError::Netlink {
        target: "link index 9".into(),
        what: "cannot set MTU 1500".into(),
        err: io::Error::from_raw_os_error(libc::ENODEV),
        extack: None,
    };
    assert_eq!(
        e.to_string(),
        "link index 9: cannot set MTU 1500: No such device"
    );
    assert_eq!(e.errno(), Some(libc::ENODEV));
}

/// An `NLMSG_ERROR` payload after its code: the echoed request (`echo`
/// bytes, its first four the length) and then one `NLMSGERR_ATTR_MSG`.
fn error_payload(echo: usize, text: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8; echo];
    p[..4].copy_from_slice(&(echo as u32).to_ne_bytes());
    let len = 4 + text.len();
    p.extend_from_slice(&(len as u16).to_ne_bytes());
    p.extend_from_slice(&1u16.to_ne_bytes());
    p.extend_from_slice(text);
    p.resize(p.len().div_ceil(4) * 4, 0);
    p
}

#[test]
fn extended_ack_message_is_found_after_the_echoed_request() {
    use netlink_packet_core::{NLM_F_ACK_TLVS, NLM_F_CAPPED};
    let capped = error_payload(16, b"mtu less than device minimum\0");
    assert_eq!(
        extack_message(NLM_F_ACK_TLVS | NLM_F_CAPPED, &capped).as_deref(),
        Some("mtu less than device minimum")
    );
    // Not capped: the whole request (40 bytes here) is echoed first.
    let whole = error_payload(40, b"Invalid prefix\0");
    assert_eq!(
        extack_message(NLM_F_ACK_TLVS, &whole).as_deref(),
        Some("Invalid prefix")
    );
    // No TLVs announced, or nothing where they should be: no message.
    assert_eq!(extack_message(NLM_F_CAPPED, &capped), None);
    assert_eq!(
        extack_message(NLM_F_ACK_TLVS | NLM_F_CAPPED, &[0; 16]),
        None
    );
    assert_eq!(extack_message(NLM_F_ACK_TLVS | NLM_F_CAPPED, &[0; 3]), None);
    assert_eq!(extack_message(NLM_F_ACK_TLVS, &[0xff; 8]), None);
}
