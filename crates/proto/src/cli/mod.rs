//! The programs' command lines, defined once for the binaries and for the
//! man pages and shell completions (`examples/dirigo-docs.rs` renders
//! [`pages`]; `scripts/package.sh` runs it):
//!
//! * [`daemon`] — `dirigo` (clap derive);
//! * [`ctl`] — `dirigoctl` (clap derive);
//! * dirigoadm parses with ipvsadm's own rules; its clap description,
//!   built from the same option table, is
//!   [`crate::adm::args::command`].

pub mod ctl;
pub mod daemon;

use clap::Command;
use std::borrow::Cow;

/// Parse the process's arguments into `T`, with `--version` saying what
/// [`crate::version::long`] says (the commit).
pub fn parse<T: clap::Parser>() -> T {
    parse_with(crate::version::long())
}

/// [`parse`] with `--version` saying `version` (the daemon adds the DPDK
/// it runs with).
pub fn parse_with<T: clap::Parser>(version: &'static str) -> T {
    let m = T::command().version(version).get_matches();
    T::from_arg_matches(&m).unwrap_or_else(|e| e.exit())
}

/// One program's manual page.
pub struct Page {
    /// The program.
    pub name: &'static str,
    /// Its manual section: "8" (system administration) or "1".
    pub section: &'static str,
    /// Its command line.
    pub command: Command,
    /// SYNOPSIS lines of our own instead of clap's (dirigoadm: ipvsadm's
    /// usage lines, which say which options go with which command).
    pub synopsis: Option<Vec<String>>,
    /// Whether the page lists each subcommand with its usage (dirigoctl).
    pub subcommands: bool,
    /// Sections after the options: heading and text. Paragraphs are
    /// separated by a blank line; a paragraph whose lines start with two
    /// spaces is shown as it is (commands); one whose first line starts
    /// with `- ` is a tagged paragraph (the term, then its description).
    pub sections: Vec<(&'static str, Cow<'static, str>)>,
}

/// The version line of the man pages: the crate version and the commit
/// (the DPDK version is the one found at run time, not the build's).
pub fn page_version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        format!(
            "{} (commit {})",
            crate::version::VERSION,
            crate::version::COMMIT
        )
    })
}

/// Every program's page.
pub fn pages() -> Vec<Page> {
    use clap::CommandFactory;
    let v = page_version();
    vec![
        Page {
            name: "dirigo",
            section: "8",
            command: daemon::Args::command().version(v),
            synopsis: None,
            subcommands: false,
            sections: borrowed(DIRIGO),
        },
        Page {
            name: "dirigoadm",
            section: "8",
            command: crate::adm::args::command()
                .version(v)
                .long_about(DIRIGOADM_ABOUT),
            synopsis: Some(
                crate::adm::format::usage("dirigoadm")
                    .lines()
                    .skip(1)
                    .take_while(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_string())
                    .collect(),
            ),
            subcommands: false,
            sections: {
                // after DIFFERENCES FROM IPVSADM, the refusals from the
                // table dirigoadm refuses them with
                let mut v = borrowed(DIRIGOADM);
                let refused = Cow::Owned(crate::adm::args::refused::man_text());
                v.insert(1, ("REFUSED OPTIONS", refused));
                v
            },
        },
        Page {
            name: "dirigoctl",
            section: "1",
            command: ctl::Cli::command().version(v),
            synopsis: None,
            subcommands: true,
            sections: borrowed(DIRIGOCTL),
        },
    ]
}

fn borrowed(s: &[(&'static str, &'static str)]) -> Vec<(&'static str, Cow<'static, str>)> {
    s.iter().map(|(h, t)| (*h, Cow::Borrowed(*t))).collect()
}

const SEE_ALSO: &str = "dirigo(8), dirigoadm(8), dirigoctl(1), ipvsadm(8), keepalived(8), \
systemctl(1), journalctl(1); /usr/share/doc/dirigo/ (CONFIG.md, OPERATIONS.md, \
ARCHITECTURE.md, examples/).";

const DIRIGO: &[(&str, &str)] = &[
    (
        "CHECKING A CONFIGURATION",
        "dirigo --check --config FILE reads and validates the whole file without starting \
anything: TOML syntax, unknown keys and wrong types, every address and prefix, the \
references between sections (a route's port, a neighbor's port, kernel interfaces), \
schedulers and their flags, real servers and health checks, and the EAL arguments that can \
be checked without starting EAL (known options, -l/-c/--lcores syntax and at least two \
lcores, options that exclude each other). It prints nothing but a success line when the \
file is valid, else each problem as FILE:LINE: message on standard error, and exits 2. The \
daemon checks the same way at start, and dirigoctl reload before it applies anything.",
    ),
    (
        "SIGNALS",
        "- SIGTERM, SIGINT
Stop: the workers finish their burst, the ports are stopped and closed, the kernel \
interfaces removed, and dirigo exits 0. The connection table is lost: drain first (see \
OPERATIONS.md, \"The service\").

- SIGHUP
Not a reload (it ends the process). Reload with dirigoctl reload (systemctl reload dirigo).",
    ),
    (
        "EXIT STATUS",
        "- 0
Stopped by a signal, or --check found the file valid.

- 1
Start-up failed (EAL, a port, the control socket, the exception path); the reason is the \
last line on standard error.

- 2
The configuration file cannot be read or is invalid.",
    ),
    (
        "FILES",
        "- /etc/dirigo/dirigo.toml
The configuration (--config), a conffile of the Debian package.

- /etc/default/dirigo
The service's settings: hugepages to reserve, the configuration file.

- /run/dirigo/ctl.sock
The control socket ([control] socket).

- /usr/share/doc/dirigo/examples/
Example configurations.",
    ),
    ("SEE ALSO", SEE_ALSO),
];

const DIRIGOADM_ABOUT: &str = "dirigoadm administers the virtual service table of a running \
dirigo with ipvsadm's command line: the same commands, options, option checks, error \
wording and exit codes, and ipvsadm's listing and -S formats, so scripts and keepalived \
notify hooks written for ipvsadm work unchanged. It talks to dirigo over its control \
socket; changes apply at once, without pausing forwarding, and are lost when dirigo stops \
(save them with -S, or write them as [[service]] in the configuration file).";

const DIRIGOADM: &[(&str, &str)] = &[
    (
        "DIFFERENCES FROM IPVSADM",
        "- Firewall-mark services
-f MARK [-6] as ipvsadm; dirigo has no iptables in front of it, so it gives the marks \
itself: [[mark]] rules in its configuration, or dirigoctl mark add/del/list at runtime \
(protocol, destination prefix and ports, an optional source prefix, the mark). A mark is \
consulted only where no protocol/address/port service matches.

- Service groups
A service group (keepalived's virtual_server_group, the configuration's members) is one \
service reached under several keys: -L lists each member as its own service line with the \
group's real servers, as ipvsadm lists what keepalived creates. ipvsadm has no group verb: \
-E, -D, -a, -e and -d on a member are refused naming the group's service, -E of that \
service keeps its members, and -S writes them as #member comment lines (ignored by -R, \
read back from dirigo's state file).

- Schedulers
rr, wrr, lc, wlc, sed, nq, sh, dh, mh and fo; IPVS's lblc, lblcr, ovf and twos are not \
there.

- Forwarding
-g, -m and -i as IPVS, -i with --tun-type ipip, gue or gre, --tun-port and the checksum \
options as Linux 5.3/5.4 (for a forwarded packet --tun-remcsum is a GUE UDP checksum without \
the option, and GRE without a checksum, as Linux does); dirigo adds FullNAT (--fullnat, \
DPVS's -b with -a/-e) with its local addresses (-P, -Q, -G, -z).

- One-packet scheduling
-o/--ops is for UDP services with DR or TUN real servers, without -p: on a TCP service it \
is refused (IPVS ignores it there), with -p or a NAT (-m) real server too (a NAT reply needs \
the connection entry dirigo does not make; IPVS's goes out untranslated without conntrack).

- Not available
The options listed under REFUSED OPTIONS.

- Restore
-R applies all its rules as one batch: if one is refused, none is applied and the error \
names its line (ipvsadm applies the lines before the bad one).

- Numbers
Listings always show addresses and ports numerically; -n is accepted for compatibility.

- Version
-v prints ipvsadm's version line with dirigoadm's version, git commit and DPDK version.

- The socket
--socket PATH (or $DIRIGO_SOCKET) names dirigo's control socket; ipvsadm talks to the \
kernel instead. Without a running dirigo, dirigoadm says \"Can't initialize ipvs\" as \
ipvsadm does without the ip_vs module.",
    ),
    (
        "EXAMPLES",
        "  dirigoadm -A -t 192.0.2.100:80 -s wlc
  dirigoadm -a -t 192.0.2.100:80 -r 198.51.100.11 -g -w 100
  dirigoadm -e -t 192.0.2.100:80 -r 198.51.100.11 -g -w 0
  dirigoadm -L -n --stats
  dirigoadm -S -n > /etc/dirigo/rules && dirigoadm -R < /etc/dirigo/rules

The third line quiesces a real server: it takes no new connections and its existing \
ones carry on.",
    ),
    (
        "EXIT STATUS",
        "- 0
Done.

- 1
dirigo refused the change (ipvsadm's message, e.g. \"Service already exists\"), or \
reading or writing failed.

- 2
A command-line error (ipvsadm's wording), or no dirigo answers on the socket.",
    ),
    (
        "ENVIRONMENT",
        "- DIRIGO_SOCKET
The control socket when --socket is not given (default /run/dirigo/ctl.sock).",
    ),
    ("SEE ALSO", SEE_ALSO),
];

const DIRIGOCTL: &[(&str, &str)] = &[
    (
        "EXIT STATUS",
        "- 0
Done.

- 1
dirigo refused the request or cannot be reached, or keepalived-convert could not convert \
the file; the reason is on standard error.

- 2
A command-line error.",
    ),
    (
        "ENVIRONMENT",
        "- DIRIGO_SOCKET
The control socket when --socket is not given (default /run/dirigo/ctl.sock).",
    ),
    ("SEE ALSO", SEE_ALSO),
];
