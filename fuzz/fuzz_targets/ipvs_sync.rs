//! Fuzz the IPVS sync message parser (`net::wire::ipvs_sync::parse`), what
//! the sync receiver runs on every datagram from 224.0.0.81:8848. Beside
//! "no panic": no more items than the header's count, no more connections
//! than 36-byte entries fit (an IPv6 entry takes 72), nothing after an error that drops the rest of
//! the message, and the connections read, written again with
//! `MessageWriter`, parse back the same.
#![no_main]

use dirigo::net::wire::ipvs_sync::{parse, MessageWriter, CONN_V4_LEN, CONN_V6_LEN, HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((h, entries)) = parse(data) else {
        return;
    };
    assert_eq!(h.size as usize, data.len());
    assert_eq!(h.version, 1);
    let room = (data.len() - HEADER_LEN) / CONN_V4_LEN;
    let mut items = 0;
    let mut ended = false;
    let mut buf = [0u8; HEADER_LEN + 255 * CONN_V6_LEN];
    let mut w = MessageWriter::new(&mut buf, h.syncid);
    let mut conns = Vec::new();
    for r in entries {
        assert!(!ended, "an item after an error that ends the message");
        items += 1;
        match r {
            Ok(c) => {
                assert!(w.push(&c), "a parsed connection fits a full-size writer");
                conns.push(c);
            }
            Err(e) => {
                ended = !e.skips_entry();
                assert!(!e.name().is_empty());
            }
        }
    }
    assert!(items <= h.count as usize);
    assert!(
        conns.len() <= room,
        "{} connections in {} bytes",
        conns.len(),
        data.len()
    );
    let msg = w.finish();
    let bytes: usize = conns.iter().map(|c| c.entry_len()).sum();
    assert_eq!(msg.len(), HEADER_LEN + bytes);
    let (h2, again) = parse(msg).expect("a written message parses");
    assert_eq!((h2.syncid, h2.count as usize), (h.syncid, conns.len()));
    let again: Vec<_> = again.map(|r| r.expect("a written entry parses")).collect();
    assert_eq!(again, conns, "connections changed by a round trip");
});
