//! ipvsadm's defaults as constants.

/// Persistence timeout when `-p` has no value (seconds).
pub const PERSISTENT_TIMEOUT: u32 = 300;
/// Largest timeout ipvsadm accepts (31 days).
pub const MAX_TIMEOUT: u32 = 86400 * 31;
/// The version line IPVS prints.
pub const IPVS_VERSION: &str = "1.2.1";
