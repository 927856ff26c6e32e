//! The handoff file's bytes: a header (magic, [`VERSION`], a CRC-32 of
//! everything after it, the old process's stop time, the entry count and
//! the body's length), then the entries, each a kind byte and a fixed
//! number of little-endian fields.
//!
//! ```text
//!  0  magic "DIRIGOHO"        8 bytes
//!  8  version                 u32
//! 12  crc32 of bytes 16..end  u32
//! 16  stopped (Unix ns)       u64
//! 24  entries                 u64
//! 32  body length (bytes)     u64
//! 40  entries: kind u8 (1 connection, 110 bytes; 2 template, 51 bytes)
//! ```
//!
//! [`decode`] checks the whole file (header, length, checksum, every
//! entry's kind and enumerations) before it hands out one entry, so a
//! file is installed whole or refused whole.

use super::entry::{ConnEntry, Entry, FileRefusal, Header, TemplateEntry, MAGIC, VERSION};
use crate::lb::spec::Method;
use crate::lb::synproxy::Aux;

/// The header's length.
pub const HEADER_LEN: usize = 40;
/// A connection entry's length, its kind byte included.
pub const CONN_LEN: usize = 110;
/// A template entry's length, its kind byte included.
pub const TEMPLATE_LEN: usize = 51;

const KIND_CONN: u8 = 1;
const KIND_TEMPLATE: u8 = 2;

const B_V6: u8 = 1;
const B_SP: u8 = 2;
const B_NAT64: u8 = 4;
const B_LADDR6: u8 = 8;
const B_INSERT: u8 = 16;

/// The longest entry, its kind byte included.
pub const MAX_ENTRY_LEN: usize = if CONN_LEN > TEMPLATE_LEN {
    CONN_LEN
} else {
    TEMPLATE_LEN
};

/// Writes a handoff file into a buffer: [`Writer::push`] each entry, then
/// [`Writer::finish`].
pub struct Writer {
    buf: Vec<u8>,
    entries: u64,
}

impl Writer {
    /// A writer with room for about `conns` connections.
    pub fn with_capacity(conns: usize) -> Writer {
        let mut buf = Vec::with_capacity(HEADER_LEN + conns.saturating_mul(CONN_LEN));
        buf.resize(HEADER_LEN, 0);
        Writer { buf, entries: 0 }
    }

    /// Entries pushed so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Append one entry.
    pub fn push(&mut self, e: &Entry) {
        push_entry(&mut self.buf, e);
        self.entries += 1;
    }

    /// Append a run of entries already encoded by [`push_entry`]
    /// (`entries` of them, in `bytes`).
    pub fn extend(&mut self, bytes: &[u8], entries: u64) {
        self.buf.extend_from_slice(bytes);
        self.entries += entries;
    }

    /// The file's bytes, with the old process's stop time.
    pub fn finish(mut self, stopped_unix_ns: u64) -> Vec<u8> {
        let h = header_for(&[&self.buf[HEADER_LEN..]], self.entries, stopped_unix_ns);
        self.buf[..HEADER_LEN].copy_from_slice(&h);
        self.buf
    }
}

/// Append entry `e`'s bytes to `b` (at most [`MAX_ENTRY_LEN`]: a
/// caller that must not allocate checks the room first).
pub fn push_entry(b: &mut Vec<u8>, e: &Entry) {
    match e {
        Entry::Conn(c) => {
            let bits = if c.v6 { B_V6 } else { 0 }
                | if c.sp.is_some() { B_SP } else { 0 }
                | if c.nat64 != (0, 0) { B_NAT64 } else { 0 }
                | if c.laddr6 != 0 { B_LADDR6 } else { 0 }
                | if c.insert.is_some() { B_INSERT } else { 0 };
            b.extend_from_slice(&[KIND_CONN, bits, c.proto, c.state, c.flags, c.method as u8]);
            for a in [c.caddr, c.vaddr, c.daddr] {
                b.extend_from_slice(&a.to_le_bytes());
            }
            for p in [c.cport, c.vport, c.dport] {
                b.extend_from_slice(&p.to_le_bytes());
            }
            b.extend_from_slice(&c.left_ms.to_le_bytes());
            b.extend_from_slice(&c.nat64.0.to_le_bytes());
            b.extend_from_slice(&c.nat64.1.to_le_bytes());
            let sp = c.sp.unwrap_or_default();
            b.extend_from_slice(&sp.seq.to_le_bytes());
            b.extend_from_slice(&sp.ts.to_le_bytes());
            b.extend_from_slice(&sp.window.to_le_bytes());
            b.extend_from_slice(&[sp.wscale, sp.flags]);
            b.extend_from_slice(&c.laddr6.to_le_bytes());
            let (at, len, phase) = c.insert.unwrap_or_default();
            b.push(c.cip);
            b.extend_from_slice(&at.to_le_bytes());
            b.extend_from_slice(&len.to_le_bytes());
            b.push(phase);
            b.extend_from_slice(&c.fwmark.to_le_bytes());
        }
        Entry::Template(t) => {
            b.extend_from_slice(&[KIND_TEMPLATE, if t.v6 { B_V6 } else { 0 }, t.proto]);
            b.extend_from_slice(&t.vip.to_le_bytes());
            b.extend_from_slice(&t.vport.to_le_bytes());
            b.extend_from_slice(&t.client.to_le_bytes());
            b.extend_from_slice(&t.daddr.to_le_bytes());
            b.extend_from_slice(&t.dport.to_le_bytes());
            b.extend_from_slice(&t.left_ms.to_le_bytes());
            b.extend_from_slice(&t.fwmark.to_le_bytes());
        }
    }
}

/// The header of a file whose body is `chunks` (entries encoded by
/// [`push_entry`], `entries` of them, in order), with the old process's
/// stop time: the bytes to write before the chunks.
pub fn header_for(chunks: &[&[u8]], entries: u64, stopped_unix_ns: u64) -> [u8; HEADER_LEN] {
    let body: usize = chunks.iter().map(|c| c.len()).sum();
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&stopped_unix_ns.to_le_bytes());
    h[24..32].copy_from_slice(&entries.to_le_bytes());
    h[32..40].copy_from_slice(&(body as u64).to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&h[16..]);
    for c in chunks {
        crc.update(c);
    }
    h[12..16].copy_from_slice(&crc.finalize().to_le_bytes());
    h
}

/// Encode `entries` (a whole file).
pub fn encode<'a>(stopped_unix_ns: u64, entries: impl IntoIterator<Item = &'a Entry>) -> Vec<u8> {
    let mut w = Writer::with_capacity(0);
    for e in entries {
        w.push(e);
    }
    w.finish(stopped_unix_ns)
}

/// A file [`decode`] checked: its header and its entries.
#[derive(Clone, Copy, Debug)]
pub struct Decoded<'a> {
    /// The header.
    pub header: Header,
    body: &'a [u8],
}

impl<'a> Decoded<'a> {
    /// The entries, in file order.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + 'a {
        let mut rest = self.body;
        std::iter::from_fn(move || {
            let (e, n) = entry(rest).ok()?;
            rest = rest.get(n..)?;
            Some(e)
        })
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    let mut x = [0; 2];
    x.copy_from_slice(&b[at..at + 2]);
    u16::from_le_bytes(x)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

fn u128_at(b: &[u8], at: usize) -> u128 {
    let mut x = [0; 16];
    x.copy_from_slice(&b[at..at + 16]);
    u128::from_le_bytes(x)
}

fn method_of(v: u8) -> Option<Method> {
    match v {
        0 => Some(Method::Dr),
        1 => Some(Method::Tun),
        2 => Some(Method::Nat),
        3 => Some(Method::FullNat),
        _ => None,
    }
}

/// The entry at the start of `b` and its length; `Err(())` when it is
/// not one (unknown kind, too short, an impossible value).
fn entry(b: &[u8]) -> Result<(Entry, usize), ()> {
    match b.first() {
        Some(&KIND_CONN) if b.len() >= CONN_LEN => {
            let bits = b[1];
            if bits & !(B_V6 | B_SP | B_NAT64 | B_LADDR6 | B_INSERT) != 0 {
                return Err(());
            }
            let method = method_of(b[5]).ok_or(())?;
            let c = ConnEntry {
                v6: bits & B_V6 != 0,
                proto: b[2],
                state: b[3],
                flags: b[4],
                method,
                caddr: u128_at(b, 6),
                vaddr: u128_at(b, 22),
                daddr: u128_at(b, 38),
                cport: u16_at(b, 54),
                vport: u16_at(b, 56),
                dport: u16_at(b, 58),
                left_ms: u32_at(b, 60),
                nat64: (u32_at(b, 64), u16_at(b, 68)),
                sp: (bits & B_SP != 0).then(|| Aux {
                    seq: u32_at(b, 70),
                    ts: u32_at(b, 74),
                    window: u16_at(b, 78),
                    wscale: b[80],
                    flags: b[81],
                }),
                laddr6: u128_at(b, 82),
                cip: b[98],
                insert: (bits & B_INSERT != 0).then(|| (u32_at(b, 99), u16_at(b, 103), b[105])),
                fwmark: u32_at(b, 106),
            };
            // the client's address only for FullNAT, its state only with it
            let known = c.cip <= 3 && c.insert.is_none_or(|i| i.2 <= 2);
            let fullnat = c.method == Method::FullNat && c.v6;
            if !known || (c.cip != 0 && !fullnat) || (c.insert.is_some() && c.cip == 0) {
                return Err(());
            }
            if (c.laddr6 != 0) != (bits & B_LADDR6 != 0) || (c.laddr6 != 0 && !c.v6) {
                return Err(());
            }
            let wide = |a: u128| a >> 32 != 0;
            if !c.v6 && (wide(c.caddr) || wide(c.vaddr) || wide(c.daddr)) {
                return Err(());
            }
            Ok((Entry::Conn(c), CONN_LEN))
        }
        Some(&KIND_TEMPLATE) if b.len() >= TEMPLATE_LEN => {
            if b[1] & !B_V6 != 0 {
                return Err(());
            }
            let t = TemplateEntry {
                v6: b[1] & B_V6 != 0,
                proto: b[2],
                vip: u128_at(b, 3),
                vport: u16_at(b, 19),
                client: u32_at(b, 21),
                daddr: u128_at(b, 25),
                dport: u16_at(b, 41),
                left_ms: u32_at(b, 43),
                fwmark: u32_at(b, 47),
            };
            Ok((Entry::Template(t), TEMPLATE_LEN))
        }
        _ => Err(()),
    }
}

/// Check a whole file: magic, version, length, checksum, then every
/// entry. Any fault refuses the file whole.
pub fn decode(file: &[u8]) -> Result<Decoded<'_>, FileRefusal> {
    if file.len() < 12 || file[0..8] != MAGIC {
        return Err(if file.len() < 8 || file[0..8] == MAGIC {
            FileRefusal::Truncated
        } else {
            FileRefusal::Magic
        });
    }
    let version = u32_at(file, 8);
    if version != VERSION {
        return Err(FileRefusal::Version(version));
    }
    if file.len() < HEADER_LEN {
        return Err(FileRefusal::Truncated);
    }
    let header = Header {
        stopped_unix_ns: u64_at(file, 16),
        entries: u64_at(file, 24),
    };
    let body_len = u64_at(file, 32);
    if (file.len() - HEADER_LEN) as u64 != body_len {
        return Err(FileRefusal::Truncated);
    }
    if crc32fast::hash(&file[16..]) != u32_at(file, 12) {
        return Err(FileRefusal::Checksum);
    }
    let body = &file[HEADER_LEN..];
    let (mut rest, mut n) = (body, 0u64);
    while !rest.is_empty() {
        let Ok((_, len)) = entry(rest) else {
            return Err(FileRefusal::Malformed(n));
        };
        rest = &rest[len..];
        n += 1;
    }
    if n != header.entries {
        return Err(FileRefusal::Malformed(n));
    }
    Ok(Decoded { header, body })
}
