//! The FTP helper's payload rewriting, pure: find the address a control
//! connection's segment announces (`PORT`, `EPRT`; the `227` and `229`
//! replies), write the address the other side must be told instead, and
//! say what changed in length (for the [`Change`] of the shift) and which
//! data connection to expect.
//!
//! As Linux's `nf_conntrack_ftp` does, a command is looked for only at the
//! start of a segment's payload, and only a whole line (ending in `\n`)
//! is rewritten; a line split across segments is [`Scan::Partial`], left
//! alone. Nothing here panics or allocates, whatever the bytes: every
//! number is bounded, every field checked.
//!
//! * `PORT h1,h2,h3,h4,p1,p2` (RFC 959), client to server: the client
//!   listens at h1.h2.h3.h4, port p1*256+p2; the server opens the data
//!   connection (active mode).
//! * `EPRT |1|addr|port|` or `|2|addr|port|` (RFC 2428; any delimiter
//!   from `!` to `~`), the same for IPv4 or IPv6.
//! * `227 Entering Passive Mode (h1,h2,h3,h4,p1,p2)`, server to client:
//!   the server listens there; the client opens the data connection
//!   (passive mode). The text around the numbers varies between servers:
//!   they start at the first digit after the `(`, or after `227 ` when
//!   there is none.
//! * `229 Entering Extended Passive Mode (|||port|)` (RFC 2428): the
//!   server listens on that port of the control connection's address.

use super::adjust::Change;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The longest line looked at (a command or reply line is far shorter).
pub const MAX_LINE: usize = 512;

/// Which announcement a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `PORT`, client to server.
    Port,
    /// `EPRT`, client to server.
    Eprt,
    /// `227`, server to client.
    Pasv,
    /// `229`, server to client.
    Epsv,
}

/// Which side of the control connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The FTP client.
    Client,
    /// The FTP server.
    Server,
}

impl Kind {
    /// Who sends this line.
    pub fn sender(self) -> Side {
        match self {
            Kind::Port | Kind::Eprt => Side::Client,
            Kind::Pasv | Kind::Epsv => Side::Server,
        }
    }
}

/// An address and port a line announces. `addr` None: the address of
/// the control connection's sender (`229` names none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The address, when the line names one.
    pub addr: Option<IpAddr>,
    /// The port.
    pub port: u16,
}

/// An announcement found at the start of a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// Which one.
    pub kind: Kind,
    /// The address and port announced.
    pub at: Endpoint,
    /// The bytes of the payload that name them (the numbers of `PORT` and
    /// `227`, the whole `|..|..|..|` of `EPRT`, the port of `229`).
    pub start: usize,
    /// End (exclusive) of those bytes.
    pub end: usize,
    /// The EPRT/EPSV delimiter (`|` unless the sender chose another).
    delim: u8,
}

/// What [`scan`] found at the start of a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// No announcement of this direction there.
    None,
    /// The start of one, not a whole line yet (split across segments).
    Partial,
    /// A line of this kind that does not parse: left alone.
    Bad(Kind),
    /// One, whole.
    Found(Found),
}

/// Why a rewrite could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FtpError {
    /// `PORT` and `227` carry IPv4 addresses only.
    Family,
    /// `229` carries a port only.
    NoAddress,
    /// The output buffer is too short.
    NoRoom,
    /// The found range is not in the payload given.
    Range,
}

/// What a rewrite did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// The new payload's length.
    pub len: usize,
    /// Where in the payload the replaced bytes start.
    pub offset: usize,
    /// Bytes replaced.
    pub old_len: u16,
    /// Bytes written instead.
    pub new_len: u16,
}

impl Rewritten {
    /// The change for the shift of the direction the segment goes, given
    /// the segment's sequence number.
    pub fn change(&self, seg_seq: u32) -> Change {
        Change {
            pos: seg_seq.wrapping_add(self.offset as u32),
            old_len: self.old_len,
            new_len: self.new_len,
        }
    }

    /// Bytes added to the stream (negative: removed).
    pub fn delta(&self) -> i32 {
        self.new_len as i32 - self.old_len as i32
    }
}

/// The data connection a rewritten announcement makes expected: the
/// `opener` connects to `told` (what the rewritten line said); the
/// connection is to reach `listens` (what the original line said).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataConn {
    /// Who opens it: the server in active mode, the client in passive.
    pub opener: Side,
    /// Where the opener was told to connect.
    pub told: Endpoint,
    /// Where the listener is.
    pub listens: Endpoint,
}

impl Found {
    /// The data connection once the line says `told` instead.
    pub fn data_conn(&self, told: Endpoint) -> DataConn {
        DataConn {
            opener: match self.kind.sender() {
                Side::Client => Side::Server,
                Side::Server => Side::Client,
            },
            told,
            listens: self.at,
        }
    }
}

/// The replacement text for an announcement: at most 64 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Text {
    b: [u8; 64],
    n: u8,
}

impl Text {
    fn new() -> Text {
        Text { b: [0; 64], n: 0 }
    }
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.b.get(..self.n as usize).unwrap_or(&[])
    }
    fn push(&mut self, s: &[u8]) -> Result<(), FtpError> {
        let n = self.n as usize;
        let d = self.b.get_mut(n..n + s.len()).ok_or(FtpError::NoRoom)?;
        d.copy_from_slice(s);
        self.n += s.len() as u8;
        Ok(())
    }
    fn num(&mut self, v: u32) -> Result<(), FtpError> {
        let mut d = [0u8; 10];
        let mut i = d.len();
        let mut v = v;
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.push(&d[i..])
    }
}

impl std::fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push(s.as_bytes()).map_err(|_| std::fmt::Error)
    }
}

/// Look for a `what`-side announcement at the start of `payload`: `PORT`
/// and `EPRT` for [`Side::Client`], `227` and `229` for [`Side::Server`].
pub fn scan(payload: &[u8], what: Side) -> Scan {
    let pats: [(&[u8], Kind); 2] = match what {
        Side::Client => [(b"PORT ", Kind::Port), (b"EPRT ", Kind::Eprt)],
        Side::Server => [(b"227 ", Kind::Pasv), (b"229 ", Kind::Epsv)],
    };
    for (pat, kind) in pats {
        let n = pat.len().min(payload.len());
        let (head, pat_head) = (&payload[..n], &pat[..n]);
        if !head.eq_ignore_ascii_case(pat_head) {
            continue;
        }
        if n < pat.len() {
            return Scan::Partial;
        }
        let look = &payload[..payload.len().min(MAX_LINE)];
        let Some(eol) = look.iter().position(|&c| c == b'\n') else {
            return if payload.len() >= MAX_LINE {
                Scan::Bad(kind)
            } else {
                Scan::Partial
            };
        };
        let line = &payload[..eol];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let found = match kind {
            Kind::Port => parse_port(line, pat.len(), kind),
            Kind::Pasv => parse_pasv(line, pat.len()),
            Kind::Eprt => parse_eprt(line, pat.len()),
            Kind::Epsv => parse_epsv(line, pat.len()),
        };
        return match found {
            Some(f) => Scan::Found(f),
            None => Scan::Bad(kind),
        };
    }
    Scan::None
}

/// Decimal digits at `line[i..]`: the value (at most `max`) and the index
/// after them; None without a digit, with more than 5 digits or above
/// `max`.
fn number(line: &[u8], i: usize, max: u32) -> Option<(u32, usize)> {
    let digits = line
        .get(i..)?
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 || digits > 5 {
        return None;
    }
    let v = line[i..i + digits]
        .iter()
        .fold(0u32, |v, &c| v * 10 + (c - b'0') as u32);
    (v <= max).then_some((v, i + digits))
}

/// `h1,h2,h3,h4,p1,p2` at `line[i..]`: the endpoint and the index after.
fn six(line: &[u8], mut i: usize) -> Option<(Endpoint, usize)> {
    let mut v = [0u8; 6];
    for (k, slot) in v.iter_mut().enumerate() {
        if k > 0 {
            if line.get(i) != Some(&b',') {
                return None;
            }
            i += 1;
        }
        let (n, j) = number(line, i, 255)?;
        *slot = n as u8;
        i = j;
    }
    let addr = Ipv4Addr::new(v[0], v[1], v[2], v[3]);
    Some((
        Endpoint {
            addr: Some(IpAddr::V4(addr)),
            port: u16::from_be_bytes([v[4], v[5]]),
        },
        i,
    ))
}

fn parse_port(line: &[u8], from: usize, kind: Kind) -> Option<Found> {
    let start = from + line.get(from..)?.iter().take_while(|&&c| c == b' ').count();
    let (at, end) = six(line, start)?;
    // nothing but spaces after the numbers
    if !line.get(end..)?.iter().all(|&c| c == b' ') {
        return None;
    }
    Some(Found {
        kind,
        at,
        start,
        end,
        delim: 0,
    })
}

fn parse_pasv(line: &[u8], from: usize) -> Option<Found> {
    // after the parenthesis when there is one (as Linux looks), else at
    // the first digit
    let rest = line.get(from..)?;
    let from = match rest.iter().position(|&c| c == b'(') {
        Some(p) => from + p + 1,
        None => from,
    };
    let start = from + line.get(from..)?.iter().position(|c| c.is_ascii_digit())?;
    let (at, end) = six(line, start)?;
    // a digit or comma right after would be a seventh number
    if matches!(line.get(end), Some(c) if c.is_ascii_digit() || *c == b',') {
        return None;
    }
    Some(Found {
        kind: Kind::Pasv,
        at,
        start,
        end,
        delim: 0,
    })
}

fn delimiter(c: u8) -> bool {
    (33..=126).contains(&c) && !c.is_ascii_alphanumeric() && c != b'.' && c != b':'
}

fn parse_eprt(line: &[u8], from: usize) -> Option<Found> {
    let start = from + line.get(from..)?.iter().take_while(|&&c| c == b' ').count();
    let arg = line.get(start..)?;
    let d = *arg.first()?;
    if !delimiter(d) {
        return None;
    }
    // d proto d addr d port d
    let mut f = arg.split(|&c| c == d);
    let (empty, proto, addr, port, rest) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
    if !empty.is_empty() || f.next().is_some() || !rest.iter().all(|&c| c == b' ') {
        return None;
    }
    let addr = std::str::from_utf8(addr).ok()?;
    let addr = match proto {
        b"1" => IpAddr::V4(addr.parse::<Ipv4Addr>().ok()?),
        b"2" => IpAddr::V6(addr.parse::<Ipv6Addr>().ok()?),
        _ => return None,
    };
    let (p, j) = number(port, 0, 65535)?;
    if j != port.len() {
        return None;
    }
    let end = line.len() - rest.len();
    Some(Found {
        kind: Kind::Eprt,
        at: Endpoint {
            addr: Some(addr),
            port: p as u16,
        },
        start,
        end,
        delim: d,
    })
}

fn parse_epsv(line: &[u8], from: usize) -> Option<Found> {
    let open = from + line.get(from..)?.iter().position(|&c| c == b'(')?;
    let arg = line.get(open + 1..)?;
    let d = *arg.first()?;
    if !delimiter(d) || arg.get(1) != Some(&d) || arg.get(2) != Some(&d) {
        return None;
    }
    let start = open + 4;
    let (p, end) = number(line, start, 65535)?;
    if line.get(end) != Some(&d) || line.get(end + 1) != Some(&b')') {
        return None;
    }
    Some(Found {
        kind: Kind::Epsv,
        at: Endpoint {
            addr: None,
            port: p as u16,
        },
        start,
        end,
        delim: d,
    })
}

/// The text that names `to` in an announcement like `f`.
pub fn replacement(f: &Found, to: Endpoint) -> Result<Text, FtpError> {
    let mut t = Text::new();
    match f.kind {
        Kind::Port | Kind::Pasv => {
            let Some(IpAddr::V4(a)) = to.addr else {
                return Err(FtpError::Family);
            };
            let [p1, p2] = to.port.to_be_bytes();
            for (i, v) in a.octets().into_iter().chain([p1, p2]).enumerate() {
                if i > 0 {
                    t.push(b",")?;
                }
                t.num(v as u32)?;
            }
        }
        Kind::Eprt => {
            let d = [f.delim];
            t.push(&d)?;
            match to.addr {
                Some(IpAddr::V4(a)) => {
                    t.push(b"1")?;
                    t.push(&d)?;
                    std::fmt::Write::write_fmt(&mut t, format_args!("{a}"))
                        .map_err(|_| FtpError::NoRoom)?;
                }
                Some(IpAddr::V6(a)) => {
                    t.push(b"2")?;
                    t.push(&d)?;
                    std::fmt::Write::write_fmt(&mut t, format_args!("{a}"))
                        .map_err(|_| FtpError::NoRoom)?;
                }
                None => return Err(FtpError::NoAddress),
            }
            t.push(&d)?;
            t.num(to.port as u32)?;
            t.push(&d)?;
        }
        Kind::Epsv => {
            if to.addr.is_some() {
                return Err(FtpError::NoAddress);
            }
            t.num(to.port as u32)?;
        }
    }
    Ok(t)
}

/// Write `payload` with `f`'s bytes naming `to` instead into `out`.
pub fn rewrite(
    payload: &[u8],
    f: &Found,
    to: Endpoint,
    out: &mut [u8],
) -> Result<Rewritten, FtpError> {
    let t = replacement(f, to)?;
    let new = t.as_bytes();
    let (head, tail) = match (payload.get(..f.start), payload.get(f.end..)) {
        (Some(h), Some(t)) if f.start <= f.end => (h, t),
        _ => return Err(FtpError::Range),
    };
    let len = head.len() + new.len() + tail.len();
    let out = out.get_mut(..len).ok_or(FtpError::NoRoom)?;
    let (a, rest) = out.split_at_mut(head.len());
    let (b, c) = rest.split_at_mut(new.len());
    a.copy_from_slice(head);
    b.copy_from_slice(new);
    c.copy_from_slice(tail);
    Ok(Rewritten {
        len,
        offset: f.start,
        old_len: (f.end - f.start) as u16,
        new_len: new.len() as u16,
    })
}

/// [`rewrite`] in place: `buf[..len]` holds the payload (with room after
/// it for a longer text); `f`'s bytes are replaced by `text` and the rest
/// of the payload moved after it. Returns what changed (its `len` the
/// payload's new length).
pub fn rewrite_in_place(
    buf: &mut [u8],
    len: usize,
    f: &Found,
    text: &Text,
) -> Result<Rewritten, FtpError> {
    let new = text.as_bytes();
    if f.start > f.end || f.end > len || len > buf.len() {
        return Err(FtpError::Range);
    }
    let new_len = len - (f.end - f.start) + new.len();
    if new_len > buf.len() {
        return Err(FtpError::NoRoom);
    }
    buf.copy_within(f.end..len, f.start + new.len());
    buf[f.start..f.start + new.len()].copy_from_slice(new);
    Ok(Rewritten {
        len: new_len,
        offset: f.start,
        old_len: (f.end - f.start) as u16,
        new_len: new.len() as u16,
    })
}
