//! What the SYN proxy counts ([`SynproxyCount`]).

use crate::counters::counter_enum;

counter_enum! {
    /// What the SYN proxy did (its drops are [`crate::lb::verdict::LbDrop`]s).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum SynproxyCount {
        /// SYN/ACKs with a cookie sent to clients.
        CookiesSent: count = "synproxy_cookies_sent",
        /// ACKs whose cookie was valid (a connection was opened toward a
        /// real server).
        CookiesValid: count = "synproxy_cookies_valid",
        /// Connections whose real server answered: spliced, translated
        /// from then on.
        Opened: count = "synproxy_opened",
        /// Real servers that did not answer in time: the client got an RST.
        ServerTimeout: count = "synproxy_server_timeout",
        /// Real servers that refused (RST): the client got an RST.
        ServerReset: count = "synproxy_server_reset",
        /// Timeout RSTs that could not be queued (the queue was full).
        ResetsLost: drop = "synproxy_resets_lost",
    }
}
