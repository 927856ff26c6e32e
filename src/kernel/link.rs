//! Links and their IPv4 and IPv6 addresses over rtnetlink
//! (`NETLINK_ROUTE`), with a synchronous socket: what `ip link set` and
//! `ip addr add/del` do, without running `ip`.
//!
//! Every request asks for the kernel's acknowledgement (`NLM_F_ACK`) and
//! waits for it; a refusal becomes a [`KernelError::Netlink`] carrying the
//! errno's text and, when the kernel sent one, its extended-ack message.

use super::error::{printable, KernelError};
use super::netns::Netns;
use netlink_packet_core::{
    NetlinkBuffer, NetlinkMessage, NetlinkPayload, NlasIterator, NLMSG_ALIGNTO, NLM_F_ACK,
    NLM_F_ACK_TLVS, NLM_F_CAPPED, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL, NLM_F_REQUEST,
};
use netlink_packet_route::address::{
    AddressAttribute, AddressFlags, AddressHeaderFlags, AddressMessage, AddressScope,
};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::AsRawFd;

pub use dirigo_config::names::IFNAMSIZ;

/// The extended-ack attribute holding the kernel's message (`NLMSGERR_ATTR_MSG`).
const NLMSGERR_ATTR_MSG: u16 = 1;

/// The length of a netlink message header (what a capped error echoes).
const NLMSG_HDRLEN: usize = 16;

/// What the kernel reports about a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// The interface index (in the socket's namespace).
    pub index: u32,
    /// Its name.
    pub name: String,
    /// Its hardware address, when it has a 6-byte one.
    pub mac: Option<[u8; 6]>,
    /// Its MTU.
    pub mtu: u32,
    /// Administratively up (`IFF_UP`).
    pub up: bool,
    /// The carrier is up (`IFF_LOWER_UP`).
    pub lower_up: bool,
}

/// An IPv6 address of a link, as the kernel reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr6 {
    /// The address.
    pub addr: Ipv6Addr,
    /// Its prefix length.
    pub prefix_len: u8,
    /// Added without duplicate address detection (`IFA_F_NODAD`).
    pub nodad: bool,
}

/// One address of an `RTM_GETADDR` dump.
struct Dumped {
    addr: IpAddr,
    prefix_len: u8,
    nodad: bool,
}

/// An rtnetlink socket, bound in the network namespace of the thread that
/// opened it (see [`Rtnl::open_in`] for another namespace). Interface
/// indexes are those of that namespace.
#[derive(Debug)]
pub struct Rtnl {
    socket: Socket,
    /// The last request's sequence number.
    seq: u32,
}

/// Who a request is about and what it attempts, for its errors.
pub(super) struct Op {
    target: String,
    what: String,
}

impl Op {
    pub(super) fn new(target: impl Into<String>, what: impl Into<String>) -> Op {
        Op {
            target: target.into(),
            what: what.into(),
        }
    }

    pub(super) fn failed(&self, err: io::Error, extack: Option<String>) -> KernelError {
        KernelError::Netlink {
            target: self.target.clone(),
            what: self.what.clone(),
            err,
            extack,
        }
    }

    pub(super) fn malformed(&self, why: impl ToString) -> KernelError {
        KernelError::Reply {
            target: self.target.clone(),
            what: self.what.clone(),
            why: why.to_string(),
        }
    }
}

impl Rtnl {
    /// A `NETLINK_ROUTE` socket in the calling thread's network namespace,
    /// asking for extended acks (the kernel's own words with a refusal).
    pub fn open() -> Result<Rtnl, KernelError> {
        let op = Op::new("netlink", "cannot open a NETLINK_ROUTE socket");
        let mut socket = Socket::new(NETLINK_ROUTE).map_err(|e| op.failed(e, None))?;
        socket.bind_auto().map_err(|e| op.failed(e, None))?;
        // Best effort: without them errors still carry their errno.
        let _ = socket.set_ext_ack(true);
        let _ = socket.set_cap_ack(true);
        Ok(Rtnl { socket, seq: 0 })
    }

    /// A socket bound in `ns` (opened on a thread that entered it); usable
    /// from any thread afterwards.
    pub fn open_in(ns: &Netns) -> Result<Rtnl, KernelError> {
        ns.run(Rtnl::open)?
    }

    /// The index of the interface `name` (`RTM_GETLINK` by name); `None`
    /// when there is none.
    pub fn index_of(&mut self, name: &str) -> Result<Option<u32>, KernelError> {
        valid_ifname(name).map_err(|why| KernelError::InvalidName {
            kind: "interface",
            name: printable(name),
            why,
        })?;
        let op = Op::new(
            format!("interface '{name}'"),
            "cannot look the interface up",
        );
        let mut msg = LinkMessage::default();
        msg.attributes.push(LinkAttribute::IfName(name.to_string()));
        match self.exchange(&op, RouteNetlinkMessage::GetLink(msg), NLM_F_ACK) {
            Ok(replies) => replies
                .into_iter()
                .find_map(|r| match r {
                    RouteNetlinkMessage::NewLink(l) => Some(Some(l.header.index)),
                    _ => None,
                })
                .ok_or_else(|| op.malformed("no link in the answer")),
            Err(e) if e.errno() == Some(libc::ENODEV) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Set the link's hardware address.
    pub fn set_mac(&mut self, index: u32, mac: [u8; 6]) -> Result<(), KernelError> {
        self.set_link(index, format!("cannot set MAC {}", fmt_mac(mac)), |m| {
            m.attributes.push(LinkAttribute::Address(mac.to_vec()))
        })
    }

    /// Set the link's MTU.
    pub fn set_mtu(&mut self, index: u32, mtu: u32) -> Result<(), KernelError> {
        self.set_link(index, format!("cannot set MTU {mtu}"), |m| {
            m.attributes.push(LinkAttribute::Mtu(mtu))
        })
    }

    /// Bring the link up or down (`IFF_UP`).
    pub fn set_up(&mut self, index: u32, up: bool) -> Result<(), KernelError> {
        let what = if up {
            "cannot bring it up"
        } else {
            "cannot bring it down"
        };
        self.set_link(index, what.to_string(), |m| {
            m.header.flags = if up {
                LinkFlags::Up
            } else {
                LinkFlags::empty()
            };
            m.header.change_mask = LinkFlags::Up;
        })
    }

    /// Move the link into `ns` (`IFLA_NET_NS_FD`). It leaves this socket's
    /// namespace: look it up again by name there (with an [`Rtnl`] opened
    /// in `ns`), since its index may change on the way. A link of the same
    /// name in `ns` makes this fail (`File exists`).
    pub fn set_netns(&mut self, index: u32, ns: &Netns) -> Result<(), KernelError> {
        let fd = ns.fd().as_raw_fd();
        self.set_link(
            index,
            format!("cannot move it into netns '{}'", printable(ns.name())),
            |m| m.attributes.push(LinkAttribute::NetNsFd(fd)),
        )
    }

    /// Add `addr/prefix_len` to the link. An IPv4 address gets its
    /// broadcast address (as `ip addr add ... brd +` sets it; none for /31
    /// and /32); an IPv6 one is added `nodad` (`IFA_F_NODAD`: usable at
    /// once, no duplicate address detection; dirigo answers for it on the
    /// wire). An address the link already has, with the same prefix, is
    /// not an error.
    pub fn add_addr(
        &mut self,
        index: u32,
        addr: impl Into<IpAddr>,
        prefix_len: u8,
    ) -> Result<(), KernelError> {
        let addr = addr.into();
        let op = self.link_op(index, format!("cannot add address {addr}/{prefix_len}"));
        let mut msg = addr_message(index, addr, prefix_len);
        match addr {
            IpAddr::V4(a) => {
                if let Some(brd) = broadcast(a, prefix_len) {
                    msg.attributes.push(AddressAttribute::Broadcast(brd));
                }
            }
            IpAddr::V6(_) => msg.header.flags = AddressHeaderFlags::Nodad,
        }
        let flags = NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
        match self.exchange(&op, RouteNetlinkMessage::NewAddress(msg), flags) {
            Err(e) if e.errno() == Some(libc::EEXIST) => Ok(()),
            r => r.map(drop).map_err(|e| self.named(index, e)),
        }
    }

    /// Remove `addr/prefix_len` from the link; an error (`Cannot assign
    /// requested address`) when it does not have it.
    pub fn del_addr(
        &mut self,
        index: u32,
        addr: impl Into<IpAddr>,
        prefix_len: u8,
    ) -> Result<(), KernelError> {
        let addr = addr.into();
        let op = self.link_op(index, format!("cannot remove address {addr}/{prefix_len}"));
        let msg = addr_message(index, addr, prefix_len);
        self.exchange(&op, RouteNetlinkMessage::DelAddress(msg), NLM_F_ACK)
            .map(drop)
            .map_err(|e| self.named(index, e))
    }

    /// The link's name, MAC, MTU and flags (`RTM_GETLINK` by index).
    pub fn link_info(&mut self, index: u32) -> Result<LinkInfo, KernelError> {
        let op = self.link_op(index, "cannot read the link");
        let mut msg = LinkMessage::default();
        msg.header.index = index;
        let replies = self.exchange(&op, RouteNetlinkMessage::GetLink(msg), NLM_F_ACK)?;
        let link = replies
            .into_iter()
            .find_map(|r| match r {
                RouteNetlinkMessage::NewLink(l) if l.header.index == index => Some(l),
                _ => None,
            })
            .ok_or_else(|| op.malformed("no link in the answer"))?;
        let mut info = LinkInfo {
            index,
            name: String::new(),
            mac: None,
            mtu: 0,
            up: link.header.flags.contains(LinkFlags::Up),
            lower_up: link.header.flags.contains(LinkFlags::LowerUp),
        };
        for attr in link.attributes {
            match attr {
                LinkAttribute::IfName(n) => info.name = n,
                LinkAttribute::Address(a) => info.mac = a.try_into().ok(),
                LinkAttribute::Mtu(m) => info.mtu = m,
                _ => {}
            }
        }
        Ok(info)
    }

    /// The link's IPv4 addresses with their prefix lengths, in the kernel's
    /// order (primary addresses first). Empty for an index that does not
    /// exist.
    pub fn addrs(&mut self, index: u32) -> Result<Vec<(Ipv4Addr, u8)>, KernelError> {
        Ok(self
            .dump_addrs(index, AddressFamily::Inet)?
            .into_iter()
            .filter_map(|a| match a.addr {
                IpAddr::V4(v) => Some((v, a.prefix_len)),
                IpAddr::V6(_) => None,
            })
            .collect())
    }

    /// The link's IPv6 addresses (its link-local one included), in the
    /// kernel's order. Empty for an index that does not exist.
    pub fn addrs6(&mut self, index: u32) -> Result<Vec<Addr6>, KernelError> {
        Ok(self
            .dump_addrs(index, AddressFamily::Inet6)?
            .into_iter()
            .filter_map(|a| match a.addr {
                IpAddr::V6(addr) => Some(Addr6 {
                    addr,
                    prefix_len: a.prefix_len,
                    nodad: a.nodad,
                }),
                IpAddr::V4(_) => None,
            })
            .collect())
    }

    /// The link's addresses of `family` (`RTM_GETADDR` dump).
    fn dump_addrs(
        &mut self,
        index: u32,
        family: AddressFamily,
    ) -> Result<Vec<Dumped>, KernelError> {
        let op = self.link_op(index, "cannot list addresses");
        let mut msg = AddressMessage::default();
        msg.header.family = family;
        msg.header.index = index;
        let replies = self.exchange(&op, RouteNetlinkMessage::GetAddress(msg), NLM_F_DUMP)?;
        let mut out = Vec::new();
        for r in replies {
            let RouteNetlinkMessage::NewAddress(a) = r else {
                continue;
            };
            if a.header.index != index || a.header.family != family {
                continue;
            }
            let (mut local, mut address) = (None, None);
            let mut nodad = a.header.flags.contains(AddressHeaderFlags::Nodad);
            for attr in a.attributes {
                match attr {
                    AddressAttribute::Local(v) => local = Some(v),
                    AddressAttribute::Address(v) => address = Some(v),
                    AddressAttribute::Flags(f) => nodad = f.contains(AddressFlags::Nodad),
                    _ => {}
                }
            }
            if let Some(addr) = local.or(address) {
                out.push(Dumped {
                    addr,
                    prefix_len: a.header.prefix_len,
                    nodad,
                });
            }
        }
        Ok(out)
    }

    /// An `RTM_SETLINK` on `index`, built by `build`.
    fn set_link(
        &mut self,
        index: u32,
        what: String,
        build: impl FnOnce(&mut LinkMessage),
    ) -> Result<(), KernelError> {
        let op = self.link_op(index, what);
        let mut msg = LinkMessage::default();
        msg.header.index = index;
        build(&mut msg);
        self.exchange(&op, RouteNetlinkMessage::SetLink(msg), NLM_F_ACK)
            .map(drop)
            .map_err(|e| self.named(index, e))
    }

    /// The [`Op`] of a request about link `index`.
    fn link_op(&self, index: u32, what: impl Into<String>) -> Op {
        Op::new(format!("link {index}"), what)
    }

    /// `e` with its target named `interface 'NAME' (index N)` when the
    /// link can still be found (a failed request names only the index).
    fn named(&mut self, index: u32, mut e: KernelError) -> KernelError {
        if let KernelError::Netlink { target, .. } = &mut e {
            if let Ok(info) = self.link_info(index) {
                *target = format!("interface '{}' (index {index})", printable(&info.name));
            } else {
                *target = format!("link index {index}");
            }
        }
        e
    }

    /// Send `msg` with `NLM_F_REQUEST | flags` and collect the answers
    /// until the acknowledgement (or, for a dump, `NLMSG_DONE`); a negative
    /// code is the request's error. Answers to earlier requests (another
    /// sequence number) are skipped.
    pub(super) fn exchange(
        &mut self,
        op: &Op,
        msg: RouteNetlinkMessage,
        flags: u16,
    ) -> Result<Vec<RouteNetlinkMessage>, KernelError> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let mut req = NetlinkMessage::from(msg);
        req.header.flags = NLM_F_REQUEST | flags;
        req.header.sequence_number = seq;
        req.finalize();
        let mut buf = vec![0; req.buffer_len()];
        req.serialize(&mut buf);
        self.socket
            .send_to(&buf, &SocketAddr::new(0, 0), 0)
            .map_err(|e| op.failed(e, None))?;

        let mut answers = Vec::new();
        loop {
            let (data, _) = self
                .socket
                .recv_from_full()
                .map_err(|e| op.failed(e, None))?;
            let mut rest = &data[..];
            while !rest.is_empty() {
                let header = NetlinkBuffer::new_checked(rest).map_err(|e| op.malformed(e))?;
                let len = header.length() as usize;
                let this_seq = header.sequence_number();
                let one = &rest[..len];
                rest = rest.get(align(len)..).unwrap_or_default();
                if this_seq != seq {
                    continue;
                }
                let answer = NetlinkMessage::<RouteNetlinkMessage>::deserialize(one)
                    .map_err(|e| op.malformed(e))?;
                match answer.payload {
                    NetlinkPayload::InnerMessage(m) => answers.push(m),
                    NetlinkPayload::Error(e) => match e.code {
                        None => return Ok(answers),
                        Some(code) => {
                            let extack = extack_message(answer.header.flags, &e.header);
                            return Err(op.failed(errno(code.get()), extack));
                        }
                    },
                    NetlinkPayload::Done(d) if d.code < 0 => {
                        return Err(op.failed(errno(d.code), None));
                    }
                    NetlinkPayload::Done(_) => return Ok(answers),
                    NetlinkPayload::Overrun(_) => {
                        return Err(op.malformed("the kernel reported an overrun"));
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The `io::Error` of a netlink error code (a negative errno).
fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code.saturating_neg())
}

/// A netlink message length rounded up to `NLMSG_ALIGNTO`.
fn align(len: usize) -> usize {
    let a = NLMSG_ALIGNTO as usize;
    len.div_ceil(a) * a
}

/// The kernel's extended-ack message in an `NLMSG_ERROR`: `payload` is what
/// follows the error code (the echoed request, whole or only its header
/// when `NLM_F_CAPPED`, then the TLVs when `NLM_F_ACK_TLVS`).
pub(super) fn extack_message(flags: u16, payload: &[u8]) -> Option<String> {
    if flags & NLM_F_ACK_TLVS == 0 {
        return None;
    }
    let echoed = if flags & NLM_F_CAPPED != 0 {
        NLMSG_HDRLEN
    } else {
        let len = payload.get(..4)?;
        align(u32::from_ne_bytes(len.try_into().ok()?) as usize)
    };
    for nla in NlasIterator::new(payload.get(echoed..)?) {
        let nla = nla.ok()?;
        if nla.kind() == NLMSGERR_ATTR_MSG {
            let text = nla.value();
            let text = text.split(|&b| b == 0).next().unwrap_or_default();
            let text = String::from_utf8_lossy(text).trim().to_string();
            return (!text.is_empty()).then_some(text);
        }
    }
    None
}

/// The request body of `ip addr add/del ADDR/LEN dev INDEX`.
fn addr_message(index: u32, addr: IpAddr, prefix_len: u8) -> AddressMessage {
    let mut msg = AddressMessage::default();
    msg.header.family = match addr {
        IpAddr::V4(_) => AddressFamily::Inet,
        IpAddr::V6(_) => AddressFamily::Inet6,
    };
    msg.header.prefix_len = prefix_len;
    msg.header.scope = AddressScope::Universe;
    msg.header.index = index;
    msg.attributes.push(AddressAttribute::Local(addr));
    msg.attributes.push(AddressAttribute::Address(addr));
    msg
}

/// The broadcast address of `addr/prefix_len` (`brd +`): none for /31 and
/// /32 (and for a prefix over 32, which the kernel refuses anyway).
pub(super) fn broadcast(addr: Ipv4Addr, prefix_len: u8) -> Option<Ipv4Addr> {
    if prefix_len >= 31 {
        return None;
    }
    let host = u32::MAX >> prefix_len;
    Some(Ipv4Addr::from(u32::from(addr) | host))
}

/// `aa:bb:cc:dd:ee:ff`.
fn fmt_mac(mac: [u8; 6]) -> String {
    mac.map(|b| format!("{b:02x}")).join(":")
}

pub use dirigo_config::names::valid_ifname;

/// A MAC for the kernel side of a port, derived from the port's `mac`:
/// unicast (bit 0x01 of the first byte cleared), locally administered (bit
/// 0x02 set), and never equal to `mac`, even when `mac` is already a
/// locally administered unicast address: the top bit of the fourth byte is
/// flipped as well. That bit (rather than the last one) keeps the result
/// away from the neighbours of `mac` that sequential allocators hand out.
pub fn locally_administered(mac: [u8; 6]) -> [u8; 6] {
    let mut out = mac;
    out[0] = (mac[0] | 0x02) & !0x01;
    out[3] ^= 0x80;
    out
}
