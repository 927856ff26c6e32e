//! The SMTP check (keepalived SMTP_CHECK): connect, read the 220
//! greeting, send `HELO name`, a 2xx reply is up; then QUIT.
//!
//! The reply parser is sans-IO and bounded: a reply is lines of `DDD-text`
//! ended by a `DDD text` (or `DDD`) line, CRLF or LF; a reply longer than
//! [`REPLY_MAX`] or that does not start with three digits is a failure.

use super::net::{connect, io_text};
use dirigo_config::check::Job;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The longest reply read (greetings and HELO answers are a few lines).
pub const REPLY_MAX: usize = 4096;

/// A complete reply at the start of `buf`: `Some(Ok((code, first line's
/// text, bytes used)))`, `Some(Err(why))` when it is not an SMTP reply,
/// `None` while incomplete.
pub fn reply(buf: &[u8]) -> Option<Result<(u16, String, usize), String>> {
    let mut at = 0;
    let mut code = None;
    let mut text = None;
    while let Some(nl) = buf[at..].iter().position(|&b| b == b'\n') {
        let line = &buf[at..at + nl];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        at += nl + 1;
        let digits = match line.get(..3) {
            Some(d) if d.iter().all(u8::is_ascii_digit) => d,
            _ => return Some(Err(format!("not an SMTP reply: {:?}", shown(line)))),
        };
        let c = digits
            .iter()
            .fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
        if *code.get_or_insert(c) != c {
            return Some(Err(format!(
                "a reply of codes {} and {c}",
                code.unwrap_or(c)
            )));
        }
        if text.is_none() {
            text = Some(shown(line.get(4..).unwrap_or_default()));
        }
        match line.get(3) {
            None | Some(b' ') => return Some(Ok((c, text.unwrap_or_default(), at))),
            Some(b'-') => {}
            Some(_) => return Some(Err(format!("not an SMTP reply: {:?}", shown(line)))),
        }
    }
    if buf.len() >= REPLY_MAX {
        return Some(Err(format!("a reply longer than {REPLY_MAX} bytes")));
    }
    None
}

/// At most 80 characters of `b`, as text.
fn shown(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(80)]).into_owned()
}

/// Read one reply from `s` into `buf` (what follows it is kept).
async fn read_reply<S: AsyncReadExt + Unpin>(
    s: &mut S,
    buf: &mut Vec<u8>,
) -> Result<(u16, String), String> {
    loop {
        if let Some(r) = reply(buf) {
            let (code, text, used) = r?;
            buf.drain(..used);
            return Ok((code, text));
        }
        let mut chunk = [0u8; 1024];
        let room = REPLY_MAX.saturating_sub(buf.len()).clamp(1, chunk.len());
        let n = s.read(&mut chunk[..room]).await.map_err(|e| io_text(&e))?;
        if n == 0 {
            return Err("closed by the server".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The check: greeting 220, HELO answered 2xx; QUIT.
pub async fn probe(job: &Job, helo: &str) -> Result<String, String> {
    let mut s = connect(job).await?;
    let mut buf = Vec::new();
    let (code, text) = read_reply(&mut s, &mut buf)
        .await
        .map_err(|e| format!("greeting: {e}"))?;
    if code != 220 {
        return Err(format!("greeting {code} {text}"));
    }
    s.write_all(format!("HELO {helo}\r\n").as_bytes())
        .await
        .map_err(|e| format!("HELO: {}", io_text(&e)))?;
    let (code, text) = read_reply(&mut s, &mut buf)
        .await
        .map_err(|e| format!("HELO: {e}"))?;
    if !(200..300).contains(&code) {
        return Err(format!("HELO answered {code} {text}"));
    }
    // a courtesy: the verdict is in; the connection ends with a reset
    let _ = s.write_all(b"QUIT\r\n").await;
    Ok(format!("HELO answered {code}"))
}
