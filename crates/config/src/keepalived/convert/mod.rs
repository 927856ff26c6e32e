//! keepalived's `virtual_server` blocks as dirigo services.
//!
//! keepalived's defaults are kept (keepalived/check/check_data.c,
//! check_api.c): `delay_loop` 60 s, `connect_timeout` 5 s, `retry` 1 (0
//! for MISC_CHECK), scheduler `wlc`, forwarding `NAT`, weight 1, a
//! `persistence_timeout` without a value (or a `persistence_granularity`
//! alone) 360 s, an HTTP_GET url without `status_code` 200-299, a
//! MISC_CHECK without `misc_timeout` the `delay_loop`. A virtual server's
//! `delay_loop`, `connect_timeout`, `retry`, `inhibit_on_failure` and
//! `virtualhost` are its real servers' defaults, and theirs their checks'.
//!
//! What changes on the way:
//! * `fall` is keepalived's `retry` + 1: keepalived takes a server down
//!   when a failed check is followed by `retry` failed retries
//!   (check_tcp.c `tcp_epilog`); `rise` is 1 (one good check brings a
//!   keepalived server back); `retry_delay` is `delay_before_retry`
//!   (keepalived's defaults: 3 s for HTTP_GET/SSL_GET, the `delay_loop`
//!   for DNS_CHECK, whose `retry` is 3, else 1 s), left out without
//!   retries;
//! * SMTP_CHECK's `helo_name` and DNS_CHECK's `type` and `name` are the
//!   smtp and dns checks' `helo_name`, `query_type` and `query_name`;
//! * a FILE_CHECK is a file check of its `track_file`'s `file`, its
//!   `weight` (FILE_CHECK's, else the track_file's) `weight_factor` and
//!   `reverse`: dirigo reads the file every second (keepalived watches it)
//!   and acts at once (rise and fall 1);
//! * dirigo needs a check's timeout shorter than its interval: a timeout
//!   that is not becomes half the interval, with a warning;
//! * dirigo runs one check per real server and one url per HTTP check:
//!   the first, with a warning for the others;
//! * DR and TUN do not change the port: a real server's other port
//!   becomes the service's, and its check keeps probing the port it had;
//! * a `virtual_server group NAME` is one service: the group's first key
//!   is its own, the others its `members` (a dirigo group is of one
//!   family: entries of the other are skipped with a warning).
//!
//! Everything else (VRRP, `global_defs`, SCTP, the keywords dirigo has no equivalent for) is one warning each
//! and skipped. Malformed input (a keyword without its value, a bad
//! address, port or number) is an error.

mod check;
mod cx;
mod group;
mod inherit;
mod model;
mod real_server;
mod values;
mod virtual_server;

pub use model::{
    Check, RealServer, Service, CONNECT_TIMEOUT, DELAY_BEFORE_RETRY, DELAY_LOOP, DNS_RETRY,
    FILE_INTERVAL, HTTP_DELAY_BEFORE_RETRY, HTTP_STATUS, MISC_RETRY, PERSISTENCE_TIMEOUT, RETRY,
    SCHEDULER, SMTP_HELO,
};

use super::diag::Diag;
use super::parse::Node;
use cx::{Cx, TrackFile};
use std::collections::HashMap;
use virtual_server::virtual_server;

/// The top-level `track_file` (and `vrrp_track_file`) blocks, by name.
fn track_files(tree: &[Node]) -> Result<HashMap<String, TrackFile>, Diag> {
    let mut out = HashMap::new();
    for n in tree {
        if !matches!(n.key.as_str(), "track_file" | "vrrp_track_file") {
            continue;
        }
        let name = values::word(n, 0, "a name")?.to_string();
        let mut t = TrackFile {
            path: None,
            weight: (1, false),
        };
        for c in n.children() {
            match c.key.as_str() {
                "file" => t.path = Some(values::arg(c, 0, "a file")?.to_string()),
                "weight" => t.weight = values::weight_factor(c)?,
                _ => {}
            }
        }
        out.insert(name, t);
    }
    Ok(out)
}

/// The services of a keepalived configuration tree; everything else is
/// warned about in `warnings`.
pub fn services(tree: &[Node], warnings: &mut Vec<Diag>) -> Result<Vec<Service>, Diag> {
    let mut cx = Cx {
        warnings,
        track_files: track_files(tree)?,
        groups: Default::default(),
    };
    cx.groups = group::groups(&mut cx, tree)?;
    let mut out: Vec<Service> = Vec::new();
    for n in tree {
        match n.key.as_str() {
            "virtual_server" => {
                let Some(s) = virtual_server(&mut cx, n)? else {
                    continue;
                };
                let same = out
                    .iter()
                    .find(|o| (o.proto, o.vip, o.port) == (s.proto, s.vip, s.port));
                if let Some(first) = same {
                    let msg = format!(
                        "virtual_server {} {} ({}) is already defined at {}: skipped",
                        s.vip,
                        s.port,
                        s.proto.to_uppercase(),
                        first.loc
                    );
                    cx.warn(n, msg);
                } else {
                    out.push(s);
                }
            }
            "global_defs" => {
                cx.unsupported(n, "keepalived's global settings have no dirigo equivalent")
            }
            "vrrp_instance" | "vrrp_sync_group" | "vrrp_script" | "vrrp_track_process"
            | "garp_group" => {
                let name = n.args.first().map(|a| format!(" {a}")).unwrap_or_default();
                let msg = format!(
                    "{}{name} skipped: dirigo does not run VRRP (keepalived can go on doing it: \
                     VRRP reaches the kernel through dirigo's exception path)",
                    n.key
                );
                cx.warn(n, msg);
            }
            "static_ipaddress" | "static_routes" | "static_rules" => cx.unsupported(
                n,
                "dirigo's own addresses and routes are [[port]] addresses and [[route]]s",
            ),
            // read by group::groups(); a `virtual_server group NAME` uses one
            "virtual_server_group" => {}
            "SSL" => cx.unsupported(n, "dirigo's https checks present no client certificate"),
            "linkbeat_interfaces"
            | "net_namespace"
            | "net_namespace_ipvs"
            | "namespace_with_ipsets"
            | "instance"
            | "use_pid_dir"
            | "bfd_instance"
            | "track_process" => cx.unsupported(n, "not a load-balancing setting dirigo takes"),
            // read by track_files(); what FILE_CHECKs use is converted there
            "track_file" | "vrrp_track_file" => {
                for c in n.children() {
                    if c.key == "init_file" {
                        cx.unsupported(
                            c,
                            "dirigo does not write the file; a missing file fails the check",
                        );
                    }
                }
            }
            _ => cx.unknown(n, ""),
        }
    }
    Ok(out)
}
