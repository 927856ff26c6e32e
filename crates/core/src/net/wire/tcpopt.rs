//! TCP options (RFC 9293 §3.1, RFC 7323, RFC 2018): what a SYN proxy reads
//! from a segment and writes into the SYN/ACK and SYN it builds.
//!
//! [`parse`] walks an options area of at most 40 bytes once, stopping at
//! the end-of-list option or at the first malformed option (a length
//! below 2 or past the area): it never reads out of bounds and never
//! loops more than the area is long. Offsets it reports are from the
//! start of the TCP header, so they can be handed to
//! [`super::tcp::Packet::set_u32_update_checksum`].
//!
//! [`Options`] is what a segment's options say, without where: what
//! `tcp::Repr` parses and emits. This module names no other: `tcp` uses it.

/// Where the options area starts, from the start of the TCP header: the
/// end of its fixed part (`tcp::MIN_HEADER_LEN`, which `tcp` checks
/// against this at compile time).
pub const AREA_START: usize = 20;
/// The largest options area (data offset 15 words).
pub const AREA_MAX: usize = 40;

/// Option kinds.
pub mod kind {
    /// End of option list.
    pub const END: u8 = 0;
    /// No operation (padding).
    pub const NOP: u8 = 1;
    /// Maximum segment size (SYN only), length 4.
    pub const MSS: u8 = 2;
    /// Window scale (SYN only), length 3.
    pub const WSCALE: u8 = 3;
    /// SACK permitted (SYN only), length 2.
    pub const SACK_PERM: u8 = 4;
    /// SACK blocks, length 2 + 8n.
    pub const SACK: u8 = 5;
    /// Timestamps, length 10.
    pub const TIMESTAMP: u8 = 8;
}

/// The largest window scale RFC 7323 allows.
pub const MAX_WSCALE: u8 = 14;

/// The timestamps option of a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timestamps {
    /// TSval.
    pub val: u32,
    /// TSecr.
    pub ecr: u32,
    /// Offset of TSval from the start of the TCP header (TSecr follows).
    pub at: u8,
}

impl Timestamps {
    /// Offset of TSval from the start of the TCP header.
    #[inline]
    pub fn val_at(&self) -> usize {
        self.at as usize
    }
    /// Offset of TSecr from the start of the TCP header.
    #[inline]
    pub fn ecr_at(&self) -> usize {
        self.at as usize + 4
    }
}

/// What [`parse`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// MSS.
    pub mss: Option<u16>,
    /// Window scale shift (clamped to [`MAX_WSCALE`], as RFC 7323 says).
    pub wscale: Option<u8>,
    /// SACK permitted.
    pub sack_perm: bool,
    /// Timestamps.
    pub ts: Option<Timestamps>,
    /// SACK blocks: offset of the first block's left edge from the start
    /// of the TCP header, and the number of blocks (each two 32-bit edges).
    pub sack: Option<(u8, u8)>,
}

impl TcpOptions {
    /// Offsets from the start of the TCP header of the SACK blocks'
    /// 32-bit edges, left then right of each block in turn (none without
    /// SACK blocks).
    #[inline]
    pub fn sack_edges(&self) -> impl Iterator<Item = usize> {
        let (at, n) = self.sack.unwrap_or((0, 0));
        (0..2 * n as usize).map(move |i| at as usize + 4 * i)
    }
}

/// Parse the options area `opts` (the bytes between the 20-byte header and
/// the data offset; at most 40 are looked at).
#[inline]
pub fn parse(opts: &[u8]) -> TcpOptions {
    // what nearly every segment of a Linux peer carries: NOP NOP TS
    if let [kind::NOP, kind::NOP, kind::TIMESTAMP, 10, v0, v1, v2, v3, e0, e1, e2, e3] = *opts {
        return TcpOptions {
            ts: Some(Timestamps {
                val: u32::from_be_bytes([v0, v1, v2, v3]),
                ecr: u32::from_be_bytes([e0, e1, e2, e3]),
                at: (AREA_START + 4) as u8,
            }),
            ..TcpOptions::default()
        };
    }
    parse_walk(opts)
}

fn parse_walk(opts: &[u8]) -> TcpOptions {
    let opts = opts.get(..opts.len().min(AREA_MAX)).unwrap_or(&[]);
    let mut o = TcpOptions::default();
    let mut i = 0usize;
    while i < opts.len() {
        let k = opts[i];
        if k == kind::END {
            break;
        }
        if k == kind::NOP {
            i += 1;
            continue;
        }
        let Some(&len) = opts.get(i + 1) else {
            break;
        };
        let len = len as usize;
        if len < 2 || i + len > opts.len() {
            break; // malformed: stop, nothing past it is trusted
        }
        let body = &opts[i + 2..i + len];
        let at = (AREA_START + i + 2) as u8;
        match (k, body.len()) {
            (kind::MSS, 2) => o.mss = Some(u16::from_be_bytes([body[0], body[1]])),
            (kind::WSCALE, 1) => o.wscale = Some(body[0].min(MAX_WSCALE)),
            (kind::SACK_PERM, 0) => o.sack_perm = true,
            (kind::TIMESTAMP, 8) => {
                o.ts = Some(Timestamps {
                    val: u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
                    ecr: u32::from_be_bytes([body[4], body[5], body[6], body[7]]),
                    at,
                })
            }
            (kind::SACK, n) if n > 0 && n % 8 == 0 => o.sack = Some((at, (n / 8) as u8)),
            _ => {} // unknown or odd-sized: skipped by its length
        }
        i += len;
    }
    o
}

/// The options of a SYN or SYN/ACK dirigo builds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynOptions {
    /// MSS to announce.
    pub mss: u16,
    /// Window scale to announce, if any.
    pub wscale: Option<u8>,
    /// SACK permitted.
    pub sack_perm: bool,
    /// Timestamps (TSval, TSecr), if any.
    pub ts: Option<(u32, u32)>,
}

/// What a segment's options say, without where: each option at most once
/// (SACK blocks aside: [`parse`] reports where they are, this does not
/// carry them). What `tcp::Repr` parses and emits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// MSS.
    pub mss: Option<u16>,
    /// Window scale shift (emitted clamped to [`MAX_WSCALE`]).
    pub wscale: Option<u8>,
    /// SACK permitted.
    pub sack_perm: bool,
    /// Timestamps (TSval, TSecr).
    pub ts: Option<(u32, u32)>,
}

impl From<SynOptions> for Options {
    fn from(o: SynOptions) -> Options {
        Options {
            mss: Some(o.mss),
            wscale: o.wscale,
            sack_perm: o.sack_perm,
            ts: o.ts,
        }
    }
}

impl From<TcpOptions> for Options {
    /// The options [`parse`] found, without their offsets and SACK blocks.
    fn from(o: TcpOptions) -> Options {
        Options {
            mss: o.mss,
            wscale: o.wscale,
            sack_perm: o.sack_perm,
            ts: o.ts.map(|t| (t.val, t.ecr)),
        }
    }
}

impl Options {
    /// Bytes [`Options::emit`] writes (a multiple of 4, at most 20).
    pub fn emit_len(&self) -> usize {
        let mss = if self.mss.is_some() { 4 } else { 0 };
        let ts_sack = if self.ts.is_some() {
            12
        } else if self.sack_perm {
            4
        } else {
            0
        };
        mss + ts_sack + if self.wscale.is_some() { 4 } else { 0 }
    }

    /// Write the options at the start of `out` in the layout Linux uses
    /// (MSS; SACK-permitted + timestamps, or NOP NOP + timestamps, or NOP
    /// NOP + SACK-permitted; NOP + window scale). Returns the length
    /// written, or None (nothing written) when `out` is shorter than
    /// [`Options::emit_len`].
    pub fn emit(&self, out: &mut [u8]) -> Option<usize> {
        let n = self.emit_len();
        let out = out.get_mut(..n)?;
        let mut w = 0;
        let mut put = |bytes: &[u8]| {
            // always there: `out` is emit_len() bytes
            if let Some(d) = out.get_mut(w..w + bytes.len()) {
                d.copy_from_slice(bytes);
            }
            w += bytes.len();
        };
        if let Some(mss) = self.mss {
            let m = mss.to_be_bytes();
            put(&[kind::MSS, 4, m[0], m[1]]);
        }
        match (self.ts, self.sack_perm) {
            (Some((val, ecr)), sack) => {
                if sack {
                    put(&[kind::SACK_PERM, 2]);
                } else {
                    put(&[kind::NOP, kind::NOP]);
                }
                put(&[kind::TIMESTAMP, 10]);
                put(&val.to_be_bytes());
                put(&ecr.to_be_bytes());
            }
            (None, true) => put(&[kind::NOP, kind::NOP, kind::SACK_PERM, 2]),
            (None, false) => {}
        }
        if let Some(ws) = self.wscale {
            put(&[kind::NOP, kind::WSCALE, 3, ws.min(MAX_WSCALE)]);
        }
        Some(w)
    }
}

/// Bytes [`emit_syn`] writes for `o` (a multiple of 4, at most 20).
pub fn syn_len(o: &SynOptions) -> usize {
    Options::from(*o).emit_len()
}

/// Write `o` at the start of `out` in the layout Linux uses (MSS;
/// SACK-permitted + timestamps, or NOP NOP + timestamps, or NOP NOP +
/// SACK-permitted; NOP + window scale). Returns the length written, or
/// None (nothing written) when `out` is shorter than [`syn_len`].
pub fn emit_syn(out: &mut [u8], o: &SynOptions) -> Option<usize> {
    Options::from(*o).emit(out)
}

/// Write the timestamps option alone (NOP NOP TS, 12 bytes) at the start
/// of `out`; None when `out` is shorter.
pub fn emit_ts(out: &mut [u8], val: u32, ecr: u32) -> Option<usize> {
    Options {
        ts: Some((val, ecr)),
        ..Options::default()
    }
    .emit(out)
}

#[cfg(test)]
mod tests {
    use super::AREA_START as MIN_HEADER_LEN;
    use super::*;

    // A Linux SYN's options: MSS 1460, SACK-permitted, TS 0x01020304/0,
    // NOP, window scale 7.
    const LINUX_SYN: [u8; 20] = [
        2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7,
    ];

    #[test]
    fn parses_a_linux_syn() {
        let o = parse(&LINUX_SYN);
        assert_eq!(o.mss, Some(1460));
        assert!(o.sack_perm);
        assert_eq!(o.wscale, Some(7));
        assert_eq!(
            o.ts,
            Some(Timestamps {
                val: 0x0102_0304,
                ecr: 0,
                at: 28
            })
        );
        assert_eq!(o.sack, None);
    }

    #[test]
    fn emits_what_it_parses() {
        for ts in [None, Some((7, 9))] {
            for sack_perm in [false, true] {
                for wscale in [None, Some(0), Some(14)] {
                    let o = SynOptions {
                        mss: 1300,
                        wscale,
                        sack_perm,
                        ts,
                    };
                    let mut b = [0u8; 40];
                    let n = emit_syn(&mut b, &o).unwrap();
                    assert_eq!(n, syn_len(&o));
                    assert_eq!(n % 4, 0);
                    let p = parse(&b[..n]);
                    assert_eq!(p.mss, Some(1300));
                    assert_eq!(p.wscale, wscale);
                    assert_eq!(p.sack_perm, sack_perm);
                    assert_eq!(p.ts.map(|t| (t.val, t.ecr)), ts);
                    assert!(emit_syn(&mut b[..n - 1], &o).is_none());
                }
            }
        }
    }

    #[test]
    fn the_linux_layout_matches_etherparse() {
        let o = SynOptions {
            mss: 1460,
            wscale: Some(7),
            sack_perm: true,
            ts: Some((0x0102_0304, 0)),
        };
        let mut b = [0u8; 20];
        emit_syn(&mut b, &o).unwrap();
        use etherparse::TcpOptionElement as E;
        let mut h = etherparse::TcpHeader::new(1, 2, 3, 4);
        h.set_options(&[
            E::MaximumSegmentSize(1460),
            E::SelectiveAcknowledgementPermitted,
            E::Timestamp(0x0102_0304, 0),
            E::Noop,
            E::WindowScale(7),
        ])
        .unwrap();
        assert_eq!(h.options.as_slice(), &b[..]);
    }

    #[test]
    fn option_offsets() {
        // NOP NOP TS, then NOP NOP SACK with two blocks
        let mut b = vec![1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 9, 1, 1, 5, 18];
        b.extend_from_slice(&[0; 16]);
        let o = parse(&b);
        let ts = o.ts.unwrap();
        assert_eq!((ts.val_at(), ts.ecr_at()), (24, 28));
        assert!(o.sack_edges().eq([36, 40, 44, 48]));
        assert_eq!(TcpOptions::default().sack_edges().count(), 0);
        // what parse found, without where
        assert_eq!(
            Options::from(o),
            Options {
                ts: Some((5, 9)),
                ..Options::default()
            }
        );
    }

    #[test]
    fn the_common_layout_parses_like_the_walk() {
        let b = [1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 9];
        assert_eq!(parse(&b), parse_walk(&b));
        assert_eq!(parse(&b).ts.unwrap().at, 24);
    }

    #[test]
    fn sack_blocks_and_malformed_options() {
        // NOP NOP SACK with two blocks
        let mut b = vec![1, 1, 5, 18];
        b.extend_from_slice(&[0; 16]);
        assert_eq!(parse(&b).sack, Some((24, 2)));
        // a zero length stops the walk; an overlong one too
        assert_eq!(parse(&[2, 0, 5, 0xb4]), TcpOptions::default());
        assert_eq!(parse(&[2, 9, 5, 0xb4]), TcpOptions::default());
        assert_eq!(parse(&[2]), TcpOptions::default());
        // a wrong-size MSS is skipped, what follows still read
        assert!(parse(&[2, 3, 0, 4, 2]).sack_perm);
        // a window scale above 14 is clamped
        assert_eq!(parse(&[3, 3, 200]).wscale, Some(14));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let o = parse(&b);
            if let Some(ts) = o.ts {
                proptest::prop_assert!(ts.at as usize + 8 <= MIN_HEADER_LEN + b.len());
            }
            if let Some((at, n)) = o.sack {
                proptest::prop_assert!(at as usize + 8 * n as usize <= MIN_HEADER_LEN + b.len());
            }
        }
    }
}
