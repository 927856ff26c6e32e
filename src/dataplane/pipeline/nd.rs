//! The pipeline's IPv6 side: what classify found to be ICMPv6 goes to the
//! responder ([`crate::net::nd`]), which answers NS and echo in place and
//! says what an NS's sender or an NA teaches; the control thread's IPv6
//! neighbour table learns it ([`Event::Learn6`]).
//!
//! A port with a kernel interface also hands its kernel what the kernel's
//! own IPv6 needs and dirigo does not answer: every Neighbour
//! Advertisement (the answers to the kernel's solicitations, which leave
//! through the port; dirigo answers the solicitations for the port's
//! addresses itself, as it answers ARP) and the ICMPv6 addressed to one of
//! the port's addresses that the responder leaves (echo replies to the
//! kernel's pings, errors quoting no TCP/UDP).

use super::state::WorkerPipeline;
use crate::dataplane::shared::Event;
use crate::dataplane::stats::Count;
use crate::dataplane::verdict::Verdict;
use crate::net::buf::PacketBuf;
use crate::net::classify::ipv6_dst;
use crate::net::nd::{nd_input, NdAction, NdIgnore};

impl WorkerPipeline {
    /// An ICMPv6 message (classify's offsets): the NA or echo reply back on
    /// `port`, or a counted drop.
    #[cold]
    pub(super) fn icmpv6<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        port: u16,
        l3_off: u16,
        l4_off: u16,
        len: u16,
    ) -> Verdict {
        let Some(pi) = self.net.port(port) else {
            return Verdict::Drop;
        };
        let (mac, kernel) = (pi.mac, pi.kernel);
        let a = nd_input(
            buf,
            l3_off as usize,
            l4_off as usize,
            len as usize,
            port,
            mac,
            self.net.addrs(),
        );
        match a {
            NdAction::Advert { learn, .. } => {
                if let Some((ip, mac)) = learn {
                    // RFC 4861 §7.2.3: an NS addressed to us creates or
                    // updates its sender's entry
                    self.learn6(ip, mac, port, true);
                }
                self.counters.own[Count::NdAdvertised] += 1;
                Verdict::Tx(port)
            }
            NdAction::Learn { ip, mac, .. } => {
                // an NA updates an entry the control thread has (the one
                // it is resolving, or a known neighbour's new MAC); an
                // advertisement for an address never asked for is not
                // cached (§7.2.5)
                self.learn6(ip, mac, port, false);
                if kernel {
                    // every NA, as every ARP reply: the kernel's own
                    // solicitations left through the port
                    return Verdict::Kernel(port);
                }
                self.counters.own[Count::NdTaken] += 1;
                Verdict::Drop
            }
            NdAction::EchoReply => {
                self.counters.own[Count::Echo6Replied] += 1;
                Verdict::Tx(port)
            }
            NdAction::Ignore(r) => {
                if kernel && self.kernel_wants_icmpv6(buf.data(), port, r) {
                    return Verdict::Kernel(port);
                }
                self.counters.nd[r] += 1;
                Verdict::Drop
            }
        }
    }

    /// Whether the ICMPv6 message the responder left (`why`) is for the
    /// kernel interface of `port` (which has one): an NA without a target
    /// link-layer address (how Linux answers a unicast solicitation, such
    /// as the kernel's reachability probes), and what is addressed to one
    /// of the port's own addresses without being dirigo's (echo replies,
    /// other types, errors).
    #[cold]
    fn kernel_wants_icmpv6(&self, frame: &[u8], port: u16, why: NdIgnore) -> bool {
        match why {
            NdIgnore::AdvertNoMac => true,
            NdIgnore::Other | NdIgnore::Error => {
                ipv6_dst(frame).is_some_and(|d| self.net.addrs().is_port_addr6(port, d))
            }
            _ => false,
        }
    }

    fn learn6(&mut self, ip: u128, mac: [u8; 6], port: u16, create: bool) {
        self.counters.own[Count::NdLearned] += 1;
        self.event(Event::Learn6 {
            ip,
            mac,
            port,
            create,
        });
    }
}
