//! One connection entry: its lengths and type, its options, the values
//! of its flags and state, its byte offsets, its view and an entry's
//! fields, IPv4 or IPv6 ([`ConnRepr`]).

use crate::net::wire::error::WireError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Length of an IPv4 entry without options (`struct ip_vs_sync_v4`).
pub const CONN_V4_LEN: usize = 36;
/// Length of an IPv6 entry without options (`struct ip_vs_sync_v6`).
pub const CONN_V6_LEN: usize = 72;

/// Entry types (the `type` byte).
pub mod conn_type {
    /// IPv4.
    pub const V4: u8 = 0;
    /// The bit that makes an entry IPv6 (`STYPE_F_INET6`); any other
    /// non-zero type is refused.
    pub const F_INET6: u8 = 1;
}

/// Options after an entry's fixed part: type byte, length byte (1..=255),
/// data.
pub mod opt {
    /// Sequence-adjust data: `in_seq` and `out_seq` (`IPVS_OPT_SEQ_DATA`).
    pub const SEQ_DATA: u8 = 1;
    /// Persistence-engine data, e.g. a SIP Call-ID (`IPVS_OPT_PE_DATA`).
    pub const PE_DATA: u8 = 2;
    /// Persistence-engine name (`IPVS_OPT_PE_NAME`).
    pub const PE_NAME: u8 = 3;
    /// Set in the type of an option a receiver may ignore when it does
    /// not know it (`IPVS_OPT_F_PARAM`); without it an unknown option
    /// makes the entry be dropped.
    pub const F_PARAM: u8 = 1 << 6;
    /// The length of [`SEQ_DATA`]: two `struct ip_vs_seq` of three 32-bit
    /// words (initial sequence, delta, previous delta).
    pub const SEQ_DATA_LEN: usize = 24;
    /// The longest [`PE_NAME`] (`IP_VS_PENAME_MAXLEN`).
    pub const PE_NAME_MAXLEN: usize = 16;
}

/// Connection flags (`IP_VS_CONN_F_*`, include/uapi/linux/ip_vs.h).
pub mod flags {
    /// The forwarding method's bits.
    pub const FWD_MASK: u32 = 0x0007;
    /// NAT (masquerading).
    pub const MASQ: u32 = 0x0000;
    /// Local node.
    pub const LOCALNODE: u32 = 0x0001;
    /// Tunnelling (IPIP).
    pub const TUNNEL: u32 = 0x0002;
    /// Direct routing.
    pub const DROUTE: u32 = 0x0003;
    /// Cache bypass.
    pub const BYPASS: u32 = 0x0004;
    /// Created by sync (a backup sets it on what it learns).
    pub const SYNC: u32 = 0x0020;
    /// Hashed (Linux's sender clears it).
    pub const HASHED: u32 = 0x0040;
    /// No output packets.
    pub const NOOUTPUT: u32 = 0x0080;
    /// Not established.
    pub const INACTIVE: u32 = 0x0100;
    /// Output sequence adjust.
    pub const OUT_SEQ: u32 = 0x0200;
    /// Input sequence adjust.
    pub const IN_SEQ: u32 = 0x0400;
    /// Both sequence-adjust bits.
    pub const SEQ_MASK: u32 = 0x0600;
    /// No client port yet (a persistence template for any port).
    pub const NO_CPORT: u32 = 0x0800;
    /// A persistence template, not a connection.
    pub const TEMPLATE: u32 = 0x1000;
    /// One-packet scheduling (never synced by Linux).
    pub const ONE_PACKET: u32 = 0x2000;
    /// The bits a Linux backup takes from an entry
    /// (`IP_VS_CONN_F_BACKUP_MASK`); it adds [`SYNC`].
    pub const BACKUP_MASK: u32 = FWD_MASK | NOOUTPUT | INACTIVE | SEQ_MASK | NO_CPORT | TEMPLATE;
    /// The bits a Linux backup updates on a connection it already has
    /// (`IP_VS_CONN_F_BACKUP_UPD_MASK`).
    pub const BACKUP_UPD_MASK: u32 = INACTIVE | SEQ_MASK;
}

/// IPVS TCP states as numbered on the wire (`IP_VS_TCP_S_*`,
/// include/net/ip_vs.h).
pub mod tcp_state {
    /// No state.
    pub const NONE: u16 = 0;
    /// Established.
    pub const ESTABLISHED: u16 = 1;
    /// SYN sent.
    pub const SYN_SENT: u16 = 2;
    /// SYN received.
    pub const SYN_RECV: u16 = 3;
    /// FIN wait.
    pub const FIN_WAIT: u16 = 4;
    /// TIME_WAIT.
    pub const TIME_WAIT: u16 = 5;
    /// Closed.
    pub const CLOSE: u16 = 6;
    /// CLOSE_WAIT.
    pub const CLOSE_WAIT: u16 = 7;
    /// LAST_ACK.
    pub const LAST_ACK: u16 = 8;
    /// LISTEN.
    pub const LISTEN: u16 = 9;
    /// SYN/ACK seen.
    pub const SYNACK: u16 = 10;
    /// The number of TCP states (`IP_VS_TCP_S_LAST`): a TCP connection's
    /// state is below it.
    pub const LAST: u16 = 11;
}

/// The number of UDP states (`IP_VS_UDP_S_LAST`: only `NORMAL`, 0).
pub const UDP_STATES: u16 = 1;

/// Byte ranges of an entry (from the entry's first byte).
pub mod conn_field {
    use core::ops::Range;
    /// Type ([`super::conn_type`]).
    pub const TYPE: usize = 0;
    /// IP protocol.
    pub const PROTOCOL: usize = 1;
    /// Entry version (top 4 bits, 0) and size (low 12 bits, options
    /// included, padding not).
    pub const VER_SIZE: Range<usize> = 2..4;
    /// Flags ([`super::flags`]).
    pub const FLAGS: Range<usize> = 4..8;
    /// State ([`super::tcp_state`] for TCP).
    pub const STATE: Range<usize> = 8..10;
    /// Client port.
    pub const CPORT: Range<usize> = 10..12;
    /// Virtual port.
    pub const VPORT: Range<usize> = 12..14;
    /// Destination (real server) port.
    pub const DPORT: Range<usize> = 14..16;
    /// Firewall mark.
    pub const FWMARK: Range<usize> = 16..20;
    /// Timeout in seconds.
    pub const TIMEOUT: Range<usize> = 20..24;
    /// Client address (IPv4 entry).
    pub const CADDR: Range<usize> = 24..28;
    /// Virtual address (IPv4 entry).
    pub const VADDR: Range<usize> = 28..32;
    /// Destination address (IPv4 entry).
    pub const DADDR: Range<usize> = 32..36;
    /// Client address (IPv6 entry, `struct ip_vs_sync_v6`).
    pub const CADDR6: Range<usize> = 24..40;
    /// Virtual address (IPv6 entry).
    pub const VADDR6: Range<usize> = 40..56;
    /// Destination address (IPv6 entry).
    pub const DADDR6: Range<usize> = 56..72;
    /// The size's bits in [`VER_SIZE`].
    pub const SIZE_MASK: u16 = 0x0fff;
    /// The shift of the version in [`VER_SIZE`].
    pub const VER_SHIFT: u32 = 12;
}

view!(
    /// A view of one entry (the buffer starts at its type byte).
    Conn,
    check_len
);

impl<T: AsRef<[u8]>> Conn<T> {
    /// The check `new_checked` makes: the 36 bytes of an IPv4 entry's
    /// fixed part are there (the entry's own rules are [`parse`](super::parse)'s;
    /// an IPv6 entry's addresses need [`CONN_V6_LEN`] bytes: [`Self::check_len6`]).
    pub fn check_len(&self) -> Result<(), WireError> {
        if self.buffer.as_ref().len() < CONN_V4_LEN {
            return Err(WireError::Truncated);
        }
        Ok(())
    }
    /// The 72 bytes of an IPv6 entry's fixed part are there.
    pub fn check_len6(&self) -> Result<(), WireError> {
        if self.buffer.as_ref().len() < CONN_V6_LEN {
            return Err(WireError::Truncated);
        }
        Ok(())
    }
    /// The entry's size (low 12 bits of the version/size word).
    pub fn size(&self) -> usize {
        (self.ver_size() & conn_field::SIZE_MASK) as usize
    }
    /// The entry's version (top 4 bits of the version/size word; 0).
    pub fn entry_version(&self) -> u8 {
        (self.ver_size() >> conn_field::VER_SHIFT) as u8
    }
}

accessors! {
    Conn;
    /// Entry type.
    conn_type, set_conn_type: u8 = conn_field::TYPE;
    /// IP protocol.
    protocol, set_protocol: u8 = conn_field::PROTOCOL;
    /// Version and size word as stored.
    ver_size, set_ver_size: u16 = conn_field::VER_SIZE;
    /// Flags.
    flags, set_flags: u32 = conn_field::FLAGS;
    /// State.
    state, set_state: u16 = conn_field::STATE;
    /// Client port.
    cport, set_cport: u16 = conn_field::CPORT;
    /// Virtual port.
    vport, set_vport: u16 = conn_field::VPORT;
    /// Destination port.
    dport, set_dport: u16 = conn_field::DPORT;
    /// Firewall mark.
    fwmark, set_fwmark: u32 = conn_field::FWMARK;
    /// Timeout in seconds.
    timeout, set_timeout: u32 = conn_field::TIMEOUT;
    /// Client address (host order).
    caddr, set_caddr: u32 = conn_field::CADDR;
    /// Virtual address (host order).
    vaddr, set_vaddr: u32 = conn_field::VADDR;
    /// Destination address (host order).
    daddr, set_daddr: u32 = conn_field::DADDR;
    /// Client address of an IPv6 entry (host order; [`Self::check_len6`]).
    caddr6, set_caddr6: u128 = conn_field::CADDR6;
    /// Virtual address of an IPv6 entry.
    vaddr6, set_vaddr6: u128 = conn_field::VADDR6;
    /// Destination address of an IPv6 entry.
    daddr6, set_daddr6: u128 = conn_field::DADDR6;
}

/// One connection entry, IPv4 (type 0) or IPv6 (type 1), as sent and
/// received. The entry is IPv6 when any of its addresses is (an IPv4 one
/// beside them is then written IPv4-mapped); received, all three are of
/// the entry's family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnRepr {
    /// IP protocol (6 TCP, 17 UDP).
    pub protocol: u8,
    /// Flags ([`flags`]), as on the wire.
    pub flags: u32,
    /// State ([`tcp_state`] for TCP, 0 for UDP).
    pub state: u16,
    /// Client port.
    pub cport: u16,
    /// Virtual port.
    pub vport: u16,
    /// Destination (real server) port.
    pub dport: u16,
    /// Firewall mark (0 without one).
    pub fwmark: u32,
    /// Timeout in seconds (Linux sends `cp->timeout / HZ`; 0 asks the
    /// receiver for its default of the state).
    pub timeout: u32,
    /// Client address.
    pub caddr: IpAddr,
    /// Virtual address.
    pub vaddr: IpAddr,
    /// Destination (real server) address.
    pub daddr: IpAddr,
}

/// `a` as an IPv6 address (IPv4-mapped when IPv4).
fn v6_of(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u128::from(a.to_ipv6_mapped()),
        IpAddr::V6(a) => u128::from(a),
    }
}

impl ConnRepr {
    /// Whether the entry is written as IPv6 (any address is IPv6).
    pub fn is_ipv6(&self) -> bool {
        self.caddr.is_ipv6() || self.vaddr.is_ipv6() || self.daddr.is_ipv6()
    }

    /// The entry's length without options: [`CONN_V4_LEN`] or [`CONN_V6_LEN`].
    pub fn entry_len(&self) -> usize {
        if self.is_ipv6() {
            CONN_V6_LEN
        } else {
            CONN_V4_LEN
        }
    }

    /// The fields of an entry: IPv6 when its type has
    /// [`conn_type::F_INET6`] (and the view holds [`CONN_V6_LEN`] bytes;
    /// [`parse`](super::parse) checks that), else IPv4 (its size is not
    /// looked at).
    pub fn parse<T: AsRef<[u8]>>(c: &Conn<T>) -> ConnRepr {
        let (caddr, vaddr, daddr) =
            if c.conn_type() & conn_type::F_INET6 != 0 && c.check_len6().is_ok() {
                (
                    IpAddr::V6(Ipv6Addr::from(c.caddr6())),
                    IpAddr::V6(Ipv6Addr::from(c.vaddr6())),
                    IpAddr::V6(Ipv6Addr::from(c.daddr6())),
                )
            } else {
                (
                    IpAddr::V4(Ipv4Addr::from(c.caddr())),
                    IpAddr::V4(Ipv4Addr::from(c.vaddr())),
                    IpAddr::V4(Ipv4Addr::from(c.daddr())),
                )
            };
        ConnRepr {
            protocol: c.protocol(),
            flags: c.flags(),
            state: c.state(),
            cport: c.cport(),
            vport: c.vport(),
            dport: c.dport(),
            fwmark: c.fwmark(),
            timeout: c.timeout(),
            caddr,
            vaddr,
            daddr,
        }
    }

    /// Write the entry without options: type 0, size 36 for IPv4; type 1,
    /// size 72 for IPv6; version 0 (nothing is written to a buffer shorter
    /// than [`Self::entry_len`]).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, c: &mut Conn<T>) {
        let v6 = self.is_ipv6();
        if c.check_len().is_err() || (v6 && c.check_len6().is_err()) {
            return;
        }
        c.set_conn_type(if v6 {
            conn_type::F_INET6
        } else {
            conn_type::V4
        });
        c.set_protocol(self.protocol);
        c.set_ver_size(self.entry_len() as u16);
        c.set_flags(self.flags);
        c.set_state(self.state);
        c.set_cport(self.cport);
        c.set_vport(self.vport);
        c.set_dport(self.dport);
        c.set_fwmark(self.fwmark);
        c.set_timeout(self.timeout);
        match (self.caddr, self.vaddr, self.daddr) {
            (IpAddr::V4(ca), IpAddr::V4(va), IpAddr::V4(da)) => {
                c.set_caddr(ca.into());
                c.set_vaddr(va.into());
                c.set_daddr(da.into());
            }
            (ca, va, da) => {
                c.set_caddr6(v6_of(ca));
                c.set_vaddr6(v6_of(va));
                c.set_daddr6(v6_of(da));
            }
        }
    }
}
