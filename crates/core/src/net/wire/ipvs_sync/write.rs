//! Building a message.

use super::conn::{Conn, ConnRepr};
use super::header::{Header, HEADER_LEN, MAX_ENTRIES, SYNC_VERSION};

/// Builds one message in a caller's buffer (no allocation): entries are
/// written as they are pushed, the header by [`MessageWriter::finish`].
#[derive(Debug)]
pub struct MessageWriter<'a> {
    buf: &'a mut [u8],
    /// The most bytes the message may take (0: nothing fits).
    cap: usize,
    /// Bytes used, header included.
    len: usize,
    count: u8,
    syncid: u8,
}

impl<'a> MessageWriter<'a> {
    /// A writer into `buf`, whose length is the largest message the caller
    /// allows (e.g. the MTU less 28). A buffer shorter than the header
    /// gives a writer that accepts nothing; a message is at most 65535
    /// bytes (its size field).
    pub fn new(buf: &'a mut [u8], syncid: u8) -> MessageWriter<'a> {
        let cap = if buf.len() < HEADER_LEN {
            0
        } else {
            buf.len().min(u16::MAX as usize)
        };
        MessageWriter {
            buf,
            cap,
            len: if cap == 0 { 0 } else { HEADER_LEN },
            count: 0,
            syncid,
        }
    }

    /// Append an entry (no options: 36 bytes for IPv4, 72 for IPv6;
    /// [`ConnRepr::entry_len`]); false, and nothing written, when it does not fit
    /// or 255 entries are in already.
    pub fn push(&mut self, c: &ConnRepr) -> bool {
        if self.cap == 0 || self.count as usize >= MAX_ENTRIES {
            return false;
        }
        let end = self.len + c.entry_len();
        if end > self.cap {
            return false;
        }
        let Some(b) = self.buf.get_mut(self.len..end) else {
            return false;
        };
        c.emit(&mut Conn::new_unchecked(b));
        self.len = end;
        self.count += 1;
        true
    }

    /// Entries pushed.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// True before the first entry.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes of the message so far, header included (0 for a writer that
    /// accepts nothing).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Write the header (reserved 0, sync ID, size, count, version 1,
    /// spare 0) and return the message: header and entries.
    pub fn finish(self) -> &'a [u8] {
        let MessageWriter {
            buf,
            len,
            count,
            syncid,
            ..
        } = self;
        let msg = buf.get_mut(..len).unwrap_or(&mut []);
        if len >= HEADER_LEN {
            let mut h = Header::new_unchecked(&mut *msg);
            h.set_reserved(0);
            h.set_syncid(syncid);
            h.set_size(len as u16);
            h.set_count(count);
            h.set_version(SYNC_VERSION);
            h.set_spare(0);
        }
        msg
    }
}
