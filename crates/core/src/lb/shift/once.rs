//! A header inserted once before the client's first byte (the PROXY
//! protocol's), as a state machine with explicit inputs and outputs.
//!
//! The header's place is known from the handshake: it goes at `at`, the
//! client's ISN + 1, and is `len` bytes long. The change is recorded in
//! the client-to-server [`SeqAdj`] when the connection is made, so every
//! client segment after `at` is shifted by `len` whatever order segments
//! come in; what remains to decide is which segments carry the header.
//!
//! ```text
//!             client segment at `at` (ACK, no SYN/RST): prepend
//!   Pending ─────────────────────────────────────────────► Sent
//!      │                                                     │ client segment at `at`:
//!      │ server ack >= at + len                              │ prepend again (it may be lost)
//!      └───────────────────────► Done ◄──────────────────────┘ server ack >= at + len
//!                         client segment at `at`: seq at + len, nothing prepended
//! ```
//!
//! * The handshake's last ACK is a client segment at `at`: the header
//!   rides on it, so a server that speaks first (an SMTP banner) gets it
//!   before anything is asked of it. That ACK carries no data, so the
//!   header alone never exceeds the MSS.
//! * The first data segment, its retransmissions, a FIN without data:
//!   every segment at `at` until the server has acknowledged the whole
//!   header carries it again. The server's TCP keeps one copy of bytes it
//!   gets twice, so the header reaches it exactly once, and a lost header
//!   is resent by the client's own retransmissions (or, when the client
//!   has nothing to send, by its answer to the server's retransmitted
//!   SYN/ACK). A data segment of a full MSS grows by the header: clamp the
//!   MSS announced to the client ([`crate::net::wire::toa::clamp_mss`]).
//! * A segment after `at` (the rest of a split first segment, data that
//!   overtook the first) is shifted, never given the header.
//! * A SYN (at `at` - 1) passes unchanged; an RST never carries the
//!   header, and is shifted once the header may have been received.
//! * A server acknowledgment inside the header acknowledges none of the
//!   client's bytes; one past it moves back by `len`.
//!
//! TCP Fast Open data (on the SYN) is not handled: a service that inserts
//! a header must not let a SYN's data through.

use super::adjust::{Change, Recorded, SeqAdj};
use super::seq::at_or_after;
use crate::net::meta::tcp_flags;

/// Where a header stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not sent yet.
    Pending,
    /// Sent at least once, not acknowledged whole.
    Sent,
    /// Acknowledged whole by the server.
    Done,
}

impl Phase {
    /// As a number (the connection handoff's byte): 0, 1, 2.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// [`Phase::number`]'s inverse.
    pub fn from_number(n: u8) -> Option<Phase> {
        match n {
            0 => Some(Phase::Pending),
            1 => Some(Phase::Sent),
            2 => Some(Phase::Done),
            _ => None,
        }
    }
}

/// A client segment, as the machine needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSeg {
    /// Its sequence number (the client's space).
    pub seq: u32,
    /// Its TCP flags ([`tcp_flags`]).
    pub flags: u8,
}

/// What to do with a client segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Out {
    /// Put the header before the segment's payload (its length grows by
    /// the header's).
    pub prepend: bool,
    /// The sequence number to write (the server's space).
    pub seq: u32,
}

/// The insert-once state of one connection's header: 28 bytes, `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderInsert {
    adj: SeqAdj<1>,
    at: u32,
    len: u16,
    phase: Phase,
}

impl HeaderInsert {
    /// The header of `len` bytes for a connection whose client's SYN had
    /// sequence number `client_isn`. `len` 0 inserts nothing.
    pub fn new(client_isn: u32, len: u16) -> HeaderInsert {
        let at = client_isn.wrapping_add(1);
        let mut adj = SeqAdj::NONE;
        // the first change of an empty record: always recorded
        let r = adj.record(Change {
            pos: at,
            old_len: 0,
            new_len: len,
        });
        debug_assert!(matches!(r, Ok(Recorded::New | Recorded::NoShift)));
        HeaderInsert {
            adj,
            at,
            len,
            phase: if len == 0 {
                Phase::Done
            } else {
                Phase::Pending
            },
        }
    }

    /// The state [`HeaderInsert::new`] makes for `at - 1` and `len`,
    /// moved on to `phase`: a connection's insert taken over from another
    /// process (the connection handoff), which kept these three.
    pub fn resume(at: u32, len: u16, phase: Phase) -> HeaderInsert {
        let mut h = HeaderInsert::new(at.wrapping_sub(1), len);
        if len != 0 {
            h.phase = phase;
        }
        h
    }

    /// Where the header stands.
    #[inline]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The client's sequence number the header goes before.
    #[inline]
    pub fn at(&self) -> u32 {
        self.at
    }

    /// The header's length.
    #[inline]
    pub fn len(&self) -> u16 {
        self.len
    }

    /// True for a header of no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The client-to-server shift (the header's insertion).
    #[inline]
    pub fn adj(&self) -> &SeqAdj<1> {
        &self.adj
    }

    /// A segment from the client: whether it carries the header, and its
    /// sequence number toward the server.
    #[inline]
    pub fn client(&mut self, s: ClientSeg) -> Out {
        let keep = Out {
            prepend: false,
            seq: self.adj.seq(s.seq),
        };
        if s.seq != self.at || s.flags & tcp_flags::SYN != 0 {
            return keep;
        }
        let rst = s.flags & tcp_flags::RST != 0;
        match self.phase {
            Phase::Done => Out {
                prepend: false,
                seq: self.at.wrapping_add(self.len as u32),
            },
            Phase::Pending | Phase::Sent if rst || s.flags & tcp_flags::ACK == 0 => Out {
                prepend: false,
                seq: if self.phase == Phase::Pending {
                    self.at
                } else {
                    self.at.wrapping_add(self.len as u32)
                },
            },
            Phase::Pending | Phase::Sent => {
                self.phase = Phase::Sent;
                Out {
                    prepend: true,
                    seq: self.at,
                }
            }
        }
    }

    /// The acknowledgment number of a server segment with ACK set (the
    /// server's space): notes a header acknowledged whole, and returns
    /// the number toward the client. SACK edges go through
    /// [`HeaderInsert::server_sack_edge`].
    #[inline]
    pub fn server_ack(&mut self, ack: u32) -> u32 {
        if self.phase != Phase::Done && at_or_after(ack, self.at.wrapping_add(self.len as u32)) {
            self.phase = Phase::Done;
        }
        self.adj.ack(ack)
    }

    /// A SACK edge of a server segment, toward the client.
    #[inline]
    pub fn server_sack_edge(&self, edge: u32) -> u32 {
        self.adj.ack(edge)
    }
}
