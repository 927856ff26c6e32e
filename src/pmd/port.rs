//! Ethernet ports: configuration, queues, start/stop, MAC, MTU, link, counters.

use super::error::{DpdkError, Result};
use super::mempool::Mempool;
use std::ffi::{CStr, CString};

/// What a port can do, from `rte_eth_dev_info_get`.
#[derive(Debug, Clone, Default)]
pub struct PortCaps {
    /// Driver name (e.g. "net_tap").
    pub driver: String,
    /// Maximum RX queues.
    pub max_rx_queues: u16,
    /// Maximum TX queues.
    pub max_tx_queues: u16,
    /// RSS hash types the port supports (0 = no RSS).
    pub rss_offloads: u64,
    /// Redirection table entries (0: none reported).
    pub reta_size: u16,
    /// RSS key length in bytes (0: not settable).
    pub hash_key_size: u8,
    /// RX offload capabilities.
    pub rx_offload_capa: u64,
    /// TX offload capabilities.
    pub tx_offload_capa: u64,
    /// Maximum MTU.
    pub max_mtu: u16,
    /// The kernel interface index behind the port (net_tap reports its
    /// tap's; 0 when the driver has none).
    pub if_index: u32,
}

impl PortCaps {
    /// Whether the port can spread IPv4 + L4 flows over queues by RSS.
    pub fn has_rss(&self) -> bool {
        self.rss_offloads != 0 && self.max_rx_queues > 1
    }
    /// Whether the port can compute IPv4, TCP and UDP checksums on TX.
    pub fn has_tx_csum(&self) -> bool {
        // SAFETY: reading constants exported by the shim.
        let want = unsafe {
            dpdk_sys::DG_ETH_TX_OFFLOAD_IPV4_CKSUM
                | dpdk_sys::DG_ETH_TX_OFFLOAD_TCP_CKSUM
                | dpdk_sys::DG_ETH_TX_OFFLOAD_UDP_CKSUM
        };
        self.tx_offload_capa & want == want
    }
}

/// Basic counters (`rte_eth_stats`): the control protocol's payload type,
/// filled here.
pub use dirigo_proto::view::PortCounters as PortStats;

/// Link state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkState {
    /// Link up.
    pub up: bool,
    /// Speed in Mbit/s.
    pub speed_mbps: u32,
    /// Full duplex.
    pub full_duplex: bool,
}

/// Port set-up parameters.
#[derive(Debug, Clone)]
pub struct PortSetup {
    /// RX queues (one per worker).
    pub rx_queues: u16,
    /// TX queues (one per worker, plus any extra).
    pub tx_queues: u16,
    /// RX descriptors per queue.
    pub rx_desc: u16,
    /// TX descriptors per queue.
    pub tx_desc: u16,
    /// Enable RSS over IPv4 addresses and TCP/UDP ports when supported.
    pub rss: bool,
    /// Enable TX IPv4/TCP/UDP checksum offload when supported.
    pub tx_csum: bool,
    /// Put the port in promiscuous mode.
    pub promiscuous: bool,
}

impl Default for PortSetup {
    fn default() -> Self {
        PortSetup {
            rx_queues: 1,
            tx_queues: 1,
            rx_desc: 1024,
            tx_desc: 1024,
            rss: true,
            tx_csum: true,
            promiscuous: true,
        }
    }
}

/// An ethdev port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port {
    id: u16,
}

impl Port {
    /// Find a port by its device name (vdev name such as "net_tap0", or a
    /// PCI address).
    pub fn by_name(name: &str) -> Result<Port> {
        let c = CString::new(name).map_err(|_| DpdkError {
            what: format!("port '{name}'"),
            reason: "name contains NUL".into(),
        })?;
        let mut id: u16 = 0;
        // SAFETY: c is a valid C string and id a valid out pointer.
        let rc = unsafe { dpdk_sys::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) };
        if rc != 0 {
            return Err(DpdkError {
                what: format!("port '{name}'"),
                reason: "no such DPDK device (check the --vdev/PCI arguments in [eal] args)".into(),
            });
        }
        Ok(Port { id })
    }

    /// Create the virtual device `name` with driver arguments `args`
    /// (`rte_dev_probe("name,args")`, e.g. "net_tap_x" with "iface=wan")
    /// after EAL start, and return its port.
    pub fn create_vdev(name: &str, args: &str) -> Result<Port> {
        let what = || format!("vdev '{name}'");
        let devargs = CString::new(format!("{name},{args}")).map_err(|_| DpdkError {
            what: what(),
            reason: "name or arguments contain NUL".into(),
        })?;
        // SAFETY: a valid C string; EAL is initialised (the caller holds
        // ports of it) and copies what it keeps.
        let rc = unsafe { dpdk_sys::rte_dev_probe(devargs.as_ptr()) };
        if rc != 0 {
            return Err(DpdkError::from_code(what(), rc));
        }
        Port::by_name(name)
    }

    /// Port by numeric id.
    pub fn from_id(id: u16) -> Port {
        Port { id }
    }

    /// Number of ports EAL found.
    pub fn count() -> u16 {
        // SAFETY: no preconditions after EAL init.
        unsafe { dpdk_sys::rte_eth_dev_count_avail() }
    }

    /// The DPDK port id.
    pub fn id(&self) -> u16 {
        self.id
    }

    /// Device capabilities.
    pub fn caps(&self) -> Result<PortCaps> {
        let mut info = dpdk_sys::rte_eth_dev_info::default();
        // SAFETY: info is a valid out struct.
        let rc = unsafe { dpdk_sys::rte_eth_dev_info_get(self.id, &mut info) };
        if rc != 0 {
            return Err(DpdkError::from_code(format!("port {} info", self.id), rc));
        }
        let driver = if info.driver_name.is_null() {
            String::new()
        } else {
            // SAFETY: driver_name is a static C string owned by the driver.
            unsafe { CStr::from_ptr(info.driver_name) }
                .to_string_lossy()
                .into_owned()
        };
        Ok(PortCaps {
            driver,
            max_rx_queues: info.max_rx_queues,
            max_tx_queues: info.max_tx_queues,
            rss_offloads: info.flow_type_rss_offloads,
            reta_size: info.reta_size,
            hash_key_size: info.hash_key_size,
            rx_offload_capa: info.rx_offload_capa,
            tx_offload_capa: info.tx_offload_capa,
            max_mtu: info.max_mtu,
            if_index: info.if_index,
        })
    }

    /// Configure queues and offloads, set up the queues with `pool`, with
    /// plain RSS over IPv4/IPv6 addresses and TCP/UDP ports when
    /// `setup.rss` and the device has it. Returns whether RSS and TX
    /// checksum offload were enabled.
    pub fn configure(&self, setup: &PortSetup, pool: &Mempool) -> Result<(bool, bool)> {
        let caps = self.caps()?;
        // SAFETY: reading constants exported by the shim.
        let plain = unsafe {
            dpdk_sys::DG_ETH_RSS_IP | dpdk_sys::DG_ETH_RSS_TCP | dpdk_sys::DG_ETH_RSS_UDP
        };
        let rss_hf = if setup.rss {
            plain & caps.rss_offloads
        } else {
            0
        };
        self.configure_rss(setup, rss_hf, &[], pool)
    }

    /// [`Port::configure`] with the RSS hash types `rss_hf` (0: no RSS;
    /// used only with more than one RX queue) and the RSS `key` (empty:
    /// the driver's own; else `hash_key_size` bytes). `setup.rss` is not
    /// looked at.
    pub fn configure_rss(
        &self,
        setup: &PortSetup,
        rss_hf: u64,
        key: &[u8],
        pool: &Mempool,
    ) -> Result<(bool, bool)> {
        let caps = self.caps()?;
        self.check_queues(setup, &caps)?;
        let mut conf = dpdk_sys::rte_eth_conf::default();
        let rss = setup.rx_queues > 1 && rss_hf != 0;
        // the driver copies the key during rte_eth_dev_configure
        let mut key = key.to_vec();
        if rss {
            set_rss(&mut conf, rss_hf, &mut key);
        }
        let tx_csum = setup.tx_csum && caps.has_tx_csum();
        if tx_csum {
            // SAFETY: reading constants exported by the shim.
            conf.txmode.offloads = unsafe {
                dpdk_sys::DG_ETH_TX_OFFLOAD_IPV4_CKSUM
                    | dpdk_sys::DG_ETH_TX_OFFLOAD_TCP_CKSUM
                    | dpdk_sys::DG_ETH_TX_OFFLOAD_UDP_CKSUM
            };
        }
        // SAFETY: conf is a fully initialised configuration struct.
        let rc = unsafe {
            dpdk_sys::rte_eth_dev_configure(self.id, setup.rx_queues, setup.tx_queues, &conf)
        };
        check_rc(rc, || format!("port {} configure", self.id))?;
        // SAFETY: plain query of a configured port.
        let socket = unsafe { dpdk_sys::rte_eth_dev_socket_id(self.id) };
        let socket = if socket < 0 { 0 } else { socket as u32 };
        for q in 0..setup.rx_queues {
            // SAFETY: null rxconf = driver defaults; the pool outlives the port.
            let rc = unsafe {
                dpdk_sys::rte_eth_rx_queue_setup(
                    self.id,
                    q,
                    setup.rx_desc,
                    socket,
                    std::ptr::null(),
                    pool.as_ptr(),
                )
            };
            check_rc(rc, || format!("port {} rx queue {q} setup", self.id))?;
        }
        for q in 0..setup.tx_queues {
            // SAFETY: null txconf = driver defaults (with the port offloads).
            let rc = unsafe {
                dpdk_sys::rte_eth_tx_queue_setup(
                    self.id,
                    q,
                    setup.tx_desc,
                    socket,
                    std::ptr::null(),
                )
            };
            check_rc(rc, || format!("port {} tx queue {q} setup", self.id))?;
        }
        if setup.promiscuous {
            // SAFETY: plain control call on a configured port; failure is
            // harmless (some drivers do not support it).
            unsafe { dpdk_sys::rte_eth_promiscuous_enable(self.id) };
        }
        Ok((rss, tx_csum))
    }

    /// Refuse more queues than the device has.
    fn check_queues(&self, setup: &PortSetup, caps: &PortCaps) -> Result<()> {
        if setup.rx_queues > caps.max_rx_queues || setup.tx_queues > caps.max_tx_queues {
            return Err(DpdkError {
                what: format!("port {} configure", self.id),
                reason: format!(
                    "{} rx / {} tx queues requested, device ({}) supports {} / {}",
                    setup.rx_queues,
                    setup.tx_queues,
                    caps.driver,
                    caps.max_rx_queues,
                    caps.max_tx_queues
                ),
            });
        }
        Ok(())
    }

    /// Program the redirection table: entry `i` sends to RX queue
    /// `reta[i]` (`reta.len()` must be the device's `reta_size`).
    pub fn set_reta(&self, reta: &[u16]) -> Result<()> {
        let what = || format!("port {} redirection table", self.id);
        let mut groups =
            vec![dpdk_sys::rte_eth_rss_reta_entry64::default(); reta.len().div_ceil(64)];
        for (i, &q) in reta.iter().enumerate() {
            let g = &mut groups[i / 64];
            g.mask |= 1u64 << (i % 64);
            g.reta[i % 64] = q;
        }
        let size = u16::try_from(reta.len()).map_err(|_| DpdkError {
            what: what(),
            reason: format!("{} entries", reta.len()),
        })?;
        // SAFETY: groups holds reta.len().div_ceil(64) entries of 64, as
        // rte_eth_dev_rss_reta_update reads for `size` entries.
        let rc =
            unsafe { dpdk_sys::rte_eth_dev_rss_reta_update(self.id, groups.as_mut_ptr(), size) };
        if rc != 0 {
            return Err(DpdkError::from_code(what(), rc));
        }
        Ok(())
    }

    /// Start the port.
    pub fn start(&self) -> Result<()> {
        // SAFETY: the port was configured.
        let rc = unsafe { dpdk_sys::rte_eth_dev_start(self.id) };
        if rc != 0 {
            return Err(DpdkError::from_code(format!("port {} start", self.id), rc));
        }
        Ok(())
    }

    /// Stop the port.
    pub fn stop(&self) -> Result<()> {
        // SAFETY: stopping a started or stopped port is allowed.
        let rc = unsafe { dpdk_sys::rte_eth_dev_stop(self.id) };
        if rc != 0 {
            return Err(DpdkError::from_code(format!("port {} stop", self.id), rc));
        }
        Ok(())
    }

    /// Close the port (after stop).
    pub fn close(&self) {
        // SAFETY: the port is stopped; closing releases its resources.
        unsafe { dpdk_sys::rte_eth_dev_close(self.id) };
    }

    /// The port's MAC address.
    pub fn mac(&self) -> Result<[u8; 6]> {
        let mut a = dpdk_sys::rte_ether_addr::default();
        // SAFETY: a is a valid out struct.
        let rc = unsafe { dpdk_sys::rte_eth_macaddr_get(self.id, &mut a) };
        if rc != 0 {
            return Err(DpdkError::from_code(format!("port {} mac", self.id), rc));
        }
        Ok(a.addr_bytes)
    }

    /// The port's MTU.
    pub fn mtu(&self) -> Result<u16> {
        let mut mtu = 0u16;
        // SAFETY: mtu is a valid out pointer.
        let rc = unsafe { dpdk_sys::rte_eth_dev_get_mtu(self.id, &mut mtu) };
        if rc != 0 {
            return Err(DpdkError::from_code(format!("port {} mtu", self.id), rc));
        }
        Ok(mtu)
    }

    /// Set the port's MTU.
    pub fn set_mtu(&self, mtu: u16) -> Result<()> {
        // SAFETY: plain control call.
        let rc = unsafe { dpdk_sys::rte_eth_dev_set_mtu(self.id, mtu) };
        if rc != 0 {
            return Err(DpdkError::from_code(
                format!("port {} set mtu {mtu}", self.id),
                rc,
            ));
        }
        Ok(())
    }

    /// Link state without waiting.
    pub fn link(&self) -> LinkState {
        let mut l = dpdk_sys::rte_eth_link::default();
        // SAFETY: l is a valid out struct.
        unsafe { dpdk_sys::rte_eth_link_get_nowait(self.id, &mut l) };
        LinkState {
            up: l.link_status() != 0,
            speed_mbps: l.link_speed,
            full_duplex: l.link_duplex() != 0,
        }
    }

    /// Basic counters.
    pub fn stats(&self) -> PortStats {
        let mut s = dpdk_sys::rte_eth_stats::default();
        // SAFETY: s is a valid out struct.
        unsafe { dpdk_sys::rte_eth_stats_get(self.id, &mut s) };
        PortStats {
            ipackets: s.ipackets,
            opackets: s.opackets,
            ibytes: s.ibytes,
            obytes: s.obytes,
            imissed: s.imissed,
            ierrors: s.ierrors,
            oerrors: s.oerrors,
            rx_nombuf: s.rx_nombuf,
        }
    }

    /// Extended counters as (name, value) pairs.
    pub fn xstats(&self) -> Vec<(String, u64)> {
        // SAFETY: a null array with size 0 asks for the count.
        let n = unsafe { dpdk_sys::rte_eth_xstats_get_names(self.id, std::ptr::null_mut(), 0) };
        if n <= 0 {
            return Vec::new();
        }
        let n = n as usize;
        let mut names = vec![dpdk_sys::rte_eth_xstat_name::default(); n];
        let mut vals = vec![dpdk_sys::rte_eth_xstat::default(); n];
        // SAFETY: both arrays hold n elements.
        let got_n =
            unsafe { dpdk_sys::rte_eth_xstats_get_names(self.id, names.as_mut_ptr(), n as u32) };
        // SAFETY: as above.
        let got_v = unsafe { dpdk_sys::rte_eth_xstats_get(self.id, vals.as_mut_ptr(), n as u32) };
        if got_n <= 0 || got_v <= 0 {
            return Vec::new();
        }
        let m = (got_n as usize).min(got_v as usize).min(n);
        vals[..m]
            .iter()
            .filter_map(|v| {
                let name = names.get(v.id as usize)?;
                // SAFETY: xstat names are NUL-terminated fixed arrays.
                let s = unsafe { CStr::from_ptr(name.name.as_ptr()) };
                Some((s.to_string_lossy().into_owned(), v.value))
            })
            .collect()
    }
}

/// RSS over the hash types `rss_hf` in `conf`, with `key` when not empty
/// (`conf` then points into `key`, which must outlive its use).
fn set_rss(conf: &mut dpdk_sys::rte_eth_conf, rss_hf: u64, key: &mut [u8]) {
    conf.rxmode.mq_mode = dpdk_sys::RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
    if !key.is_empty() {
        conf.rx_adv_conf.rss_conf.rss_key = key.as_mut_ptr();
        conf.rx_adv_conf.rss_conf.rss_key_len = key.len().min(255) as u8;
    }
}

/// A DPDK return code as a result: non-zero is the error `what()`.
fn check_rc(rc: i32, what: impl FnOnce() -> String) -> Result<()> {
    if rc != 0 {
        return Err(DpdkError::from_code(what(), rc));
    }
    Ok(())
}

/// RSS hash-type bits as DPDK defines them (for checking the sans-IO
/// planner's copies): IPV4, FRAG_IPV4, NONFRAG_IPV4_TCP,
/// NONFRAG_IPV4_UDP, NONFRAG_IPV4_OTHER, L3_SRC_ONLY, L3_DST_ONLY, and
/// IP | TCP | UDP.
pub fn rss_bits() -> [u64; 8] {
    // SAFETY: reading constants exported by the shim.
    unsafe {
        [
            dpdk_sys::DG_ETH_RSS_IPV4,
            dpdk_sys::DG_ETH_RSS_FRAG_IPV4,
            dpdk_sys::DG_ETH_RSS_NONFRAG_IPV4_TCP,
            dpdk_sys::DG_ETH_RSS_NONFRAG_IPV4_UDP,
            dpdk_sys::DG_ETH_RSS_NONFRAG_IPV4_OTHER,
            dpdk_sys::DG_ETH_RSS_L3_SRC_ONLY,
            dpdk_sys::DG_ETH_RSS_L3_DST_ONLY,
            dpdk_sys::DG_ETH_RSS_IP | dpdk_sys::DG_ETH_RSS_TCP | dpdk_sys::DG_ETH_RSS_UDP,
        ]
    }
}

/// DPDK's `rte_softrss`: the Toeplitz hash of `words` (host-order 32-bit
/// words, e.g. an IPv4 address) under `key`, as a NIC computes it. None
/// when `key` is shorter than the `4 * (words.len() + 1)` bytes it reads.
pub fn softrss(key: &[u8], words: &[u32]) -> Option<u32> {
    if key.len() < 4 * (words.len() + 1) {
        return None;
    }
    let mut w = words.to_vec();
    // SAFETY: w holds words.len() words; rte_softrss reads key bytes up to
    // 4 * (len + 1), which the check above guarantees.
    Some(unsafe { dpdk_sys::dg_softrss(w.as_mut_ptr(), w.len() as u32, key.as_ptr()) })
}
