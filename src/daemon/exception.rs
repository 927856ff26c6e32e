//! The exception path's control side: one kernel interface per port that
//! names one, and the thread that moves packets between them and the
//! workers.
//!
//! At start [`setup`] creates each kernel interface with DPDK (net_tap, or
//! virtio-user over `/dev/vhost-net`), then over netlink gives it the
//! port's MAC and MTU, moves it into `[exception] netns` (created if
//! missing), brings it up and adds the port's addresses. [`run`] is the
//! `dirigo-exc` thread: it writes what the workers put on the exception
//! ring to the kernel interfaces (a system call per burst: never on a
//! worker) and puts what the kernel sends on the inject ring, which worker
//! 0 transmits on the port's queue 0 — so a port's TX queues keep one
//! writer each.

use super::error::DaemonError;
use super::port::RunningPort;
use crate::dataplane::exception::TokenBucket;
use crate::dataplane::worker::TO_PIPELINE;
use crate::kernel::link::Rtnl;
use crate::kernel::netns::Netns;
use crate::net::buf::PacketBuf;
use crate::pmd::mbuf::Burst;
use crate::pmd::mempool::Mempool;
use crate::pmd::port::{Port, PortSetup};
use crate::pmd::ring::MbufRing;
use dirigo_config::{Config, ExceptionBackend, ExceptionConfig, Port as PortConfig};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Where `/dev/vhost-net` is (virtio-user needs it).
pub const VHOST_NET: &str = "/dev/vhost-net";

/// Slots of the exception ring (workers -> exception thread).
pub const RING_SIZE: u32 = 4096;

/// What the exception thread counts for one kernel interface.
#[derive(Debug, Default)]
pub struct KernelCounters {
    /// Frames written to the kernel interface.
    pub to_kernel: AtomicU64,
    /// Frames the kernel interface did not take (its queue full).
    pub write_failed: AtomicU64,
    /// Frames the kernel sent out of the interface.
    pub from_kernel: AtomicU64,
    /// Frames from the kernel lost to a full inject ring.
    pub inject_full: AtomicU64,
    /// Frames from the kernel for dirigo itself (to a VIP: a health
    /// check probing through dirigo), handed to worker 0's pipeline.
    pub to_dirigo: AtomicU64,
    /// ARP requests and Neighbour Solicitations of the kernel for a VIP,
    /// answered here.
    pub vip_answers: AtomicU64,
}

/// One port's kernel interface.
#[derive(Debug)]
pub struct KernelIf {
    /// The dirigo port index it belongs to.
    pub port: u16,
    /// Its name in the kernel.
    pub name: String,
    /// The DPDK port of the kernel side (net_tap / virtio-user).
    pub dev: Port,
    /// Its DPDK device name.
    pub device: String,
    /// Its counters.
    pub counters: KernelCounters,
}

/// Every kernel interface, the ring the workers fill and each port's
/// rate limit.
pub struct ExceptionPath {
    /// The kernel interfaces.
    pub ifs: Vec<KernelIf>,
    /// Packets from the workers for the kernel (MP/SC).
    pub ring: MbufRing,
    /// Each port's rate limit by port index (ports without a kernel
    /// interface: an empty bucket, never used).
    pub limits: Vec<TokenBucket>,
    /// The backend.
    pub backend: ExceptionBackend,
    /// The namespace the interfaces are in (`None`: dirigo's own).
    pub netns: Option<Netns>,
}

impl ExceptionPath {
    /// The kernel interface of port index `port`.
    pub fn of_port(&self, port: u16) -> Option<&KernelIf> {
        self.ifs.iter().find(|k| k.port == port)
    }

    /// Run `f` with a netlink socket in the interfaces' namespace.
    pub fn netlink<T: Send>(
        &self,
        f: impl FnOnce(&mut Rtnl) -> Result<T, DaemonError> + Send,
    ) -> Result<T, DaemonError> {
        let go = || {
            let mut nl = Rtnl::open().map_err(kerr)?;
            f(&mut nl)
        };
        match &self.netns {
            Some(ns) => ns.run(go).map_err(kerr)?,
            None => go(),
        }
    }

    /// Add (or remove) `addr/len` (IPv4, or IPv6: added `nodad`) on port
    /// `port`'s kernel interface, as `dirigoctl addr add/del` does on the
    /// port. No interface: nothing.
    pub fn set_addr(&self, port: u16, addr: IpAddr, len: u8, add: bool) -> Result<(), DaemonError> {
        let Some(k) = self.of_port(port) else {
            return Ok(());
        };
        let name = k.name.clone();
        self.netlink(move |nl| {
            let idx = index(nl, &name)?;
            if add {
                nl.add_addr(idx, addr, len)
            } else {
                nl.del_addr(idx, addr, len)
            }
            .map_err(kerr)
        })
    }
}

fn kerr(e: crate::kernel::KernelError) -> DaemonError {
    DaemonError::Other(format!("exception path: {e}"))
}

fn index(nl: &mut Rtnl, name: &str) -> Result<u32, DaemonError> {
    nl.index_of(name)
        .map_err(kerr)?
        .ok_or_else(|| DaemonError::Other(format!("exception path: no interface '{name}'")))
}

/// The DPDK device name and arguments of a port's kernel interface.
fn vdev(backend: ExceptionBackend, i: usize, name: &str, mac: [u8; 6]) -> (String, String) {
    let mac = dirigo_proto::view::MacAddr(mac);
    match backend {
        ExceptionBackend::Tap => (format!("net_tap_dgx{i}"), format!("iface={name},mac={mac}")),
        ExceptionBackend::VirtioUser => (
            format!("virtio_user_dgx{i}"),
            format!("path={VHOST_NET},queues=1,queue_size=1024,iface={name},mac={mac}"),
        ),
    }
}

/// Create and configure the kernel interfaces `cfg` asks for; `None`
/// without an `[exception]` section. Every failure is one line naming the
/// port, the interface or the namespace.
pub fn setup(
    cfg: &Config,
    ports: &[RunningPort],
    pool: &Mempool,
) -> Result<Option<ExceptionPath>, DaemonError> {
    let Some(x) = &cfg.exception else {
        return Ok(None);
    };
    if x.backend == ExceptionBackend::VirtioUser && !std::path::Path::new(VHOST_NET).exists() {
        return Err(DaemonError::Other(format!(
            "[exception] backend = \"virtio-user\" needs {VHOST_NET}, which this machine does not have \
             (load the vhost_net module: modprobe vhost_net), or use backend = \"tap\""
        )));
    }
    let netns = match &x.netns {
        Some(n) => Some(Netns::ensure(n).map_err(kerr)?),
        None => None,
    };
    let mut ifs = Vec::new();
    let mut limits = vec![TokenBucket::new(0, 0); ports.len()];
    let mut root = Rtnl::open().map_err(kerr)?;
    for (i, (pc, rp)) in cfg.ports.iter().zip(ports).enumerate() {
        let Some(name) = &pc.kernel_interface else {
            continue;
        };
        let (device, dev) = create_dev(x, i, &pc.name, name, rp, pool)?;
        configure_link(&mut root, netns.as_ref(), pc, rp, name)?;
        let rate = pc.kernel_rate_limit_pps as u64;
        limits[i] = TokenBucket::new(rate, x.rate_limit_burst as u64);
        eprintln!(
            "dirigo: port {} kernel interface {name} ({}{}): mac {} mtu {}, rate limit {rate}/s per worker",
            pc.name,
            x.backend.name(),
            x.netns
                .as_ref()
                .map(|n| format!(", netns {n}"))
                .unwrap_or_default(),
            dirigo_proto::view::MacAddr(rp.mac),
            rp.mtu
        );
        ifs.push(KernelIf {
            port: i as u16,
            name: name.clone(),
            dev,
            device,
            counters: KernelCounters::default(),
        });
    }
    let ring = MbufRing::new("dirigo-exception", RING_SIZE, false, true)?;
    Ok(Some(ExceptionPath {
        ifs,
        ring,
        limits,
        backend: x.backend,
        netns,
    }))
}

/// An error about the port named `port`.
fn port_err(port: &str, what: String) -> DaemonError {
    DaemonError::Other(format!("port '{port}': {what}"))
}

/// Create port `i`'s (`port`'s) kernel interface `name` with DPDK, with
/// the port's MAC, and start it: its DPDK device name and port.
fn create_dev(
    x: &ExceptionConfig,
    i: usize,
    port: &str,
    name: &str,
    rp: &RunningPort,
    pool: &Mempool,
) -> Result<(String, Port), DaemonError> {
    let (device, args) = vdev(x.backend, i, name, rp.mac);
    let dev = Port::create_vdev(&device, &args).map_err(|e| {
        port_err(
            port,
            format!(
                "cannot create kernel interface '{name}' ({}): {} (is there already an interface of that name?)",
                x.backend.name(),
                e.reason
            ),
        )
    })?;
    let setup = PortSetup {
        rx_queues: 1,
        tx_queues: 1,
        rx_desc: 512,
        tx_desc: 512,
        rss: false,
        tx_csum: false,
        promiscuous: false,
    };
    dev.configure(&setup, pool)
        .and_then(|_| dev.start())
        .map_err(|e| port_err(port, format!("kernel interface '{name}': {e}")))?;
    Ok((device, dev))
}

/// Over netlink, give the kernel interface `name` of port `pc` (running
/// as `rp`) the port's MAC and MTU, move it into `netns`, bring it up and
/// add the port's addresses.
fn configure_link(
    root: &mut Rtnl,
    netns: Option<&Netns>,
    pc: &PortConfig,
    rp: &RunningPort,
    name: &str,
) -> Result<(), DaemonError> {
    let perr = |what: String| port_err(&pc.name, what);
    let kerr = |e: crate::kernel::KernelError| perr(format!("kernel interface '{name}': {e}"));
    let idx = root
        .index_of(name)
        .map_err(kerr)?
        .ok_or_else(|| perr(format!("kernel interface '{name}' did not appear")))?;
    root.set_mac(idx, rp.mac).map_err(kerr)?;
    root.set_mtu(idx, rp.mtu as u32).map_err(kerr)?;
    if let Some(ns) = netns {
        root.set_netns(idx, ns).map_err(kerr)?;
    }
    // IPv4, then IPv6 (`nodad`: dirigo answers duplicate address
    // detection for them on the wire; the kernel's own link-local address,
    // EUI-64 of the port's MAC, is dirigo's too)
    let addrs: Vec<(IpAddr, u8)> = pc
        .addresses
        .iter()
        .map(|c| (Ipv4Addr::from(c.addr).into(), c.len))
        .chain(
            pc.addresses6
                .iter()
                .map(|c| (Ipv6Addr::from(c.addr).into(), c.len)),
        )
        .collect();
    let name2 = name.to_string();
    let configure = move || -> Result<(), crate::kernel::KernelError> {
        let mut nl = Rtnl::open()?;
        let idx = nl.index_of(&name2)?.unwrap_or(idx);
        nl.set_up(idx, true)?;
        for &(a, len) in &addrs {
            nl.add_addr(idx, a, len)?;
        }
        Ok(())
    };
    match netns {
        Some(ns) => ns.run(configure).map_err(kerr)?.map_err(kerr)?,
        None => configure().map_err(kerr)?,
    }
    Ok(())
}

/// The exception thread: until `stop`, move packets between the workers
/// and the kernel interfaces. It sleeps 200 µs when a round moved nothing
/// (a millisecond-scale delay is nothing to ssh or BGP, and an idle
/// director keeps its second core for the workers).
///
/// What the kernel sends to dirigo itself does not leave the port (dirigo
/// would never see it there): an ARP request for a VIP is answered here
/// with the port's MAC (a Neighbour Solicitation for an IPv6 VIP with a
/// Neighbour Advertisement), and an IPv4 or IPv6 frame to the port's MAC
/// (so to a VIP: the kernel's own addresses are local to it) goes to worker 0's
/// pipeline as if received on the port — so a health check can probe a
/// real server through the VIP, with dirigo's own rewrite (`via_vip`).
pub fn run(
    x: &ExceptionPath,
    inject: &MbufRing,
    net: &arc_swap::ArcSwap<crate::net::view::NetView>,
    pool: &Mempool,
    stop: &AtomicBool,
) {
    let mut b = Burst::new();
    let mut out: Vec<Burst> = x.ifs.iter().map(|_| Burst::new()).collect();
    while !stop.load(Relaxed) {
        let mut moved = 0;
        // workers -> kernel
        let n = x.ring.dequeue(&mut b);
        moved += n;
        for m in b.drain() {
            let Some(i) = x.ifs.iter().position(|k| k.port == m.port()) else {
                continue; // freed
            };
            if out[i].is_full() {
                flush(&x.ifs[i], &mut out[i]);
            }
            let _ = out[i].push(m);
        }
        for (k, o) in x.ifs.iter().zip(out.iter_mut()) {
            flush(k, o);
        }
        // kernel -> ports (worker 0 sends them on queue 0), or -> dirigo
        let view = net.load();
        for (i, k) in x.ifs.iter().enumerate() {
            let n = b.rx(k.dev.id(), 0);
            moved += n;
            let Some(mac) = view.port(k.port).map(|p| p.mac) else {
                b.free_all();
                continue;
            };
            for mut m in b.drain() {
                let port = match to_dirigo(m.data(), mac, &view) {
                    ToDirigo::No => k.port,
                    ToDirigo::Frame => {
                        k.counters.to_dirigo.fetch_add(1, Relaxed);
                        k.port | TO_PIPELINE
                    }
                    ToDirigo::VipAnswer { reply, len } => {
                        let reply = reply.get(..len).unwrap_or(&[]);
                        if let Some(r) = pool.alloc().and_then(|r| with_frame(r, reply)) {
                            if out[i].is_full() {
                                flush(k, &mut out[i]);
                            }
                            let _ = out[i].push(r);
                            k.counters.vip_answers.fetch_add(1, Relaxed);
                        }
                        continue; // the request itself goes nowhere
                    }
                };
                m.set_port(port);
                match inject.enqueue(m) {
                    Ok(()) => k.counters.from_kernel.fetch_add(1, Relaxed),
                    Err(_) => k.counters.inject_full.fetch_add(1, Relaxed),
                };
            }
            flush(k, &mut out[i]);
        }
        if moved == 0 {
            crate::clock::nap(Duration::from_micros(200));
        }
    }
}

/// What a frame from a kernel interface is to dirigo.
enum ToDirigo {
    /// Not for dirigo: out of the port.
    No,
    /// IPv4 or IPv6 to the port's MAC: into the pipeline.
    Frame,
    /// An ARP request or a Neighbour Solicitation for a VIP: this answer
    /// (`len` bytes) goes back to the kernel.
    VipAnswer {
        reply: [u8; crate::net::nd::ND_FRAME_LEN],
        len: usize,
    },
}

fn to_dirigo(frame: &[u8], mac: [u8; 6], view: &crate::net::view::NetView) -> ToDirigo {
    use crate::net::wire::ethernet;
    let mut reply = [0u8; crate::net::nd::ND_FRAME_LEN];
    if let Some(((smac, sip), tip)) = crate::net::arp::request_of(frame) {
        if view.addrs().is_vip(tip)
            && crate::net::arp::build_reply(&mut reply, mac, tip, smac, sip).is_some()
        {
            // padded to Ethernet's minimum, as before
            return ToDirigo::VipAnswer { reply, len: 60 };
        }
        return ToDirigo::No;
    }
    if let Some(len) = crate::net::nd::kernel_vip_solicit(frame, mac, view.addrs(), &mut reply) {
        return ToDirigo::VipAnswer { reply, len };
    }
    match ethernet::Frame::new_checked(frame) {
        Ok(eth)
            if eth.dst() == mac
                && (eth.ethertype() == ethernet::ethertype::IPV4
                    || eth.ethertype() == ethernet::ethertype::IPV6) =>
        {
            ToDirigo::Frame
        }
        _ => ToDirigo::No,
    }
}

/// `m` holding `frame`.
fn with_frame(mut m: crate::pmd::mbuf::Mbuf, frame: &[u8]) -> Option<crate::pmd::mbuf::Mbuf> {
    if !m.append(frame.len()) {
        return None;
    }
    m.data_mut().copy_from_slice(frame);
    Some(m)
}

fn flush(k: &KernelIf, b: &mut Burst) {
    if b.is_empty() {
        return;
    }
    let (sent, dropped) = b.tx(k.dev.id(), 0);
    k.counters.to_kernel.fetch_add(sent as u64, Relaxed);
    k.counters.write_failed.fetch_add(dropped as u64, Relaxed);
}

/// Stop and close the kernel interfaces' devices (the interfaces go with
/// them).
pub fn close(x: &ExceptionPath) {
    for k in &x.ifs {
        let _ = k.dev.stop();
        k.dev.close();
    }
}
