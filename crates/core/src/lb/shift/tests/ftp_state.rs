//! The FTP helper's bounded state: the control connections' side table
//! (claimed, found, full, taken back once its connection is gone) and the
//! expectations (added once, used once, expiring, full); the in-place
//! rewrite growing and shrinking a line.

use crate::lb::shift::ftp::{self, Endpoint, Scan, Side};
use crate::lb::shift::ftp_state::{
    Added, Controls, Expect, Expects, CONTROL_SLOTS, EXPECT_MS, EXPECT_SLOTS,
};
use crate::lb::shift::{Change, Dir};
use crate::net::meta::FlowKey;
use std::net::{IpAddr, Ipv4Addr};

fn key(sport: u16) -> FlowKey {
    FlowKey {
        src: 0xc633_6407,
        dst: 0xc000_020a,
        sport,
        dport: 21,
        proto: 6,
    }
}

#[test]
fn controls_claim_find_and_take_back() {
    let mut c = Controls::new(7);
    assert!(c.claim(&key(1), |_| true));
    let ch = Change {
        pos: 100,
        old_len: 9,
        new_len: 10,
    };
    c.get_mut(&key(1)).unwrap().record(Dir::Reply, ch).unwrap();
    assert_eq!(c.get_mut(&key(1)).unwrap().dir(Dir::Reply).offset(), 1);
    assert!(c.get_mut(&key(2)).is_none());
    // the same key again (a new connection of the same tuple): reset
    assert!(c.claim(&key(1), |_| true));
    assert!(c.get_mut(&key(1)).unwrap().is_identity());
    // fill the table with live connections: some key finds no slot
    let mut refused = 0;
    for p in 2..(CONTROL_SLOTS as u16 + 2) {
        if !c.claim(&key(p), |_| true) {
            refused += 1;
        }
    }
    assert!(refused > 0 && c.len() <= CONTROL_SLOTS);
    // once their connections are gone, their slots are taken back
    let full = (2..(CONTROL_SLOTS as u16 + 2))
        .find(|&p| c.get_mut(&key(p)).is_none())
        .unwrap();
    assert!(!c.claim(&key(full), |_| true));
    assert!(c.claim(&key(full), |_| false));
    assert!(c.get_mut(&key(full)).is_some());
}

fn exp(sport: u16, vport: u16) -> Expect {
    Expect {
        key: FlowKey {
            sport,
            dport: vport,
            ..key(0)
        },
        daddr: 0x0a00_0015,
        dport: vport,
        svc: 0,
        dest: 0,
    }
}

#[test]
fn expectations_once_expiring_and_bounded() {
    let mut x = Expects::default();
    assert!(x.is_empty());
    assert_eq!(x.add(exp(0, 50000), 0), Added::New);
    assert_eq!(x.add(exp(0, 50000), 10), Added::Again);
    let syn = FlowKey {
        sport: 40001,
        dport: 50000,
        ..key(0)
    };
    assert!(x.expects(&syn, false, 10));
    assert!(!x.expects(&syn, true, 10), "a request, not a reply");
    assert!(!x.expects(&syn, false, 10 + EXPECT_MS), "expired");
    assert_eq!(x.take(&syn, false, 20), Some(exp(0, 50000)));
    assert_eq!(x.take(&syn, false, 20), None, "used once");
    // active: the real server's connection from port 20 to the client
    assert_eq!(x.add(exp(40002, 20), 0), Added::New);
    let from_rs = FlowKey {
        src: 0x0a00_0015,
        dst: key(0).src,
        sport: 20,
        dport: 40002,
        proto: 6,
    };
    assert!(x.take(&from_rs, true, 1).is_some());
    // full, until one expires
    for p in 0..EXPECT_SLOTS as u16 {
        assert_eq!(x.add(exp(0, 1000 + p), 0), Added::New);
    }
    assert_eq!(x.add(exp(0, 999), 1), Added::Full);
    assert_eq!(x.add(exp(0, 999), EXPECT_MS), Added::New);
    assert_eq!(x.len(), EXPECT_SLOTS);
}

#[test]
fn rewrite_in_place_grows_and_shrinks() {
    for (line, to, want) in [
        (
            &b"227 Entering Passive Mode (10,0,0,21,195,80).\r\nnext"[..],
            [192, 0, 2, 10],
            &b"227 Entering Passive Mode (192,0,2,10,195,80).\r\nnext"[..],
        ),
        (
            &b"227 Entering Passive Mode (192,168,100,200,195,80)\r\n"[..],
            [1, 2, 3, 4],
            &b"227 Entering Passive Mode (1,2,3,4,195,80)\r\n"[..],
        ),
    ] {
        let Scan::Found(f) = ftp::scan(line, Side::Server) else {
            panic!("found")
        };
        let text = ftp::replacement(
            &f,
            Endpoint {
                addr: Some(IpAddr::V4(Ipv4Addr::from(to))),
                port: f.at.port,
            },
        )
        .unwrap();
        let mut buf = line.to_vec();
        buf.resize(line.len() + 16, 0);
        let r = ftp::rewrite_in_place(&mut buf, line.len(), &f, &text).unwrap();
        assert_eq!(&buf[..r.len], want);
        // no room for a longer line: refused, nothing read past the end
        if r.len > line.len() {
            let mut tight = line.to_vec();
            assert!(ftp::rewrite_in_place(&mut tight, line.len(), &f, &text).is_err());
        }
    }
}
