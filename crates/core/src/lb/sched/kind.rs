//! The scheduling algorithms by their ipvsadm `-s` names ([`SchedKind`]).

/// The scheduling algorithms (ipvsadm `-s` names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedKind {
    /// Round robin.
    Rr,
    /// Weighted round robin (interleaved as IPVS).
    Wrr,
    /// Least connection.
    Lc,
    /// Weighted least connection (the ipvsadm default).
    Wlc,
    /// Shortest expected delay.
    Sed,
    /// Never queue.
    Nq,
    /// Source hashing.
    Sh,
    /// Destination hashing.
    Dh,
    /// Maglev hashing.
    Mh,
    /// Weighted failover.
    Fo,
}

impl SchedKind {
    /// All kinds, in ipvsadm's documentation order.
    pub const ALL: [SchedKind; 10] = [
        SchedKind::Rr,
        SchedKind::Wrr,
        SchedKind::Lc,
        SchedKind::Wlc,
        SchedKind::Sed,
        SchedKind::Nq,
        SchedKind::Sh,
        SchedKind::Dh,
        SchedKind::Mh,
        SchedKind::Fo,
    ];

    /// The ipvsadm name (`rr`, `wlc`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Rr => "rr",
            SchedKind::Wrr => "wrr",
            SchedKind::Lc => "lc",
            SchedKind::Wlc => "wlc",
            SchedKind::Sed => "sed",
            SchedKind::Nq => "nq",
            SchedKind::Sh => "sh",
            SchedKind::Dh => "dh",
            SchedKind::Mh => "mh",
            SchedKind::Fo => "fo",
        }
    }
}

impl std::str::FromStr for SchedKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SchedKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown scheduler '{s}'"))
    }
}
