use super::codec::{decode, encode, CONN_LEN, HEADER_LEN};
use super::{ConnEntry, Entry, FileRefusal, TemplateEntry, VERSION};
use crate::lb::spec::Method;
use crate::lb::synproxy::Aux;

fn sample() -> Vec<Entry> {
    vec![
        Entry::Conn(ConnEntry {
            v6: false,
            proto: 6,
            state: 1,
            flags: 5,
            method: Method::Nat,
            caddr: 0x0a00_0001,
            vaddr: 0x0a00_0002,
            daddr: 0x0a00_0003,
            cport: 40000,
            vport: 80,
            dport: 8080,
            left_ms: 900_000,
            nat64: (0, 0),
            laddr6: 0,
            cip: 0,
            insert: None,
            fwmark: 0,
            sp: Some(Aux {
                seq: 0xdead_beef,
                ts: 7,
                window: 29200,
                wscale: 7,
                flags: 3,
            }),
        }),
        Entry::Conn(ConnEntry {
            v6: true,
            proto: 17,
            method: Method::Nat,
            caddr: 0x2001_0db8 << 96 | 1,
            vaddr: 0x2001_0db8 << 96 | 2,
            daddr: 0xffff_0a00_0003,
            left_ms: 300_000,
            nat64: (0xc633_6401, 1025),
            ..Default::default()
        }),
        // an IPv6 FullNAT connection: its local address and port
        Entry::Conn(ConnEntry {
            v6: true,
            proto: 6,
            method: Method::FullNat,
            caddr: 0x2001_0db8 << 96 | 7,
            vaddr: 0x2001_0db8 << 96 | 2,
            daddr: 0x2001_0db8_0010 << 80 | 3,
            left_ms: 300_000,
            nat64: (0, 2049),
            laddr6: 0x2001_0db8_00aa << 80 | 1,
            cip: 3,
            insert: Some((0xffff_fff1, 28, 1)),
            ..Default::default()
        }),
        Entry::Template(TemplateEntry {
            v6: false,
            proto: 6,
            vip: 0x0a00_0002,
            vport: 443,
            client: 0x0a00_0000,
            daddr: 0x0a00_0009,
            dport: 443,
            left_ms: 12_345,
            fwmark: 0,
        }),
    ]
}

#[test]
fn round_trip() {
    let e = sample();
    let f = encode(1_234_567, &e);
    let d = decode(&f).expect("decodes");
    assert_eq!(d.header.stopped_unix_ns, 1_234_567);
    assert_eq!(d.header.entries, 4);
    assert_eq!(d.entries().collect::<Vec<_>>(), e);
}

#[test]
fn empty_file_round_trips() {
    let f = encode(5, &[]);
    assert_eq!(f.len(), HEADER_LEN);
    let d = decode(&f).expect("decodes");
    assert_eq!(d.entries().count(), 0);
}

#[test]
fn bad_magic_is_refused() {
    let mut f = encode(1, &sample());
    f[0] = b'X';
    assert_eq!(decode(&f).err(), Some(FileRefusal::Magic));
    assert_eq!(
        decode(b"hello world, not a handoff").err(),
        Some(FileRefusal::Magic)
    );
}

#[test]
fn another_version_is_refused() {
    let mut f = encode(1, &sample());
    f[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    assert_eq!(decode(&f).err(), Some(FileRefusal::Version(VERSION + 1)));
}

#[test]
fn a_flipped_bit_fails_the_checksum() {
    let f = encode(1, &sample());
    // every byte after the checksum is covered, the header's too
    for at in [16, 30, HEADER_LEN + 10, f.len() - 1] {
        let mut g = f.clone();
        g[at] ^= 0x10;
        let want = if (32..40).contains(&at) {
            FileRefusal::Truncated
        } else {
            FileRefusal::Checksum
        };
        assert_eq!(decode(&g).err(), Some(want), "byte {at}");
    }
}

#[test]
fn truncated_files_are_refused() {
    let f = encode(1, &sample());
    for len in [
        0,
        4,
        10,
        HEADER_LEN - 1,
        HEADER_LEN,
        HEADER_LEN + CONN_LEN,
        f.len() - 1,
    ] {
        assert_eq!(
            decode(&f[..len]).err(),
            Some(FileRefusal::Truncated),
            "len {len}"
        );
    }
    let mut g = f.clone();
    g.push(0);
    assert_eq!(decode(&g).err(), Some(FileRefusal::Truncated));
}

/// A file whose checksum is right but whose body is not what this
/// version writes (a writer's bug, or a forged file) is refused whole.
#[test]
fn malformed_entries_refuse_the_file() {
    let f = encode(1, &sample());
    let recrc = |mut g: Vec<u8>| {
        let crc = crc32fast::hash(&g[16..]);
        g[12..16].copy_from_slice(&crc.to_le_bytes());
        g
    };
    // an unknown kind
    let mut g = f.clone();
    g[HEADER_LEN] = 9;
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(0)));
    // an unknown method in the second entry
    let mut g = f.clone();
    g[HEADER_LEN + CONN_LEN + 5] = 7;
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(1)));
    // an IPv4 entry with an address wider than 32 bits
    let mut g = f.clone();
    g[HEADER_LEN + 6 + 5] = 1;
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(0)));
    // a count that does not match the entries
    let mut g = f.clone();
    g[24..32].copy_from_slice(&5u64.to_le_bytes());
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(4)));
    // an IPv6 local address without its bit, and an IPv4 entry with one
    let third = HEADER_LEN + 2 * CONN_LEN;
    let mut g = f.clone();
    g[third + 1] &= !8;
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(2)));
    let mut g = f.clone();
    g[HEADER_LEN + 1] |= 8;
    g[HEADER_LEN + 82] = 1;
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(0)));
    // a client-address state on a connection that is not FullNAT's, and
    // an unknown phase
    let mut g = f.clone();
    g[HEADER_LEN + 1] |= 16;
    g[HEADER_LEN + 98] = 3;
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(0)));
    let mut g = f.clone();
    g[third + 105] = 3;
    assert_eq!(decode(&recrc(g)).err(), Some(FileRefusal::Malformed(2)));
}

/// A file written in chunks (the checkpoint's way: each worker's
/// entries encoded apart, the header computed over them) is the file
/// [`encode`] writes.
#[test]
fn chunks_make_the_same_file() {
    use super::codec::{header_for, push_entry};
    let e = sample();
    let whole = encode(99, &e);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for x in &e[..2] {
        push_entry(&mut a, x);
    }
    for x in &e[2..] {
        push_entry(&mut b, x);
    }
    let h = header_for(&[&a, &[], &b], e.len() as u64, 99);
    assert_eq!([&h[..], &a, &b].concat(), whole);
}
