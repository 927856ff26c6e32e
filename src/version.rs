//! What the daemon's `--version` and its `version` answer say: the
//! crate version and git commit (`dirigo_proto::version`) and the DPDK
//! library linked at run time.

use std::sync::OnceLock;

pub use dirigo_proto::version::{COMMIT, VERSION};

/// The DPDK version linked at run time ("22.11.11"), read once.
pub fn dpdk() -> &'static str {
    static DPDK: OnceLock<String> = OnceLock::new();
    DPDK.get_or_init(crate::pmd::eal::dpdk_version)
}

/// `0.1.0 (commit 0123456789ab, DPDK 22.11.11)`: what clap prints after
/// the program's name for `--version`.
pub fn long() -> &'static str {
    static LONG: OnceLock<String> = OnceLock::new();
    LONG.get_or_init(|| format!("{VERSION} (commit {COMMIT}, DPDK {})", dpdk()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_names_commit_and_dpdk() {
        let l = super::long();
        assert!(l.starts_with(env!("CARGO_PKG_VERSION")), "{l}");
        assert!(l.contains(&format!("commit {}", super::COMMIT)), "{l}");
        let dpdk = super::dpdk();
        // "22.11.11": digits and dots, at least year.month
        assert!(dpdk.split('.').count() >= 2, "{dpdk}");
        assert!(
            dpdk.split('.').next().unwrap().parse::<u32>().is_ok(),
            "{dpdk}"
        );
        assert!(l.ends_with(&format!("DPDK {dpdk})")), "{l}");
    }
}
