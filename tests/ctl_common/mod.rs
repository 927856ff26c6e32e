//! A small but real in-memory Handler for the control-plane tests: the
//! ipvsadm semantics (duplicates, unknown service/dest, ranges, atomic
//! batches) without the balancing core.
#![allow(dead_code)]

use dirigo::ctl::server::{Handler, Server, ServerConfig, StopHandle};
use dirigo::lb::spec::{DestSpec, ServiceKey, ServiceSpec, Timeouts};
use dirigo_proto::proto::{BatchCmd, CtlError, ErrCode, Request, Response};
use dirigo_proto::view::*;
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

#[derive(Clone, Default)]
pub struct State {
    pub services: BTreeMap<ServiceKey, (ServiceSpec, Vec<DestSpec>)>,
    pub timeouts: Timeouts,
    pub addrs: Vec<AddrInfo>,
    pub neigh: Vec<NeighInfo>,
    pub zeroed: u32,
}

#[derive(Default)]
pub struct Mock {
    pub state: Mutex<State>,
}

/// The service `key` with its real servers.
fn service<'a>(
    st: &'a mut State,
    key: &ServiceKey,
) -> Result<&'a mut (ServiceSpec, Vec<DestSpec>), CtlError> {
    st.services.get_mut(key).ok_or_else(CtlError::no_service)
}

/// `dest` if its weight is in ipvsadm's range.
fn weighed(dest: DestSpec) -> Result<DestSpec, CtlError> {
    if dest.weight > 65535 {
        return Err(CtlError::invalid("Illegal weight specified"));
    }
    Ok(dest)
}

fn apply(st: &mut State, cmd: BatchCmd) -> Result<(), CtlError> {
    match cmd {
        BatchCmd::AddService { service: spec } => {
            if st.services.contains_key(&spec.key) {
                return Err(CtlError::service_exists());
            }
            if spec.key.port == 0 && spec.persistent.is_none() {
                return Err(CtlError::invalid("zero port for a non-persistent service"));
            }
            st.services.insert(spec.key, (spec, Vec::new()));
        }
        BatchCmd::EditService { service: spec } => {
            let key = spec.key;
            service(st, &key)?.0 = spec;
        }
        BatchCmd::DelService { key } => {
            st.services.remove(&key).ok_or_else(CtlError::no_service)?;
        }
        BatchCmd::Clear => st.services.clear(),
        BatchCmd::AddDest { service: key, dest } => {
            let dests = &mut service(st, &key)?.1;
            let dest = weighed(dest)?;
            if dests.iter().any(|d| d.key == dest.key) {
                return Err(CtlError::dest_exists());
            }
            dests.push(dest);
        }
        BatchCmd::EditDest { service: key, dest } => {
            let dests = &mut service(st, &key)?.1;
            let dest = weighed(dest)?;
            let d = dests
                .iter_mut()
                .find(|d| d.key == dest.key)
                .ok_or_else(CtlError::no_dest)?;
            *d = dest;
        }
        BatchCmd::DelDest { service: key, dest } => {
            let dests = &mut service(st, &key)?.1;
            let n = dests.len();
            dests.retain(|d| d.key != dest);
            if dests.len() == n {
                return Err(CtlError::no_dest());
            }
        }
        BatchCmd::AddLaddr { service: key, addr } => {
            let l = &mut service(st, &key)?.0.local_addresses;
            if l.contains(&addr) {
                return Err(CtlError::new(
                    ErrCode::Exists,
                    "local address already exists",
                ));
            }
            l.push(addr);
        }
        BatchCmd::DelLaddr { service: key, addr } => {
            let l = &mut service(st, &key)?.0.local_addresses;
            let n = l.len();
            l.retain(|a| *a != addr);
            if l.len() == n {
                return Err(CtlError::new(ErrCode::NotFound, "No such local address"));
            }
        }
        BatchCmd::SetTimeouts { timeouts: t } => {
            if t.tcp != 0 {
                st.timeouts.tcp = t.tcp;
            }
            if t.tcpfin != 0 {
                st.timeouts.tcpfin = t.tcpfin;
            }
            if t.udp != 0 {
                st.timeouts.udp = t.udp;
            }
        }
        BatchCmd::Zero { service: key } => {
            if let Some(k) = key {
                service(st, &k)?;
            }
            st.zeroed += 1;
        }
    }
    Ok(())
}

fn dest_info(d: &DestSpec, stats: bool) -> DestInfo {
    DestInfo {
        spec: d.clone(),
        active: d.weight,
        inactive: 1,
        persist: 0,
        stats: if stats {
            Stats {
                conns: 10,
                inpkts: 200,
                outpkts: 0,
                inbytes: 300_000_000,
                outbytes: 0,
            }
        } else {
            Stats::default()
        },
        rate: Rate::default(),
    }
}

impl Handler for Mock {
    fn handle(&self, req: Request) -> Result<Response, CtlError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match req {
            Request::Mutate(c) => apply(&mut st, c).map(|_| Response::Done),
            Request::GetTimeouts => Ok(Response::Timeouts(st.timeouts)),
            Request::RestoreBatch { cmds } => {
                let mut tmp = st.clone();
                for (i, c) in cmds.into_iter().enumerate() {
                    apply(&mut tmp, c).map_err(|e| e.at(i))?;
                }
                *st = tmp;
                Ok(Response::Done)
            }
            Request::List(o) => {
                if let Some(k) = o.service {
                    if !st.services.contains_key(&k) {
                        return Err(CtlError::no_service());
                    }
                }
                let services = st
                    .services
                    .values()
                    .filter(|(s, _)| o.service.is_none_or(|k| k == s.key))
                    .map(|(s, d)| ServiceInfo {
                        spec: s.clone(),
                        stats: if o.stats {
                            Stats {
                                conns: 10,
                                ..Default::default()
                            }
                        } else {
                            Stats::default()
                        },
                        rate: Rate::default(),
                        dests: d.iter().map(|d| dest_info(d, o.stats)).collect(),
                    })
                    .collect();
                Ok(Response::Services(ServiceList {
                    conn_tab_size: 4096,
                    services,
                }))
            }
            Request::ListConns { .. } => {
                let mut v = Vec::new();
                for (s, ds) in st.services.values() {
                    for (i, d) in ds.iter().enumerate() {
                        let port = if d.key.port == 0 {
                            s.key.port
                        } else {
                            d.key.port
                        };
                        v.push(ConnInfo {
                            proto: s.key.proto,
                            client: SocketAddrV4::new(
                                Ipv4Addr::new(192, 0, 2, 1),
                                40000 + i as u16,
                            )
                            .into(),
                            vaddr: std::net::SocketAddr::new(s.key.vip, s.key.port),
                            dest: std::net::SocketAddr::new(d.key.addr, port),
                            state: "ESTABLISHED".into(),
                            expire_secs: 61,
                        });
                    }
                }
                Ok(Response::Conns(v))
            }
            Request::Ports { xstats } => Ok(Response::Ports(vec![PortInfo {
                id: 0,
                name: "net_tap0".into(),
                mac: MacAddr([2, 0, 0, 0, 0, 1]),
                link_up: true,
                speed_mbps: 10000,
                full_duplex: true,
                mtu: 1500,
                counters: PortCounters {
                    ipackets: 1234,
                    opackets: 1200,
                    ..Default::default()
                },
                xstats: if xstats {
                    vec![NamedCounter {
                        name: "rx_good_packets".into(),
                        value: 1234,
                    }]
                } else {
                    vec![]
                },
                kernel: Some(KernelIfInfo {
                    name: "wan".into(),
                    netns: Some("dirigo".into()),
                    backend: "tap".into(),
                    to_kernel: 17,
                    rate_limited: 3,
                    ..Default::default()
                }),
            }])),
            Request::Addresses => Ok(Response::Addresses(st.addrs.clone())),
            Request::AddrAdd {
                port,
                addr,
                prefix_len,
            } => {
                if port == 999 {
                    panic!("mock handler panics on port 999");
                }
                if port > 0 {
                    return Err(CtlError::new(ErrCode::NotFound, format!("no port {port}")));
                }
                if st.addrs.iter().any(|a| a.addr == addr) {
                    return Err(CtlError::new(
                        ErrCode::Exists,
                        format!("{addr} already configured"),
                    ));
                }
                st.addrs.push(AddrInfo {
                    port,
                    addr,
                    prefix_len,
                });
                Ok(Response::Done)
            }
            Request::AddrDel { port, addr } => {
                let n = st.addrs.len();
                st.addrs.retain(|a| !(a.addr == addr && a.port == port));
                if st.addrs.len() == n {
                    return Err(CtlError::new(
                        ErrCode::NotFound,
                        format!("{addr} not configured"),
                    ));
                }
                Ok(Response::Done)
            }
            Request::Routes => Ok(Response::Routes(vec![RouteInfo {
                dst: Ipv4Addr::UNSPECIFIED.into(),
                prefix_len: 0,
                gateway: Some(Ipv4Addr::new(10, 0, 0, 254).into()),
                port: 0,
                src: None,
            }])),
            Request::Neighbors => Ok(Response::Neighbors(st.neigh.clone())),
            Request::NeighAdd { port, addr, mac } => {
                st.neigh.push(NeighInfo {
                    port,
                    addr,
                    mac: Some(mac),
                    state: "static".into(),
                    age_secs: None,
                });
                Ok(Response::Done)
            }
            Request::NeighFlush { port } => {
                st.neigh.retain(|n| port.is_some_and(|p| p != n.port));
                Ok(Response::Done)
            }
            Request::Lcores => Ok(Response::Lcores(vec![LcoreInfo {
                lcore: 1,
                role: "worker".into(),
                queues: vec!["0:0".into()],
                rx_packets: 5,
                tx_packets: 4,
                dropped: 1,
                conns: 2,
                conns_created: 3,
                extra: vec![],
                busy_ns: None,
            }])),
            Request::Drops => Ok(Response::Drops(vec![DropCount {
                reason: "no_service".into(),
                count: 42,
            }])),
            Request::Reload => Ok(Response::Done),
            Request::Sync => Ok(Response::Sync(None)),
            Request::Marks => Ok(Response::Marks(Vec::new())),
            Request::Snat => Ok(Response::Snat(dirigo_proto::view::SnatReport {
                rules: vec![dirigo_proto::view::SnatInfo {
                    rule: dirigo_core::lb::snat::SnatRule {
                        source: "10.1.0.0/24".parse().unwrap(),
                        pool: vec!["203.0.113.10".parse().unwrap()],
                        max_conns: 100,
                        port_lo: 1024,
                        port_hi: 65535,
                    },
                    conns: 7,
                    live: 3,
                }],
                live: 3,
                bound: 4096,
            })),
            Request::MarkAdd { .. } | Request::MarkDel { .. } => Ok(Response::Done),
            Request::Handoff => Ok(Response::Handoff(dirigo_proto::view::HandoffInfo {
                file: None,
                outcome: "none".into(),
                gap_ms: None,
                counters: vec![],
                checkpoint: None,
            })),
            Request::Health => Ok(Response::Health(HealthReport {
                servers: vec![HealthInfo {
                    service: ServiceKey {
                        fwmark: 0,
                        proto: dirigo::lb::spec::Proto::Tcp,
                        vip: std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 100)),
                        port: 80,
                    },
                    dest: dirigo::lb::spec::DestKey {
                        addr: std::net::IpAddr::V4(Ipv4Addr::new(172, 16, 0, 11)),
                        port: 80,
                    },
                    check: "http".into(),
                    state: "down".into(),
                    since_secs: 12,
                    last: Some("status 503".into()),
                    last_ok: Some(false),
                    latency_us: Some(1500),
                    checks: 40,
                    failures: 6,
                    transitions: 1,
                    weight: 3,
                    effective_weight: Some(0),
                }],
                quorum_lost: vec![],
                withdrawn: vec![],
                counts: [1, 0, 0, 0],
                events: vec![HealthEvent {
                    secs_ago: 12,
                    what: "TCP 10.0.0.100:80 real server 172.16.0.11:80 down".into(),
                    why: "2 failures in a row (status 503); weight 0 (inhibit)".into(),
                }],
            })),
            Request::HealthSet { dest, .. } if dest.addr == Ipv4Addr::new(172, 16, 0, 11) => {
                Ok(Response::Done)
            }
            Request::HealthSet { .. } => Err(CtlError::new(
                ErrCode::NotFound,
                "TCP 10.0.0.100:80 real server has no health check",
            )),
            Request::Fingerprint { .. } => Ok(Response::Fingerprints(vec![])),
            Request::Census => {
                // lcore 1 agrees with itself; lcore 2's gauge is one off
                // while a service on port 4444 exists (the mismatch case)
                let n: u64 = st.services.values().map(|(_, d)| d.len() as u64).sum();
                let off = st.services.keys().any(|k| k.port == 4444);
                Ok(Response::Census(
                    [(1, false), (2, off)]
                        .into_iter()
                        .map(|(lcore, off)| CensusInfo {
                            lcore,
                            entries: n,
                            walked: n,
                            walked_active: n,
                            gauge: n + u64::from(off),
                            active: n,
                            inactive: 0,
                            consistent: !off,
                        })
                        .collect(),
                ))
            }
            Request::Vips => Ok(Response::Vips(VipReport {
                enabled: true,
                interface: Some("kfront".into()),
                table: Some(100),
                protocol: Some(201),
                draining: false,
                failures: 0,
                vips: vec![
                    VipInfo {
                        vip: Ipv4Addr::new(10, 0, 0, 100).into(),
                        state: "announced".into(),
                        why: "quorum: TCP 10.0.0.100:80 3/3 up".into(),
                        since_secs: Some(42),
                    },
                    VipInfo {
                        vip: Ipv4Addr::new(10, 0, 0, 101).into(),
                        state: "withdrawn".into(),
                        why: "no quorum: TCP 10.0.0.101:80 0/3 up".into(),
                        since_secs: Some(7),
                    },
                ],
            })),
            Request::Version => Ok(Response::Version(VersionInfo {
                version: "0.1.0-mock".into(),
                proto: 1,
                dpdk: Some("22.11".into()),
                commit: Some("0123456789ab".into()),
            })),
        }
    }
}

pub struct Running {
    pub path: PathBuf,
    pub stop: StopHandle,
    pub thread: Option<JoinHandle<std::io::Result<()>>>,
    pub mock: Arc<Mock>,
    pub _dir: tempfile::TempDir,
}

impl Running {
    pub fn shutdown(mut self) -> std::io::Result<()> {
        self.stop.stop();
        self.thread
            .take()
            .unwrap()
            .join()
            .expect("server thread panicked")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn start_with(f: impl FnOnce(&mut ServerConfig)) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run/dirigo/ctl.sock");
    let mut cfg = ServerConfig::new(&path);
    f(&mut cfg);
    let mock = Arc::new(Mock::default());
    let server = Server::bind(cfg, mock.clone()).unwrap();
    let stop = server.stop_handle();
    let thread = std::thread::spawn(move || server.run());
    Running {
        path,
        stop,
        thread: Some(thread),
        mock,
        _dir: dir,
    }
}

pub fn start() -> Running {
    start_with(|_| {})
}
