//! TCP/UDP connection states and timeouts, as IPVS
//! (`net/netfilter/ipvs/ip_vs_proto_tcp.c`).
//!
//! Three transition tables, selected per packet:
//! * [`Dir::Input`] — client → server, for a connection whose replies pass
//!   through us (NAT) and have been seen at least once;
//! * [`Dir::Output`] — server → client (NAT replies);
//! * [`Dir::InputOnly`] — client → server while no reply has been seen
//!   (always for DR/TUN: IPVS's `IP_VS_CONN_F_NOOUTPUT`).
//!
//! The row is picked by the TCP flags in IPVS's priority order RST, SYN,
//! FIN, ACK; a segment with none of them moves the connection to CLOSE
//! (exactly what IPVS's `set_tcp_state` does).

use crate::lb::spec::Timeouts;
use crate::net::meta::tcp_flags;

/// An IPVS TCP state (UDP connections use [`TcpState::None`] internally and
/// print as `UDP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TcpState {
    /// NONE
    None = 0,
    /// ESTABLISHED (the only "active" state)
    Established = 1,
    /// SYN_SENT
    SynSent = 2,
    /// SYN_RECV
    SynRecv = 3,
    /// FIN_WAIT
    FinWait = 4,
    /// TIME_WAIT
    TimeWait = 5,
    /// CLOSE
    Close = 6,
    /// CLOSE_WAIT
    CloseWait = 7,
    /// LAST_ACK
    LastAck = 8,
    /// LISTEN
    Listen = 9,
    /// SYNACK
    SynAck = 10,
}

/// Number of TCP states.
pub const TCP_STATES: usize = 11;

impl TcpState {
    /// All states in IPVS order (index = discriminant).
    pub const ALL: [TcpState; TCP_STATES] = [
        TcpState::None,
        TcpState::Established,
        TcpState::SynSent,
        TcpState::SynRecv,
        TcpState::FinWait,
        TcpState::TimeWait,
        TcpState::Close,
        TcpState::CloseWait,
        TcpState::LastAck,
        TcpState::Listen,
        TcpState::SynAck,
    ];

    /// From the stored byte (out-of-range values map to CLOSE).
    #[inline]
    pub fn from_u8(v: u8) -> TcpState {
        match Self::ALL.get(v as usize) {
            Some(s) => *s,
            None => TcpState::Close,
        }
    }

    /// The name ipvsadm prints (`ESTABLISHED`, `SYN_RECV`, ...).
    pub fn name(self) -> &'static str {
        [
            "NONE",
            "ESTABLISHED",
            "SYN_SENT",
            "SYN_RECV",
            "FIN_WAIT",
            "TIME_WAIT",
            "CLOSE",
            "CLOSE_WAIT",
            "LAST_ACK",
            "LISTEN",
            "SYNACK",
        ][self as usize]
    }

    /// Whether a connection in this state counts as active (IPVS: only
    /// ESTABLISHED).
    #[inline]
    pub fn is_active(self) -> bool {
        self == TcpState::Established
    }

    /// Embryonic states a table-full eviction may reclaim.
    #[inline]
    pub fn is_embryonic(self) -> bool {
        matches!(
            self,
            TcpState::SynRecv | TcpState::SynSent | TcpState::SynAck
        )
    }
}

/// Which table a packet is judged with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client → server, replies seen (NAT).
    Input,
    /// Server → client (NAT replies).
    Output,
    /// Client → server, no reply seen (DR, TUN, NAT before its first reply).
    InputOnly,
}

use TcpState::{
    Close as CL, CloseWait as CW, Established as ES, FinWait as FW, LastAck as LA, Listen as LI,
    SynRecv as SR, SynSent as SS, TimeWait as TW,
};

type Row = [TcpState; TCP_STATES];

/// IPVS `tcp_states[]`, rows syn, fin, ack, rst per direction; columns are
/// the current state in [`TcpState::ALL`] order.
const INPUT: [Row; 4] = [
    /*syn*/ [SR, ES, ES, SR, SR, SR, SR, SR, SR, SR, SR],
    /*fin*/ [CL, CW, SS, TW, TW, TW, CL, CW, LA, LI, TW],
    /*ack*/ [CL, ES, SS, ES, FW, TW, CL, CW, CL, LI, ES],
    /*rst*/ [CL, CL, CL, SR, CL, CL, CL, CL, LA, LI, SR],
];
const OUTPUT: [Row; 4] = [
    /*syn*/ [SS, ES, SS, SR, SS, SS, SS, SS, SS, LI, SR],
    /*fin*/ [TW, FW, SS, TW, FW, TW, CL, TW, LA, LI, TW],
    /*ack*/ [ES, ES, SS, ES, FW, TW, CL, CW, LA, ES, ES],
    /*rst*/ [CL, CL, SS, CL, CL, TW, CL, CL, CL, CL, CL],
];
const INPUT_ONLY: [Row; 4] = [
    /*syn*/ [SR, ES, ES, SR, SR, SR, SR, SR, SR, SR, SR],
    /*fin*/ [CL, FW, SS, TW, FW, TW, CL, CW, LA, LI, TW],
    /*ack*/ [CL, ES, SS, ES, FW, TW, CL, CW, CL, LI, ES],
    /*rst*/ [CL, CL, CL, SR, CL, CL, CL, CL, LA, LI, CL],
];

/// The next state after a segment with `flags` in direction `dir`.
#[inline(always)]
pub fn tcp_next(cur: TcpState, dir: Dir, flags: u8) -> TcpState {
    // the common case first: an ACK (no SYN/FIN/RST) on an established
    // connection stays ESTABLISHED in every table (the tests check it)
    if cur == TcpState::Established
        && flags & (tcp_flags::RST | tcp_flags::SYN | tcp_flags::FIN | tcp_flags::ACK)
            == tcp_flags::ACK
    {
        return TcpState::Established;
    }
    let row = if flags & tcp_flags::RST != 0 {
        3
    } else if flags & tcp_flags::SYN != 0 {
        0
    } else if flags & tcp_flags::FIN != 0 {
        1
    } else if flags & tcp_flags::ACK != 0 {
        2
    } else {
        return TcpState::Close;
    };
    let table = match dir {
        Dir::Input => &INPUT,
        Dir::Output => &OUTPUT,
        Dir::InputOnly => &INPUT_ONLY,
    };
    table[row][cur as usize]
}

/// Timeouts in milliseconds for every TCP state and for UDP, derived from
/// the IPVS defaults and the run-time [`Timeouts`] (`--set tcp tcpfin udp`
/// change ESTABLISHED, FIN_WAIT and UDP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeoutTable {
    /// Per TCP state, indexed by [`TcpState`] discriminant.
    pub tcp_ms: [u32; TCP_STATES],
    /// UDP.
    pub udp_ms: u32,
}

/// Largest timeout accepted, in seconds (the connection clock is a
/// wrapping 32-bit millisecond tick; timeouts must stay below 2^31 ms).
pub const MAX_TIMEOUT_S: u32 = 2_000_000;

impl TimeoutTable {
    /// IPVS defaults in seconds: NONE 2, ESTABLISHED 900, SYN_SENT 120,
    /// SYN_RECV 60, FIN_WAIT 120, TIME_WAIT 120, CLOSE 10, CLOSE_WAIT 60,
    /// LAST_ACK 30, LISTEN 120, SYNACK 120; UDP 300.
    pub const DEFAULT_TCP_S: [u32; TCP_STATES] = [2, 900, 120, 60, 120, 120, 10, 60, 30, 120, 120];

    /// Build from the configurable timeouts (seconds; 0 keeps the default,
    /// as `ipvsadm --set 0 0 0` does; values are clamped to
    /// [`MAX_TIMEOUT_S`]).
    pub fn new(t: &Timeouts) -> TimeoutTable {
        let mut s = Self::DEFAULT_TCP_S;
        let pick = |v: u32, d: u32| if v == 0 { d } else { v.min(MAX_TIMEOUT_S) };
        s[TcpState::Established as usize] = pick(t.tcp, 900);
        s[TcpState::FinWait as usize] = pick(t.tcpfin, 120);
        let mut tcp_ms = [0u32; TCP_STATES];
        for (o, v) in tcp_ms.iter_mut().zip(s.iter()) {
            *o = v * 1000;
        }
        TimeoutTable {
            tcp_ms,
            udp_ms: pick(t.udp, 300) * 1000,
        }
    }

    /// Timeout for a TCP state.
    #[inline]
    pub fn tcp(&self, s: TcpState) -> u32 {
        self.tcp_ms[s as usize]
    }
}

impl Default for TimeoutTable {
    fn default() -> Self {
        TimeoutTable::new(&Timeouts::default())
    }
}

#[cfg(test)]
mod tests {
    /// The established-ACK shortcut of `tcp_next` gives what the tables
    /// give, for every flag byte with ACK and without SYN/FIN/RST.
    #[test]
    fn established_ack_shortcut_matches_the_tables() {
        use super::*;
        for t in [&INPUT, &OUTPUT, &INPUT_ONLY] {
            assert_eq!(t[2][TcpState::Established as usize], TcpState::Established);
        }
        let es = TcpState::Established as usize;
        for flags in 0..=255u8 {
            for dir in [Dir::Input, Dir::Output, Dir::InputOnly] {
                let table = match dir {
                    Dir::Input => &INPUT,
                    Dir::Output => &OUTPUT,
                    Dir::InputOnly => &INPUT_ONLY,
                };
                let want = if flags & tcp_flags::RST != 0 {
                    table[3][es]
                } else if flags & tcp_flags::SYN != 0 {
                    table[0][es]
                } else if flags & tcp_flags::FIN != 0 {
                    table[1][es]
                } else if flags & tcp_flags::ACK != 0 {
                    table[2][es]
                } else {
                    TcpState::Close
                };
                assert_eq!(
                    tcp_next(TcpState::Established, dir, flags),
                    want,
                    "{flags:#x} {dir:?}"
                );
            }
        }
    }

    use super::*;
    use crate::net::meta::tcp_flags::{ACK, FIN, PSH, RST, SYN};

    /// IPVS's abbreviations of the states (`ip_vs_proto_tcp.c`), in
    /// [`TcpState::ALL`] order.
    const ABBR: [&str; TCP_STATES] = [
        "sNO", "sES", "sSS", "sSR", "sFW", "sTW", "sCL", "sCW", "sLA", "sLI", "sSA",
    ];

    /// IPVS's `tcp_states[]` transcribed again, independently of the tables
    /// above: per (direction, flags), the next state for each current state
    /// in [`TcpState::ALL`] order.
    #[rustfmt::skip]
    const ROWS: [(Dir, u8, &str); 12] = [
        (Dir::Input,     SYN,             "sSR sES sES sSR sSR sSR sSR sSR sSR sSR sSR"),
        (Dir::Input,     FIN | ACK,       "sCL sCW sSS sTW sTW sTW sCL sCW sLA sLI sTW"),
        (Dir::Input,     ACK | PSH,       "sCL sES sSS sES sFW sTW sCL sCW sCL sLI sES"),
        (Dir::Input,     RST | ACK | SYN, "sCL sCL sCL sSR sCL sCL sCL sCL sLA sLI sSR"),
        (Dir::Output,    SYN | ACK,       "sSS sES sSS sSR sSS sSS sSS sSS sSS sLI sSR"),
        (Dir::Output,    FIN,             "sTW sFW sSS sTW sFW sTW sCL sTW sLA sLI sTW"),
        (Dir::Output,    ACK,             "sES sES sSS sES sFW sTW sCL sCW sLA sES sES"),
        (Dir::Output,    RST,             "sCL sCL sSS sCL sCL sTW sCL sCL sCL sCL sCL"),
        (Dir::InputOnly, SYN,             "sSR sES sES sSR sSR sSR sSR sSR sSR sSR sSR"),
        (Dir::InputOnly, FIN | ACK,       "sCL sFW sSS sTW sFW sTW sCL sCW sLA sLI sTW"),
        (Dir::InputOnly, ACK,             "sCL sES sSS sES sFW sTW sCL sCW sCL sLI sES"),
        (Dir::InputOnly, RST,             "sCL sCL sCL sSR sCL sCL sCL sCL sLA sLI sCL"),
    ];

    #[test]
    fn transition_tables() {
        for (dir, flags, want) in ROWS {
            let got: Vec<_> = TcpState::ALL
                .iter()
                .map(|s| ABBR[tcp_next(*s, dir, flags) as usize])
                .collect();
            assert_eq!(got.join(" "), want, "{dir:?}, flags {flags:#04x}");
        }
    }

    #[test]
    fn names_as_ipvsadm_prints_them() {
        let names: Vec<_> = TcpState::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(
            names.join(" "),
            "NONE ESTABLISHED SYN_SENT SYN_RECV FIN_WAIT TIME_WAIT CLOSE CLOSE_WAIT LAST_ACK \
             LISTEN SYNACK"
        );
        for (i, s) in TcpState::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
            assert_eq!(TcpState::from_u8(i as u8), *s);
        }
        assert_eq!(TcpState::from_u8(200), CL);
    }

    #[test]
    fn no_flags_closes() {
        assert_eq!(tcp_next(ES, Dir::Input, PSH), CL);
        assert_eq!(tcp_next(ES, Dir::InputOnly, 0), CL);
    }

    #[test]
    fn dr_handshake_and_close() {
        // A DR connection sees only the client half.
        let mut s = tcp_next(TcpState::None, Dir::InputOnly, SYN);
        assert_eq!(s, SR);
        s = tcp_next(s, Dir::InputOnly, ACK);
        assert_eq!(s, ES);
        s = tcp_next(s, Dir::InputOnly, FIN | ACK);
        assert_eq!(s, FW);
        s = tcp_next(s, Dir::InputOnly, ACK);
        assert_eq!(s, FW);
    }

    #[test]
    fn timeouts() {
        let t = TimeoutTable::default();
        assert_eq!(t.tcp(ES), 900_000);
        assert_eq!(t.tcp(SS), 120_000);
        assert_eq!(t.tcp(SR), 60_000);
        assert_eq!(t.tcp(CL), 10_000);
        assert_eq!(t.tcp(LA), 30_000);
        assert_eq!(t.udp_ms, 300_000);
        let t = TimeoutTable::new(&Timeouts {
            tcp: 60,
            tcpfin: 5,
            udp: 0,
        });
        assert_eq!(t.tcp(ES), 60_000);
        assert_eq!(t.tcp(FW), 5_000);
        assert_eq!(t.tcp(TW), 120_000);
        assert_eq!(t.udp_ms, 300_000);
    }
}
