//! The daemon's command line.

use clap::Parser;

/// dirigo's arguments.
#[derive(Parser, Debug)]
#[command(
    name = "dirigo",
    version,
    about = "An LVS-style Layer-4 director on DPDK",
    long_about = "dirigo is a Layer-4 load balancer in the tradition of Linux Virtual \
        Server (LVS/IPVS), built on DPDK: clients connect to a virtual IP, dirigo's \
        worker lcores pick a real server per connection with an IPVS scheduler and \
        forward by direct routing, IP-in-IP tunnelling or NAT. It reads its ports, \
        routes and start-up services from a TOML file (/usr/share/doc/dirigo/CONFIG.md) \
        and serves dirigoadm (ipvsadm's command line) and dirigoctl on a Unix socket. \
        It runs in the foreground and logs to standard error."
)]
pub struct Args {
    /// The TOML configuration file.
    #[arg(
        short,
        long,
        default_value = "/etc/dirigo/dirigo.toml",
        value_hint = clap::ValueHint::FilePath
    )]
    pub config: String,
    /// Validate the configuration file (and its state file, when one is
    /// configured and exists) and exit, starting nothing: exit 0 when they
    /// are valid, else every problem as FILE:LINE: message on standard
    /// error and exit 2 (like `nginx -t`).
    #[arg(long, short = 't')]
    pub check: bool,
}
