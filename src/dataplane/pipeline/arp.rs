//! The pipeline's ARP side: requests for our addresses answered in place,
//! what a request's sender or a reply teaches handed to the control
//! thread's neighbour table ([`Event::Learn`]), a looped frame reported, and
//! the events queue every side of the pipeline tells the control thread
//! through.

use super::state::WorkerPipeline;
use crate::dataplane::exception::COPY_LEN;
use crate::dataplane::shared::Event;
use crate::dataplane::stats::Count;
use crate::dataplane::verdict::Verdict;
use crate::net::arp::{arp_input, ArpAction, ArpIgnore};
use crate::net::buf::PacketBuf;

impl WorkerPipeline {
    #[inline]
    pub(super) fn arp<B: PacketBuf>(&mut self, buf: &mut B, port: u16, now_ns: u64) -> Verdict {
        let Some(pi) = self.net.port(port) else {
            return Verdict::Drop;
        };
        let (mac, kernel) = (pi.mac, pi.kernel);
        // the request as it arrived, in case the kernel must see it too
        let mut orig = [0u8; COPY_LEN];
        let orig_len = if kernel && buf.data().len() <= COPY_LEN {
            orig[..buf.data().len()].copy_from_slice(buf.data());
            buf.data().len()
        } else {
            0
        };
        match arp_input(buf.data_mut(), mac, self.net.addrs()) {
            ArpAction::Reply { learn, target } => {
                if let Some(s) = learn {
                    self.learn(s.ip, s.mac, port, true);
                }
                // a request for one of the port's addresses: the kernel
                // learns the requester from it, as it would on the wire
                if orig_len > 0
                    && self.net.addrs().port_of(target) == Some(port)
                    && !self.kernel_copies.push(port, &orig[..orig_len])
                {
                    self.counters.own[Count::KernelCopyLost] += 1;
                }
                self.counters.own[Count::ArpReplied] += 1;
                Verdict::Tx(port)
            }
            ArpAction::Learn {
                sender,
                create,
                reply,
            } => {
                self.learn(sender.ip, sender.mac, port, create);
                if reply && kernel {
                    // every ARP reply, so the kernel's neighbour table
                    // stays right (its own requests are answered here)
                    return Verdict::Kernel(port);
                }
                self.counters.own[Count::ArpTaken] += 1;
                Verdict::Drop
            }
            ArpAction::Ignore(r) => {
                if r == ArpIgnore::Looped {
                    self.looped(port, now_ns);
                }
                self.counters.arp[r] += 1;
                Verdict::Drop
            }
        }
    }

    /// An ARP frame came back with this port's own MAC as sender: tell the
    /// control side, at most once a second per port, so it can warn.
    #[cold]
    fn looped(&mut self, port: u16, now_ns: u64) {
        let Some(last) = self.looped_at.get_mut(port as usize) else {
            return;
        };
        if *last == 0 || now_ns.saturating_sub(*last) >= 1_000_000_000 {
            *last = now_ns.max(1);
            self.event(Event::Looped { port });
        }
    }

    pub(super) fn learn(&mut self, ip: u32, mac: [u8; 6], port: u16, create: bool) {
        self.counters.own[Count::ArpLearned] += 1;
        self.event(Event::Learn {
            ip,
            mac,
            port,
            create,
        });
    }

    /// Tell the control thread; a full queue is a counted loss, never a
    /// wait (an unresolved next hop is asked for again by its next packet).
    #[inline]
    pub(super) fn event(&mut self, ev: Event) {
        if self.shared.events.push(ev).is_err() {
            self.counters.own[Count::EventsLost] += 1;
        }
    }
}
