//! What `--version` says in every program: the crate version and the git
//! commit it was built from (`build.rs`; "unknown" outside git). The tools
//! link no DPDK: the DPDK a daemon runs with is in its `version` answer
//! (and in `dirigo --version`).

use std::sync::OnceLock;

/// The crate version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit of the build (12 hex digits), or "unknown".
pub const COMMIT: &str = env!("DIRIGO_GIT_COMMIT");

/// `0.1.0 (commit 0123456789ab)`: what clap prints after a tool's name for
/// `--version`.
pub fn long() -> &'static str {
    static LONG: OnceLock<String> = OnceLock::new();
    LONG.get_or_init(|| format!("{VERSION} (commit {COMMIT})"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_names_the_commit() {
        let l = super::long();
        assert!(l.starts_with(env!("CARGO_PKG_VERSION")), "{l}");
        assert!(l.ends_with(&format!("(commit {})", super::COMMIT)), "{l}");
        assert!(!l.contains("DPDK"), "{l}");
    }
}
