//! The DNS check (keepalived DNS_CHECK): one query over UDP, up when a
//! reply with the query's id and NOERROR arrives (and, when asked, with an
//! answer of the query's type equal to `expect`).
//!
//! The codec is sans-IO and checks every length it reads: garbage is a
//! reply to ignore or a failure, never a panic. Datagrams that are too
//! short, carry another id or are not responses are ignored, as
//! keepalived ignores them; the check then waits on until its timeout.

use super::net::connect_error;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The largest reply read (EDNS0 sizes are not asked for: 512 is the
/// most a server sends, but a bigger one is read whole).
const REPLY_MAX: usize = 64 * 1024;

/// The DNS header's length.
const HEADER: usize = 12;

/// Compression pointers followed in one name before it is refused.
const MAX_JUMPS: usize = 64;

/// The query for `name` (labels without the final dot; empty: the root)
/// and `qtype`, class IN, recursion desired.
pub fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut q = Vec::with_capacity(HEADER + name.len() + 6);
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&0x0100u16.to_be_bytes()); // RD
    q.extend_from_slice(&1u16.to_be_bytes()); // QDCOUNT
    q.extend_from_slice(&[0; 6]); // AN, NS, AR counts
    for label in name.split('.').filter(|l| !l.is_empty()) {
        // validated by the configuration: 1..=63 bytes
        let len = label.len().min(63);
        q.push(len as u8);
        q.extend_from_slice(&label.as_bytes()[..len]);
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&1u16.to_be_bytes()); // IN
    q
}

/// What a received datagram is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Not the reply to our query (too short, another id, a query): wait
    /// on.
    Ignore(&'static str),
    /// The reply: its rcode and the answers of the query's type, as text
    /// (`None` when the answer section could not be read).
    Answer {
        /// The response code (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, ...).
        rcode: u8,
        /// The records of the asked type in the answer section.
        answers: Result<Vec<String>, String>,
    },
}

/// Read datagram `buf` as the reply to query `id` of type `qtype`.
pub fn reply(buf: &[u8], id: u16, qtype: u16) -> Reply {
    if buf.len() < HEADER {
        return Reply::Ignore("shorter than a DNS header");
    }
    if u16::from_be_bytes([buf[0], buf[1]]) != id {
        return Reply::Ignore("another id");
    }
    let flags = u16::from_be_bytes([buf[2], buf[3]]);
    if flags & 0x8000 == 0 {
        return Reply::Ignore("not a response");
    }
    Reply::Answer {
        rcode: (flags & 0x000f) as u8,
        answers: answers(buf, qtype),
    }
}

/// The answer section's records of type `qtype`, as text.
fn answers(buf: &[u8], qtype: u16) -> Result<Vec<String>, String> {
    let count = |at: usize| u16::from_be_bytes([buf[at], buf[at + 1]]);
    let (qd, an) = (count(4), count(6));
    let mut at = HEADER;
    for _ in 0..qd {
        at = name(buf, at)?.1;
        at = at
            .checked_add(4)
            .filter(|&e| e <= buf.len())
            .ok_or("truncated question")?;
    }
    let mut out = Vec::new();
    for _ in 0..an {
        at = name(buf, at)?.1;
        let fixed = buf.get(at..at + 10).ok_or("truncated record")?;
        let rtype = u16::from_be_bytes([fixed[0], fixed[1]]);
        let rdlen = usize::from(u16::from_be_bytes([fixed[8], fixed[9]]));
        let start = at + 10;
        let rdata = buf
            .get(start..start + rdlen)
            .ok_or("truncated record data")?;
        at = start + rdlen;
        if rtype == qtype {
            out.push(rdata_text(buf, start, rdata, rtype)?);
        }
    }
    Ok(out)
}

/// One record's data as text: an address, a name (NS, CNAME, PTR; MX's
/// exchange; SOA's primary server) or TXT's strings joined.
fn rdata_text(buf: &[u8], start: usize, rdata: &[u8], rtype: u16) -> Result<String, String> {
    Ok(match rtype {
        1 => {
            let a: [u8; 4] = rdata.try_into().map_err(|_| "an A record is not 4 bytes")?;
            Ipv4Addr::from(a).to_string()
        }
        28 => {
            let a: [u8; 16] = rdata
                .try_into()
                .map_err(|_| "an AAAA record is not 16 bytes")?;
            Ipv6Addr::from(a).to_string()
        }
        2 | 5 | 6 | 12 => name(buf, start)?.0,
        15 => {
            if rdata.len() < 3 {
                return Err("an MX record is too short".into());
            }
            name(buf, start + 2)?.0
        }
        16 => {
            let mut text = Vec::new();
            let mut i = 0;
            while i < rdata.len() {
                let len = usize::from(rdata[i]);
                let s = rdata
                    .get(i + 1..i + 1 + len)
                    .ok_or("a TXT string is truncated")?;
                text.extend_from_slice(s);
                i += 1 + len;
            }
            String::from_utf8_lossy(&text).into_owned()
        }
        _ => format!("{} bytes", rdata.len()),
    })
}

/// The name at `at` (lower case, without the final dot; compression
/// followed) and where the bytes after it start.
fn name(buf: &[u8], mut at: usize) -> Result<(String, usize), String> {
    let mut out = String::new();
    let mut end = None;
    let mut jumps = 0;
    loop {
        let len = *buf.get(at).ok_or("truncated name")?;
        match len & 0xc0 {
            0x00 if len == 0 => {
                return Ok((out, end.unwrap_or(at + 1)));
            }
            0x00 => {
                let l = usize::from(len);
                let label = buf.get(at + 1..at + 1 + l).ok_or("truncated label")?;
                if !out.is_empty() {
                    out.push('.');
                }
                out.extend(label.iter().map(|&b| char::from(b.to_ascii_lowercase())));
                if out.len() > 255 {
                    return Err("a name longer than 255 bytes".into());
                }
                at += 1 + l;
            }
            0xc0 => {
                let low = *buf.get(at + 1).ok_or("truncated pointer")?;
                if end.is_none() {
                    end = Some(at + 2);
                }
                jumps += 1;
                if jumps > MAX_JUMPS {
                    return Err("a compression loop".into());
                }
                at = usize::from(u16::from_be_bytes([len & 0x3f, low]));
            }
            _ => return Err(format!("label type {:#04x}", len & 0xc0)),
        }
    }
}

/// The name of rcode `r`.
pub fn rcode_name(r: u8) -> String {
    match r {
        0 => "NOERROR".into(),
        1 => "FORMERR".into(),
        2 => "SERVFAIL".into(),
        3 => "NXDOMAIN".into(),
        4 => "NOTIMP".into(),
        5 => "REFUSED".into(),
        r => format!("rcode {r}"),
    }
}

/// Whether answer `got` (text of a record of `qtype`) is `want`:
/// addresses compared as addresses, names without case or final dot.
pub fn matches(qtype: u16, got: &str, want: &str) -> bool {
    match qtype {
        1 | 28 => match (got.parse::<IpAddr>(), want.parse::<IpAddr>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        },
        16 => got == want,
        _ => got.eq_ignore_ascii_case(want.strip_suffix('.').unwrap_or(want)),
    }
}

/// Judge a reply: `Ok(detail)` up, `Err(detail)` down, `None`: ignore it.
pub fn judge(
    buf: &[u8],
    id: u16,
    qtype: u16,
    expect: Option<&str>,
) -> Option<Result<String, String>> {
    let (rcode, answers) = match reply(buf, id, qtype) {
        Reply::Ignore(_) => return None,
        Reply::Answer { rcode, answers } => (rcode, answers),
    };
    if rcode != 0 {
        return Some(Err(rcode_name(rcode)));
    }
    let Some(want) = expect else {
        return Some(Ok(match answers {
            Ok(a) => format!("NOERROR, {} answer(s)", a.len()),
            Err(_) => "NOERROR".to_string(),
        }));
    };
    Some(match answers {
        Err(e) => Err(format!("NOERROR but the answers cannot be read: {e}")),
        Ok(a) if a.iter().any(|g| matches(qtype, g, want)) => Ok(format!("NOERROR, answer {want}")),
        Ok(a) if a.is_empty() => Err(format!("NOERROR without an answer (want {want})")),
        Ok(a) => Err(format!("answer {} (want {want})", a.join(", "))),
    })
}

/// Send the query from a socket of our own (bound if asked) and wait for
/// its reply; datagrams that are not it are passed over.
pub async fn probe(
    target: SocketAddr,
    bind: Option<SocketAddr>,
    qtype: u16,
    name: &str,
    expect: Option<&str>,
) -> Result<String, String> {
    let local = bind.unwrap_or(match target {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    });
    let socket = tokio::net::UdpSocket::bind(local)
        .await
        .map_err(|e| format!("cannot bind {local}: {e}"))?;
    // connected: only the server's datagrams are read, and a port
    // unreachable fails the check at once
    socket
        .connect(target)
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let id = query_id();
    socket
        .send(&query(id, name, qtype))
        .await
        .map_err(|e| format!("send: {}", connect_error(&e)))?;
    let mut buf = vec![0u8; REPLY_MAX];
    loop {
        let n = socket.recv(&mut buf).await.map_err(|e| connect_error(&e))?;
        if let Some(verdict) = judge(&buf[..n], id, qtype, expect) {
            return verdict;
        }
    }
}

/// A query id hard to guess (from the system's random source; the clock's
/// nanoseconds if it fails).
fn query_id() -> u16 {
    let mut b = [0u8; 2];
    if getrandom::getrandom(&mut b).is_err() {
        let ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        b = (ns as u16).to_be_bytes();
    }
    u16::from_be_bytes(b)
}
