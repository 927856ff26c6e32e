//! The tunnel type of a TUN real server, as Linux IPVS has it since 5.3
//! (GUE) and 5.4 (GRE): ipvsadm's `--tun-type ipip|gue|gre`,
//! `--tun-port` and `--tun-nocsum|--tun-csum|--tun-remcsum`, the
//! config file's `tun_type`, `tun_port` and `tun_csum` keys.
//!
//! What each puts in front of the client's packet (after the outer IP
//! header, whose protocol becomes 4/41, 17 or 47):
//!
//! * **ipip**: nothing more (IPv4 in IPv4, IPv6 in IPv6; the default).
//! * **gue**: a UDP header (source port from the inner flow's hash,
//!   destination port `tun_port`), then GUE's 4-byte version 0 header
//!   carrying the inner protocol (4 or 41): 12 bytes.
//! * **gre**: a 4-byte GRE header with the protocol type 0x0800 or
//!   0x86DD; with `csum`, the C bit and 4 bytes more (checksum, reserved).
//!
//! Checksums, as `ip_vs_xmit.c` does for a forwarded packet: GUE's UDP
//! checksum is 0 with `nocsum` (the default; in IPv6 too, as Linux's
//! `udp6_set_csum` writes it, RFC 6935's zero-checksum tunnels) and
//! computed with `csum` or `remcsum`. `remcsum` adds GUE's remote
//! checksum offload option only to a packet whose inner checksum is
//! still to be completed (`CHECKSUM_PARTIAL`, a locally sent one): a
//! forwarded packet's is complete, so Linux writes no option and neither
//! does dirigo, and `remcsum` behaves as `csum`. GRE takes `csum` (the C
//! bit and the checksum); `ipvs_gre_encap` looks at the csum flag only,
//! so GRE with `remcsum` (which ipvsadm accepts) is GRE without a
//! checksum, here as in Linux.

use serde::{Deserialize, Serialize};

/// `--tun-type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum TunType {
    /// IP in IP (the default, and what dirigo always did).
    #[default]
    Ipip = 0,
    /// Generic UDP Encapsulation (UDP port `tun_port`).
    Gue = 1,
    /// Generic Routing Encapsulation (IP protocol 47).
    Gre = 2,
}

/// `--tun-nocsum|--tun-csum|--tun-remcsum` (the tunnel flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum TunCsum {
    /// No checksum (GUE: UDP checksum 0; GRE: no C bit). The default.
    #[default]
    None = 0,
    /// Checksum (GUE: UDP checksum; GRE: the C bit and its checksum).
    Csum = 1,
    /// GUE's remote checksum offload (see the module docs).
    Remcsum = 2,
}

impl TunType {
    /// ipvsadm's word (`--tun-type` and `-L`'s `--tun-info`).
    pub fn name(self) -> &'static str {
        match self {
            TunType::Ipip => "ipip",
            TunType::Gue => "gue",
            TunType::Gre => "gre",
        }
    }
    /// Parse ipvsadm's word.
    pub fn parse(s: &str) -> Option<TunType> {
        match s {
            "ipip" => Some(TunType::Ipip),
            "gue" => Some(TunType::Gue),
            "gre" => Some(TunType::Gre),
            _ => None,
        }
    }
}

impl TunCsum {
    /// ipvsadm's option (`-S`): `--tun-nocsum`, `--tun-csum`,
    /// `--tun-remcsum`.
    pub fn option(self) -> &'static str {
        match self {
            TunCsum::None => "--tun-nocsum",
            TunCsum::Csum => "--tun-csum",
            TunCsum::Remcsum => "--tun-remcsum",
        }
    }
    /// ipvsadm's `--tun-info` word: `-c`, `+c`, `r+c`.
    pub fn info(self) -> &'static str {
        match self {
            TunCsum::None => "-c",
            TunCsum::Csum => "+c",
            TunCsum::Remcsum => "r+c",
        }
    }
}

/// A real server's tunnel: type, GUE port and checksum option (4 bytes,
/// the form the fast path reads per packet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tunnel {
    /// `tun_type` (left out of JSON and TOML when ipip).
    #[serde(default, skip_serializing_if = "is_ipip")]
    pub tun_type: TunType,
    /// `tun_port`: GUE's UDP destination port (0 = unset).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tun_port: u16,
    /// `tun_csum` (left out when none).
    #[serde(default, skip_serializing_if = "is_none")]
    pub tun_csum: TunCsum,
}

fn is_ipip(t: &TunType) -> bool {
    *t == TunType::Ipip
}

fn is_zero(p: &u16) -> bool {
    *p == 0
}

fn is_none(c: &TunCsum) -> bool {
    *c == TunCsum::None
}

/// GUE's outer bytes beyond the IP header: UDP 8 + GUE 4.
pub const GUE_LEN: usize = 8 + 4;

impl Tunnel {
    /// IPIP, no port, no checksum: the default.
    pub const IPIP: Tunnel = Tunnel {
        tun_type: TunType::Ipip,
        tun_port: 0,
        tun_csum: TunCsum::None,
    };

    /// ipvsadm's `--tun-info` column: `ipip`, `gue:PORT:FLAGS`,
    /// `gre:FLAGS`.
    pub fn info(&self) -> String {
        match self.tun_type {
            TunType::Ipip => "ipip".into(),
            TunType::Gue => format!("gue:{}:{}", self.tun_port, self.tun_csum.info()),
            TunType::Gre => format!("gre:{}", self.tun_csum.info()),
        }
    }

    /// ipvsadm's `-S` options: `--tun-type ipip`, `--tun-type gue
    /// --tun-port PORT --tun-*csum`, `--tun-type gre --tun-*csum`.
    pub fn save_options(&self) -> String {
        match self.tun_type {
            TunType::Ipip => "--tun-type ipip".into(),
            TunType::Gue => format!(
                "--tun-type gue --tun-port {} {}",
                self.tun_port,
                self.tun_csum.option()
            ),
            TunType::Gre => format!("--tun-type gre {}", self.tun_csum.option()),
        }
    }

    /// Whether this is the default (plain IPIP, nothing set).
    #[inline(always)]
    pub fn is_default(&self) -> bool {
        *self == Tunnel::IPIP
    }

    /// Whether GUE's UDP checksum is asked for (csum or remcsum).
    #[inline(always)]
    pub fn udp_csum(&self) -> bool {
        self.tun_csum != TunCsum::None
    }

    /// Whether GRE's checksum is asked for (csum only, as Linux).
    #[inline(always)]
    pub fn gre_csum(&self) -> bool {
        self.tun_csum == TunCsum::Csum
    }

    /// The bytes this tunnel puts between the outer IP header and the
    /// inner packet: 0 (IPIP), 12 (GUE), 4 or 8 (GRE, with `csum`).
    #[inline(always)]
    pub fn extra_len(&self) -> usize {
        match self.tun_type {
            TunType::Ipip => 0,
            TunType::Gue => GUE_LEN,
            TunType::Gre if self.gre_csum() => 8,
            TunType::Gre => 4,
        }
    }

    /// Whether this tunnel fits a real server (`tun`: whether it forwards
    /// by TUN), with a one-line reason when not, as ipvsadm 1.31 checks:
    /// tunnel options only on a TUN server, GUE needs its port, a port
    /// only for GUE, no checksum option for IPIP.
    pub fn check(&self, tun: bool) -> Result<(), &'static str> {
        if !tun && !self.is_default() {
            return Err(
                "tunnel options (tun_type, tun_port, tun_csum) are for a TUN (-i) real server only",
            );
        }
        match self.tun_type {
            TunType::Gue if self.tun_port == 0 => {
                Err("a GUE tunnel needs its UDP destination port (tun_port, --tun-port 1..65535)")
            }
            TunType::Gue => Ok(()),
            _ if self.tun_port != 0 => {
                Err("tun_port (--tun-port) is GUE's UDP port: only with tun_type gue")
            }
            TunType::Ipip if self.tun_csum != TunCsum::None => {
                Err("tun_csum (--tun-csum, --tun-remcsum) is for GUE and GRE: IPIP has no checksum")
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(tun_type: TunType, tun_port: u16, tun_csum: TunCsum) -> Tunnel {
        Tunnel {
            tun_type,
            tun_port,
            tun_csum,
        }
    }

    #[test]
    fn lengths_are_linux_ones() {
        assert_eq!(Tunnel::IPIP.extra_len(), 0);
        assert_eq!(t(TunType::Gue, 6080, TunCsum::None).extra_len(), 12);
        assert_eq!(t(TunType::Gue, 6080, TunCsum::Remcsum).extra_len(), 12);
        assert_eq!(t(TunType::Gre, 0, TunCsum::None).extra_len(), 4);
        assert_eq!(t(TunType::Gre, 0, TunCsum::Csum).extra_len(), 8);
        // Linux's GRE looks at the csum flag only
        assert_eq!(t(TunType::Gre, 0, TunCsum::Remcsum).extra_len(), 4);
    }

    #[test]
    fn check_refuses_what_does_not_fit() {
        assert!(Tunnel::IPIP.check(false).is_ok());
        assert!(t(TunType::Gre, 0, TunCsum::None).check(false).is_err());
        assert!(t(TunType::Gue, 0, TunCsum::None).check(true).is_err());
        assert!(t(TunType::Gue, 6080, TunCsum::Remcsum).check(true).is_ok());
        assert!(t(TunType::Gre, 6080, TunCsum::None).check(true).is_err());
        assert!(t(TunType::Gre, 0, TunCsum::Remcsum).check(true).is_ok());
        assert!(t(TunType::Gre, 0, TunCsum::Csum).check(true).is_ok());
        assert!(t(TunType::Ipip, 0, TunCsum::Csum).check(true).is_err());
    }
}
