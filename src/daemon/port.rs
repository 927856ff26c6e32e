//! A port as the daemon runs it.

use crate::pmd::port::Port;

/// One configured, started port.
#[derive(Debug, Clone)]
pub struct RunningPort {
    /// Config name.
    pub name: String,
    /// DPDK device name.
    pub device: String,
    /// The ethdev.
    pub port: Port,
    /// Its MAC.
    pub mac: [u8; 6],
    /// Its MTU.
    pub mtu: u16,
    /// RSS enabled.
    pub rss: bool,
    /// TX checksum offload enabled.
    pub tx_csum: bool,
    /// RX queues configured.
    pub rx_queues: u16,
    /// How its packets reach their owning worker (the start-up log line).
    pub steering: String,
}
