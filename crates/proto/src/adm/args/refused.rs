//! The options of ipvsadm 1.31's man page that dirigoadm refuses, each
//! with the one-line reason it prints (exit 2) and its man page lists
//! (`REFUSED OPTIONS`). Every other option of that page is in
//! [`super::options::TABLE`]; `adm::tests::compat` walks the whole list.

/// One refused option.
pub struct Refused {
    /// `-6`.
    pub short: Option<char>,
    /// `--ipv6`.
    pub long: &'static str,
    /// Whether it takes a value (its value is not read: the line is refused).
    pub takes_value: bool,
    /// Why, in one line.
    pub reason: &'static str,
}

/// The start of every sync option's reason.
macro_rules! sync {
    ($rest:literal) => {
        concat!(
            "dirigo's connection sync is set in its configuration file: ",
            $rest
        )
    };
}

const fn r(
    short: Option<char>,
    long: &'static str,
    takes_value: bool,
    reason: &'static str,
) -> Refused {
    Refused {
        short,
        long,
        takes_value,
        reason,
    }
}

/// The refused options, in the man page's order.
pub const REFUSED: &[Refused] = &[
    r(
        None,
        "start-daemon",
        true,
        sync!("[sync] enabled, send (master) and receive (backup); -L --daemon shows it"),
    ),
    r(
        None,
        "stop-daemon",
        true,
        sync!("[sync] send = false or receive = false, then a restart"),
    ),
    r(None, "syncid", true, sync!("[sync] syncid")),
    r(
        None,
        "sync-maxlen",
        true,
        sync!("a message fits the MTU of the [sync] port, less 28 bytes"),
    ),
    r(
        None,
        "mcast-interface",
        true,
        sync!("[sync] port, the port whose kernel interface carries the messages"),
    ),
    r(None, "mcast-group", true, sync!("[sync] group")),
    r(None, "mcast-port", true, sync!("[sync] udp_port")),
    r(None, "mcast-ttl", true, sync!("[sync] ttl")),
    r(
        None,
        "sctp-service",
        true,
        "dirigo balances TCP and UDP only (no SCTP state machine or CRC32c checksum)",
    ),
    r(
        None,
        "pe",
        true,
        "dirigo has no persistence engines (IPVS's sip): persistence is by client address (-p, -M)",
    ),
];

/// The refused option named `--long`.
pub fn by_long(long: &str) -> Option<&'static Refused> {
    REFUSED.iter().find(|r| r.long == long)
}

/// The refused option named `-c`.
pub fn by_short(c: char) -> Option<&'static Refused> {
    REFUSED.iter().find(|r| r.short == Some(c))
}

impl Refused {
    /// `-6, --ipv6` or `--pe`.
    pub fn names(&self) -> String {
        match self.short {
            Some(c) => format!("-{c}, --{}", self.long),
            None => format!("--{}", self.long),
        }
    }

    /// What dirigoadm prints when `given` (as typed) is on its command line.
    pub fn message(&self, given: &str) -> String {
        format!("{given}: not supported by dirigoadm: {}", self.reason)
    }
}

/// The man page's list: one tagged paragraph per option (see
/// `cli::Page::sections`).
pub fn man_text() -> String {
    let mut s = String::from(
        "Every option of ipvsadm 1.31's man page works in dirigoadm, except these, which it \
         refuses with the reason below (exit status 2).",
    );
    for r in REFUSED {
        s.push_str("\n\n- ");
        s.push_str(&r.names());
        s.push('\n');
        s.push_str(r.reason);
    }
    s
}
