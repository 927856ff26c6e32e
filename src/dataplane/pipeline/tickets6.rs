//! IPv6 next hops handed to the hold area by ticket.
//!
//! A packet whose IPv6 next hop is being solicited is held as IPv4's are,
//! keyed by its next hop; but a [`Verdict`] is eight bytes (the burst path
//! fills an array of them per burst), too small for a 128-bit address. So
//! the pipeline notes the address here and answers [`Verdict::Hold6`] with
//! the note's number, its ticket; the worker redeems it
//! ([`Pipeline::hop6`]) when it hands the packet to the hold area. A fixed
//! ring of [`TICKETS6`] addresses: a ticket is good until as many more were
//! issued, and the worker redeems a burst's tickets (at most [`BURST`])
//! before it processes the next burst, so none it redeems is ever too old.
//! Issuing one is a store; it allocates nothing.
//!
//! [`Verdict`]: crate::dataplane::verdict::Verdict
//! [`Verdict::Hold6`]: crate::dataplane::verdict::Verdict::Hold6
//! [`Pipeline::hop6`]: crate::dataplane::contract::Pipeline::hop6
//! [`BURST`]: crate::net::buf::BURST

/// Addresses the ring keeps: twice a burst.
pub(super) const TICKETS6: usize = 2 * crate::net::buf::BURST;

/// The ring of IPv6 next hops by ticket (see the module docs).
pub(super) struct Tickets6 {
    hops: [u128; TICKETS6],
    /// Tickets issued so far (wrapping): the next ticket's number.
    issued: u32,
}

impl Tickets6 {
    pub(super) fn new() -> Self {
        Tickets6 {
            hops: [0; TICKETS6],
            issued: 0,
        }
    }

    /// A ticket for next hop `ip`.
    pub(super) fn issue(&mut self, ip: u128) -> u32 {
        let t = self.issued;
        if let Some(h) = self.hops.get_mut(t as usize % TICKETS6) {
            *h = ip;
        }
        self.issued = t.wrapping_add(1);
        t
    }

    /// The next hop of `ticket`, unless [`TICKETS6`] or more were issued
    /// after it (or it was never issued).
    pub(super) fn redeem(&self, ticket: u32) -> Option<u128> {
        let age = self.issued.wrapping_sub(ticket);
        if age == 0 || age as usize > TICKETS6 {
            return None;
        }
        self.hops.get(ticket as usize % TICKETS6).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::{Tickets6, TICKETS6};

    #[test]
    fn a_ticket_is_good_for_the_next_tickets6_issued() {
        let mut t = Tickets6::new();
        assert_eq!(t.redeem(0), None, "not issued yet");
        let first = t.issue(0x2001_0db8 << 96 | 7);
        assert_eq!(t.redeem(first), Some(0x2001_0db8 << 96 | 7));
        assert_eq!(t.redeem(first), Some(0x2001_0db8 << 96 | 7), "twice");
        for i in 1..TICKETS6 as u128 {
            let k = t.issue(i);
            assert_eq!(t.redeem(k), Some(i));
        }
        assert!(t.redeem(first).is_some(), "TICKETS6 - 1 issued after it");
        t.issue(99);
        assert_eq!(t.redeem(first), None, "overwritten: too old");
        assert_eq!(t.redeem(first.wrapping_sub(1)), None);
    }

    #[test]
    fn tickets_wrap() {
        let mut t = Tickets6 {
            hops: [0; TICKETS6],
            issued: u32::MAX - 1,
        };
        let a = t.issue(1);
        let b = t.issue(2);
        let c = t.issue(3);
        assert_eq!((a, b, c), (u32::MAX - 1, u32::MAX, 0));
        assert_eq!(
            [t.redeem(a), t.redeem(b), t.redeem(c)],
            [Some(1), Some(2), Some(3)]
        );
        assert_eq!(t.redeem(1), None, "the next ticket, not issued yet");
    }
}
