//! dirigoctl's command line: ports, addresses, routes, neighbors, lcores,
//! drops, reload, health, scheduler fingerprints and version of a running
//! dirigo, and the offline
//! keepalived.conf converter. `src/bin/dirigoctl.rs` turns it into requests.

use crate::view::MacAddr;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// dirigoctl's arguments.
#[derive(Parser)]
#[command(
    name = "dirigoctl",
    version,
    about = "Inspect and manage a running dirigo",
    long_about = "Inspect and manage a running dirigo: its ports, addresses, routes, \
        neighbors, lcores, drop counters, health checks and VIP announcement, and the fingerprints of its \
        scheduler tables (to compare directors); reload its configuration file. Services are dirigoadm's (ipvsadm's command line). keepalived-convert \
        works offline."
)]
pub struct Cli {
    /// Control socket (else $DIRIGO_SOCKET, else /run/dirigo/ctl.sock).
    #[arg(long, global = true, value_hint = clap::ValueHint::FilePath)]
    pub socket: Option<PathBuf>,
    /// Print the daemon's raw JSON response instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// dirigoctl's commands.
#[derive(Subcommand)]
pub enum Cmd {
    /// Ports: link state and counters.
    Ports {
        /// Also show extended (driver) counters.
        #[arg(long, short = 'x')]
        xstats: bool,
    },
    /// Port addresses.
    Addr {
        #[command(subcommand)]
        op: AddrOp,
    },
    /// Routes.
    Route {
        #[command(subcommand)]
        op: RouteOp,
    },
    /// Neighbor table (ARP and NDP).
    Neigh {
        #[command(subcommand)]
        op: NeighOp,
    },
    /// Per-lcore counters.
    Lcores,
    /// Drop reasons and counts.
    Drops,
    /// Re-read the configuration file.
    ///
    /// Its services (with their checks) and timeouts replace the running
    /// ones and its static neighbors are added; ports, EAL and [control]
    /// need a restart. An invalid file changes nothing and is an error.
    /// `systemctl reload dirigo` runs it.
    Reload,
    /// Health checks: every checked real server, withdrawn VIPs, the last
    /// transitions; `disable`/`enable` a server for maintenance.
    Health {
        #[command(subcommand)]
        op: Option<HealthOp>,
    },
    /// Connection sync with other directors (the IPVS sync protocol,
    /// `[sync]`): where messages go and what was sent, received,
    /// installed and dropped.
    Sync,
    /// VIPs and their announce state (`[announce]`): announced,
    /// withdrawn, draining or error, and why.
    Vips,
    /// Each worker's connections counted every way at one moment: the
    /// table's own count, a walk of it (what `dirigoadm -L -c` lists), the
    /// published gauge (`lcores`, the metrics) and the real servers'
    /// active and inactive counters. The worker takes them all between
    /// two bursts, so they must agree exactly, even while connections
    /// expire; the exit status is 1 when one does not.
    Census,
    /// The connection handoff at this dirigo's start (`[control]
    /// handoff_file`): the entries the stopping process wrote, those
    /// installed, those refused by reason (a whole file for a bad magic,
    /// version, checksum or length; an entry for a service or real server
    /// that is gone), and the gap in forwarding between the two processes.
    Handoff,
    /// Mark rules for fwmark services (dirigoadm -f MARK): each gives a
    /// mark to the packets of a protocol to a destination prefix and port
    /// range, optionally from a source prefix (dirigo's own, in place of
    /// iptables -t mangle ... -j MARK). Consulted only for packets no
    /// ordinary service takes. Changes are saved in the state file.
    Mark {
        #[command(subcommand)]
        op: MarkOp,
    },
    /// SNAT rules ([[snat]] in the configuration): the real servers' own
    /// connections masqueraded through a pool address. Changed by a
    /// restart with a new configuration.
    Snat {
        #[command(subcommand)]
        op: SnatOp,
    },
    /// Client and daemon versions.
    Version,
    /// Per service, a fingerprint of its scheduler's lookup table (mh, sh,
    /// dh) as the workers use it: directors behind one ECMP group whose
    /// fingerprints of a service are equal send every flow of it to the
    /// same real server. `-` for schedulers without a table (rr, wlc, ...).
    ///
    /// The fingerprint is SipHash-2-4 with keys 0 and 0 over the
    /// scheduler's name, its flags, the table's size and each entry's real
    /// server address and port, so it is the same on every machine and
    /// build, and independent of the order the servers were added in.
    Fingerprint {
        /// Only this service: `[tcp:|udp:]VIP:PORT` (tcp when not said; an
        /// IPv6 VIP in brackets: `[2001:db8::10]:80`).
        service: Option<String>,
    },
    /// A live view, like top: services and real servers with their
    /// connections and rates, each worker's table fill and packet rates,
    /// drops by reason. q, Esc or Ctrl-C quits.
    Top(TopArgs),
    /// Convert a keepalived.conf's virtual servers to dirigo [[service]]
    /// TOML (offline: no daemon). The TOML goes to stdout, a warning per
    /// skipped or changed setting to stderr; on an error (file:line)
    /// nothing is printed on stdout. Checks carried: TCP_CHECK, HTTP_GET,
    /// SSL_GET, MISC_CHECK, UDP_CHECK, PING_CHECK, SMTP_CHECK, DNS_CHECK
    /// and FILE_CHECK (with its track_file), with retry and
    /// delay_before_retry.
    KeepalivedConvert {
        /// keepalived.conf (its includes are followed).
        #[arg(value_hint = clap::ValueHint::FilePath)]
        file: PathBuf,
    },
}

/// `dirigoctl top`'s options.
#[derive(Args)]
pub struct TopArgs {
    /// Seconds between refreshes (fractions allowed, 0.1 to 3600).
    #[arg(short = 'd', long = "delay", value_name = "SECS", default_value = "1",
          value_parser = crate::cli::ctl::parse_delay)]
    pub delay: std::time::Duration,
    /// Batch mode: print one plain-text frame (rates over one delay) to
    /// stdout and exit, like top -b -n 1.
    #[arg(short = 'b', long = "once", visible_alias = "batch")]
    pub once: bool,
    /// In batch mode, print this many frames, one delay apart.
    #[arg(short = 'n', long = "iterations", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..), requires = "once")]
    pub iterations: Option<u32>,
}

#[derive(Subcommand)]
pub enum AddrOp {
    /// List addresses.
    List,
    /// Add ADDR/PREFIX to a port.
    Add(AddrArgs),
    /// Remove an address from a port.
    Del(AddrArgs),
}

#[derive(Args)]
pub struct AddrArgs {
    /// Address with prefix length (10.0.0.1/24, 2001:db8::1/64); /32 or
    /// /128 if absent.
    pub addr: String,
    /// Port id.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
}

#[derive(Subcommand)]
pub enum MarkOp {
    /// List the rules, one a line, as `add` and `del` take them.
    List,
    /// Add a rule: PROTO DST PORTS [from SRC] mark N, e.g.
    /// `tcp 192.0.2.10 80-443 mark 1` (DST and SRC an address or
    /// ADDR/LEN, PORTS a port or LO-HI). Refused when it overlaps a rule.
    Add {
        /// The rule's words.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        rule: Vec<String>,
    },
    /// Delete a rule, given as `list` shows it.
    Del {
        /// The rule's words.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        rule: Vec<String>,
    },
}

#[derive(Subcommand)]
pub enum SnatOp {
    /// List the rules, one a line, with the connections each made since
    /// start and has now, then all rules' connections against their bound
    /// (each worker half its IPv6 table).
    List,
}

#[derive(Subcommand)]
pub enum HealthOp {
    /// Show every checked server (the default).
    Show,
    /// Take a real server out of its service (weight 0) whatever its checks say.
    Disable(HealthArgs),
    /// Give it back to its checks.
    Enable(HealthArgs),
}

#[derive(Args)]
pub struct HealthArgs {
    /// The service: `[tcp:|udp:]VIP:PORT` (tcp when not said).
    pub service: String,
    /// The real server: `RIP[:PORT]` (the service's port when not said).
    pub server: String,
}

#[derive(Subcommand)]
pub enum RouteOp {
    /// List routes.
    List,
}

#[derive(Subcommand)]
pub enum NeighOp {
    /// List neighbors.
    List,
    /// Add a static entry.
    Add {
        /// IPv4 or IPv6 address.
        addr: std::net::IpAddr,
        /// MAC address (aa:bb:cc:dd:ee:ff).
        mac: MacAddr,
        /// Port id.
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Flush dynamic entries.
    Flush {
        /// Only this port.
        #[arg(long)]
        port: Option<u16>,
    },
}

/// Shortest refresh interval.
pub const MIN_DELAY: Duration = Duration::from_millis(100);
/// Longest refresh interval.
pub const MAX_DELAY: Duration = Duration::from_secs(3600);
/// `-d SECS`: a number of seconds (fractions allowed) in
/// [`MIN_DELAY`]..=[`MAX_DELAY`].
pub fn parse_delay(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("bad delay '{s}': want seconds, e.g. 1 or 0.5"))?;
    if !v.is_finite() || v < MIN_DELAY.as_secs_f64() || v > MAX_DELAY.as_secs_f64() {
        return Err(format!(
            "bad delay '{s}': want {} to {} seconds",
            MIN_DELAY.as_secs_f64(),
            MAX_DELAY.as_secs()
        ));
    }
    Ok(Duration::from_secs_f64(v))
}
