//! The `dirigo` daemon: config -> EAL -> ports -> workers + control thread,
//! until SIGINT/SIGTERM; then workers joined, ports stopped, counters printed.

use crate::ctl::config::Config;
use crate::dataplane::stats::PublishedCounters;
use crate::dataplane::worker::{self, WorkerIo};
use crate::dataplane::{Pipeline, Verdict};
use crate::net::buf::PacketBuf;
use crate::pmd::eal::Eal;
use crate::pmd::lcore::{self, TscClock};
use crate::pmd::mempool::Mempool;
use crate::pmd::port::{Port, PortSetup};
use crate::pmd::ring::MbufRing;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A start-up or run-time failure, printed as one line.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] crate::ctl::config::ConfigError),
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
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

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
}

/// A pipeline that counts and drops everything (used until the stack and
/// balancing core are wired in, and by `--dry-run` style tests).
#[derive(Debug, Default)]
pub struct DropAll {
    /// Packets seen.
    pub seen: u64,
}

impl Pipeline for DropAll {
    fn begin_burst(&mut self, _now_ns: u64) {}
    fn process<B: PacketBuf>(&mut self, _buf: &mut B, _port: u16, _now_ns: u64) -> Verdict {
        self.seen += 1;
        Verdict::Drop
    }
    fn housekeeping(&mut self, _now_ns: u64) {}
}

/// Start EAL and the ports described by `cfg`.
pub fn start_ports(
    cfg: &Config,
    workers: u16,
    pool: &Mempool,
) -> Result<Vec<RunningPort>, DaemonError> {
    let mut out = Vec::new();
    for pc in &cfg.ports {
        let perr = |err| DaemonError::Port {
            name: pc.name.clone(),
            err,
        };
        let port = Port::by_name(&pc.device).map_err(perr)?;
        let setup = PortSetup {
            rx_queues: workers,
            tx_queues: workers,
            rx_desc: pc.rx_desc,
            tx_desc: pc.tx_desc,
            rss: cfg.dataplane.rss,
            tx_csum: cfg.dataplane.tx_checksum_offload,
            promiscuous: true,
        };
        let (rss, tx_csum) = port.configure(&setup, pool).map_err(perr)?;
        if let Some(m) = pc.mtu {
            port.set_mtu(m).map_err(perr)?;
        }
        port.start().map_err(perr)?;
        let mac = port.mac().map_err(perr)?;
        let mtu = port.mtu().unwrap_or(1500);
        out.push(RunningPort {
            name: pc.name.clone(),
            device: pc.device.clone(),
            port,
            mac,
            mtu,
            rss,
            tx_csum,
        });
    }
    Ok(out)
}

fn mac_str(m: &[u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// Run the daemon until a signal. `stop` may also be set by the caller.
pub fn run(cfg: Config, stop: Arc<AtomicBool>) -> Result<(), DaemonError> {
    let eal = Eal::init(&cfg.eal.args).map_err(DaemonError::Eal)?;
    let lcores = lcore::worker_lcores();
    if lcores.is_empty() {
        return Err(DaemonError::Other(
            "no worker lcore: give EAL at least two lcores (e.g. \"-l\", \"0-1\"); the first is the control thread".into(),
        ));
    }
    let workers = lcores.len() as u16;
    let pool = Mempool::new("dirigo-pkt", cfg.dataplane.mbufs, 256)?;
    let ports = start_ports(&cfg, workers, &pool)?;
    for p in &ports {
        eprintln!(
            "dirigo: port {} ({}) up: mac {} mtu {} rss {} tx-csum-offload {}",
            p.name,
            p.device,
            mac_str(&p.mac),
            p.mtu,
            if p.rss { "on" } else { "off" },
            if p.tx_csum { "on" } else { "off" }
        );
    }
    let inject = MbufRing::new("dirigo-inject", 1024, false, true)?;
    let port_ids: Vec<u16> = ports.iter().map(|p| p.port.id()).collect();
    let io_stats: Vec<PublishedCounters> = (0..workers)
        .map(|_| PublishedCounters::new(3 * ports.len()))
        .collect();
    let clock = TscClock::new();
    eprintln!(
        "dirigo: {} worker(s) on lcore(s) {:?}; running (SIGINT/SIGTERM to stop)",
        workers, lcores
    );

    let worker_fn = |index: usize, _lcore: u32| {
        let io = WorkerIo {
            ports: &port_ids,
            queue: index as u16,
            inject: if index == 0 { Some(&inject) } else { None },
            stop: &stop,
            housekeeping_ns: 1_000_000,
            published: &io_stats[index],
        };
        let mut pipe = DropAll::default();
        worker::run(&mut pipe, &io, &clock);
    };
    lcore::run_workers(&lcores, &worker_fn, || {
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20));
        }
    })?;

    eprintln!("dirigo: stopping");
    for (i, p) in ports.iter().enumerate() {
        let _ = p.port.stop();
        let s = p.port.stats();
        let (mut rx, mut tx, mut full) = (0u64, 0u64, 0u64);
        for w in &io_stats {
            rx += w.get(3 * i);
            tx += w.get(3 * i + 1);
            full += w.get(3 * i + 2);
        }
        println!(
            "port {} ({}): rx {} pkts {} bytes, tx {} pkts {} bytes, missed {}, rx-errors {}, tx-errors {}, rx-nombuf {}; workers: rx {} tx {} tx-full {}",
            p.name, p.device, s.ipackets, s.ibytes, s.opackets, s.obytes, s.imissed, s.ierrors, s.oerrors, s.rx_nombuf, rx, tx, full
        );
        p.port.close();
    }
    drop(inject);
    drop(eal);
    Ok(())
}
