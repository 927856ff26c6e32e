//! Reading a received message with the checks of Linux's receiver.

use super::conn::{
    conn_type, flags, opt, tcp_state, Conn, ConnRepr, CONN_V4_LEN, CONN_V6_LEN, UDP_STATES,
};
use super::error::SyncError;
use super::header::{Header, HeaderRepr, HEADER_LEN, HEADER_V0_LEN, SYNC_VERSION};
use crate::net::meta::{PROTO_TCP, PROTO_UDP};

/// Parse one received UDP payload: the header's checks (the datagram's
/// length vs the size field, version 1, reserved and spare 0), then its
/// entries, one at a time, from the iterator.
pub fn parse(buf: &[u8]) -> Result<(HeaderRepr, Entries<'_>), SyncError> {
    if buf.len() < HEADER_V0_LEN {
        return Err(SyncError::Truncated);
    }
    let h = Header::new_unchecked(buf);
    if h.size() as usize != buf.len() {
        return Err(SyncError::BadSize);
    }
    // a version 1 message is never shorter than its header; Linux reads
    // anything else as version 0
    if buf.len() < HEADER_LEN || h.reserved() != 0 {
        return Err(SyncError::Version0);
    }
    if h.version() != SYNC_VERSION || h.spare() != 0 {
        return Err(SyncError::BadVersion);
    }
    let header = HeaderRepr {
        syncid: h.syncid(),
        size: h.size(),
        count: h.count(),
        version: h.version(),
    };
    let entries = Entries {
        buf,
        at: HEADER_LEN,
        left: h.count(),
    };
    Ok((header, entries))
}

/// The entries of a message, in order: at most its count. An error that
/// drops the rest of the message is the last item; one that drops only
/// its entry ([`SyncError::skips_entry`]) is followed by the next entry.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    buf: &'a [u8],
    /// Where the next entry starts.
    at: usize,
    /// Entries the count still promises (0 once the iteration ended).
    left: u8,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<ConnRepr, SyncError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let rest = self.buf.get(self.at..).unwrap_or(&[]);
        let Ok(c) = Conn::new_checked(rest) else {
            self.left = 0;
            return Some(Err(SyncError::Truncated));
        };
        let size = c.size();
        let Some(entry) = rest.get(..size) else {
            self.left = 0;
            return Some(Err(SyncError::Truncated));
        };
        if c.entry_version() != 0 {
            self.left = 0;
            return Some(Err(SyncError::BadEntry));
        }
        let r = entry_checks(entry);
        match r {
            Err(e) if !e.skips_entry() => self.left = 0,
            // the next entry starts on a 4-byte boundary
            _ => self.at += (size + 3) & !3,
        }
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}

impl core::iter::FusedIterator for Entries<'_> {}

/// The checks of `ip_vs_proc_sync_conn` on one entry (`entry` is exactly
/// its stated size, at least 36 bytes; an IPv6 one at least 72), in
/// Linux's order.
fn entry_checks(entry: &[u8]) -> Result<ConnRepr, SyncError> {
    let c = Conn::new_unchecked(entry);
    let ty = c.conn_type();
    let fixed = if ty & conn_type::F_INET6 != 0 {
        CONN_V6_LEN
    } else if ty == conn_type::V4 {
        CONN_V4_LEN
    } else {
        return Err(SyncError::BadEntry);
    };
    let options = entry.get(fixed..).ok_or(SyncError::BadEntry)?;
    let pe_data = walk_options(options)?;
    let repr = ConnRepr::parse(&c);
    if repr.flags & flags::TEMPLATE == 0 {
        let states = match repr.protocol {
            PROTO_TCP => tcp_state::LAST,
            PROTO_UDP => UDP_STATES,
            _ => return Err(SyncError::BadProtocol),
        };
        if repr.state >= states {
            return Err(SyncError::BadState);
        }
    }
    if pe_data {
        return Err(SyncError::PeData);
    }
    Ok(repr)
}

/// Walk an entry's options with their bounds and Linux's rules; true when
/// persistence-engine data is among them.
fn walk_options(mut o: &[u8]) -> Result<bool, SyncError> {
    let (mut seq, mut pe_data, mut pe_name) = (false, false, false);
    while !o.is_empty() {
        let [ty, len, ref rest @ ..] = *o else {
            return Err(SyncError::BadOption);
        };
        let len = len as usize;
        if len == 0 || len > rest.len() {
            return Err(SyncError::BadOption);
        }
        let once = |seen: &mut bool| {
            if std::mem::replace(seen, true) {
                Err(SyncError::BadOption)
            } else {
                Ok(())
            }
        };
        match ty & !opt::F_PARAM {
            opt::SEQ_DATA if len != opt::SEQ_DATA_LEN => return Err(SyncError::BadOption),
            opt::SEQ_DATA => once(&mut seq)?,
            // at most 255 (`IP_VS_PEDATA_MAXLEN`), as the length byte is
            opt::PE_DATA => once(&mut pe_data)?,
            opt::PE_NAME if len > opt::PE_NAME_MAXLEN => return Err(SyncError::BadOption),
            opt::PE_NAME => once(&mut pe_name)?,
            _ if ty & opt::F_PARAM == 0 => return Err(SyncError::UnknownOption),
            _ => {}
        }
        o = rest.get(len..).unwrap_or(&[]);
    }
    Ok(pe_data)
}
