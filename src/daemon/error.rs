//! What stops the daemon at start-up or while it runs, printed as one line.

use super::control;

/// A start-up or run-time failure, printed as one line.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] dirigo_config::ConfigError),
    /// EAL could not start.
    #[error("EAL init failed: {0} (are hugepages reserved? run scripts/setup-hugepages.sh as root; is another DPDK process using the same --file-prefix?)")]
    Eal(crate::pmd::DpdkError),
    /// A port could not be found or set up.
    #[error("port '{name}': {err}")]
    Port {
        /// The port's name in the config.
        name: String,
        /// What failed.
        err: crate::pmd::DpdkError,
    },
    /// Another DPDK failure.
    #[error("{0}")]
    Dpdk(#[from] crate::pmd::DpdkError),
    /// The state file is refused (`FILE:LINE: message`).
    #[error(transparent)]
    State(#[from] control::state_file::StateError),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}
