//! What a virtual server hands down to its real servers, and they to
//! their checks.

use super::model::Tunnel;
use super::values::{arg, flag, seconds, uint};
use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;

/// What a virtual server or real server hands down to its checks.
#[derive(Debug, Clone, Default)]
pub(super) struct Inherit {
    pub(super) delay_loop: Option<f64>,
    pub(super) connect_timeout: Option<f64>,
    pub(super) retry: Option<u32>,
    pub(super) delay_before_retry: Option<f64>,
    pub(super) inhibit: Option<bool>,
    pub(super) virtualhost: Option<String>,
}

impl Inherit {
    /// These values, the unset ones from `parent`.
    pub(super) fn under(&self, parent: &Inherit) -> Inherit {
        Inherit {
            delay_loop: self.delay_loop.or(parent.delay_loop),
            connect_timeout: self.connect_timeout.or(parent.connect_timeout),
            retry: self.retry.or(parent.retry),
            delay_before_retry: self.delay_before_retry.or(parent.delay_before_retry),
            inhibit: self.inhibit.or(parent.inhibit),
            virtualhost: self
                .virtualhost
                .clone()
                .or_else(|| parent.virtualhost.clone()),
        }
    }

    /// Take `n` if it is one of the inherited keywords.
    pub(super) fn take(&mut self, n: &Node) -> Result<bool, Diag> {
        match n.key.as_str() {
            "delay_loop" => self.delay_loop = Some(seconds(n)?),
            "connect_timeout" => self.connect_timeout = Some(seconds(n)?),
            "retry" | "nb_get_retry" => {
                self.retry = Some(uint(n, "a number of retries", 0, u32::MAX)?)
            }
            "delay_before_retry" => self.delay_before_retry = Some(seconds(n)?),
            "inhibit_on_failure" => self.inhibit = Some(flag(n)?),
            "virtualhost" => self.virtualhost = Some(arg(n, 0, "a host name")?.to_string()),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A virtual server's settings its real servers need.
pub(super) struct Vs {
    pub(super) vip: std::net::IpAddr,
    pub(super) port: u16,
    pub(super) proto: &'static str,
    /// `lb_kind` and its tunnel.
    pub(super) method: Option<(&'static str, Tunnel)>,
    pub(super) weight: u32,
    pub(super) inherit: Inherit,
    /// Whether "no lb_kind" was already said.
    pub(super) told_nat: bool,
}
