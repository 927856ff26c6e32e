//! The scheduler flags, ipvsadm `-b` ([`SchedFlags`]).

/// Scheduler flags (ipvsadm `-b`): sh-fallback/mh-fallback skip an
/// unavailable server; sh-port/mh-port hash the source port too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SchedFlags {
    /// `sh-fallback` / `mh-fallback`.
    pub fallback: bool,
    /// `sh-port` / `mh-port`.
    pub port: bool,
}
