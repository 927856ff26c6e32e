//! The generated daemon configurations parse and say what the scenarios
//! need.

use super::*;
use dirigo_config::ExceptionBackend;

/// DR on a 1,000-packet pcap with a 64k table, one worker, nothing else.
fn base() -> DutCase<'static> {
    DutCase {
        bin: Path::new("dirigo"),
        pcap: Path::new("flows.pcap"),
        pcap_pkts: 1000,
        method: Method::Dr,
        capacity: 65536,
        embryonic_grace_ms: 0,
        dir: Path::new("."),
        warmup: Duration::from_secs(1),
        measure: Duration::from_secs(1),
        workers: 1,
        exception: false,
        metrics: false,
        synproxy: false,
        checkpoint: false,
        handoff: false,
        v6: false,
        marks: 0,
        fwmark: false,
    }
}

#[test]
fn generated_config_is_valid() {
    for (workers, exception, metrics) in [
        (1, false, false),
        (2, false, false),
        (1, true, false),
        (1, false, true),
    ] {
        let c = DutCase {
            method: Method::Tun,
            workers,
            exception,
            metrics,
            ..base()
        };
        let text = config(&c, "dg-bench", Path::new("ctl.sock"));
        let cfg = dirigo_config::Config::parse(&text, "bench").unwrap();
        assert_eq!(cfg.services[0].dests.len(), N_RS as usize);
        assert!(cfg.services[0]
            .dests
            .iter()
            .all(|d| d.method == Method::Tun));
        assert_eq!(cfg.neighbors.len(), N_RS as usize + 1);
        assert_eq!(cfg.dataplane.mbufs, 1000 * workers + 32768);
        assert_eq!(cfg.ports[0].addresses[0].to_string(), "192.168.100.1/24");
        let kif = cfg.ports[0].kernel_interface.as_deref();
        assert_eq!(kif, exception.then_some(KERNEL_IF));
        assert_eq!(cfg.ports[1].kernel_interface, None);
        match &cfg.exception {
            Some(x) => {
                assert!(exception);
                assert_eq!(x.backend, ExceptionBackend::Tap);
                assert_eq!(x.netns.as_deref(), Some(NETNS));
                assert_eq!(cfg.ports[0].kernel_rate_limit_pps, 20_000);
            }
            None => assert!(!exception),
        }
        match cfg.metrics {
            Some(m) => {
                assert!(metrics);
                assert_eq!(m.listen.to_string(), METRICS_ADDR);
                assert!(m.burst_histogram);
            }
            None => assert!(!metrics),
        }
        assert!(!cfg.dataplane.synproxy && !cfg.services[0].spec.synproxy);
    }
}

#[test]
fn synproxy_config_is_valid() {
    let c = DutCase {
        pcap: Path::new("syn.pcap"),
        method: Method::Nat,
        synproxy: true,
        ..base()
    };
    let text = config(&c, "dg-bench", Path::new("ctl.sock"));
    let cfg = dirigo_config::Config::parse(&text, "bench").unwrap();
    assert!(cfg.dataplane.synproxy && cfg.services[0].spec.synproxy);
}

/// The checkpoint scenario: the handoff file in the scratch directory,
/// a checkpoint every second.
#[test]
fn checkpoint_config_is_valid() {
    let c = DutCase {
        capacity: 1 << 20,
        embryonic_grace_ms: 2000,
        dir: Path::new("/tmp/bench"),
        checkpoint: true,
        ..base()
    };
    let text = config(&c, "dg-bench", Path::new("ctl.sock"));
    let cfg = dirigo_config::Config::parse(&text, "bench").unwrap();
    assert_eq!(
        cfg.control.handoff_file.as_deref(),
        Some("/tmp/bench/handoff")
    );
    assert_eq!(cfg.control.connection_checkpoint_s, Some(1));
    let plain = DutCase {
        checkpoint: false,
        handoff: false,
        ..c
    };
    let cfg = dirigo_config::Config::parse(&config(&plain, "dg", Path::new("s")), "b").unwrap();
    assert_eq!(cfg.control.connection_checkpoint_s, None);
}

#[test]
fn ipv6_config_is_valid() {
    for method in [Method::Dr, Method::Tun, Method::Nat] {
        let c = DutCase {
            pcap: Path::new("v6.pcap"),
            pcap_pkts: 2000,
            method,
            capacity: 1 << 20,
            embryonic_grace_ms: 2000,
            v6: true,
            ..base()
        };
        let text = config(&c, "dg-bench", Path::new("ctl.sock"));
        let cfg = dirigo_config::Config::parse(&text, "bench")
            .unwrap_or_else(|e| panic!("{method:?}: {e}\n{text}"));
        let svc = &cfg.services[0];
        assert_eq!(svc.spec.key.vip, IpAddr::from(Ipv6Addr::from(gen::VIP6)));
        assert_eq!(svc.dests.len(), N_RS as usize);
        for (i, d) in svc.dests.iter().enumerate() {
            assert_eq!(
                d.key.addr,
                IpAddr::from(Ipv6Addr::from(gen::rs_addr6(i as u8)))
            );
            assert_eq!(d.method, method);
        }
        // the two gateways and the real servers
        assert_eq!(cfg.neighbors.len(), N_RS as usize + 2);
        assert_eq!(cfg.dataplane.connections6_per_worker, 1 << 20);
        assert_eq!(cfg.dataplane.connections_per_worker, 1024);
        let v6 = |p: usize| -> Vec<String> {
            cfg.ports[p]
                .addresses6
                .iter()
                .map(|a| a.to_string())
                .collect()
        };
        assert_eq!(v6(0), ["2001:db8:64::1/64"]);
        assert_eq!(v6(1), ["2001:db8:10::1/64"]);
        assert_eq!(cfg.ports[0].addresses[0].to_string(), "192.168.100.1/24");
    }
}

/// The FullNAT scenarios' configuration: the service's local addresses,
/// the real servers `fullnat`, the connections in the IPv6 table.
#[test]
fn fullnat_config_is_valid() {
    for v6 in [false, true] {
        let c = DutCase {
            method: Method::FullNat,
            capacity: 1 << 20,
            v6,
            ..base()
        };
        let text = config(&c, "dg-bench", Path::new("ctl.sock"));
        let cfg = dirigo_config::Config::parse(&text, "bench")
            .unwrap_or_else(|e| panic!("v6 {v6}: {e}\n{text}"));
        let svc = &cfg.services[0];
        // enough local addresses for every tracked flow (about 60k source
        // ports each per real server), plus one spare
        let n = svc.spec.local_addresses.len();
        let ports = n as u64 * 60_000 * svc.dests.len() as u64;
        assert!(ports >= c.capacity as u64, "v6 {v6}: {n} local addresses");
        assert!(n >= 2, "v6 {v6}: {n} local addresses");
        assert!(svc.spec.local_addresses.iter().all(|a| a.is_ipv6() == v6));
        assert!(svc.dests.iter().all(|d| d.method == Method::FullNat));
        assert_eq!(cfg.dataplane.connections6_per_worker, 1 << 20);
    }
}

/// The mark scenarios' configuration: `marks` rules that match nothing
/// beside the ordinary service, or an fwmark service behind one more.
#[test]
fn mark_configs_are_valid() {
    for fwmark in [false, true] {
        let c = DutCase {
            capacity: 1 << 16,
            marks: 16,
            fwmark,
            ..base()
        };
        let text = config(&c, "dg-bench", Path::new("ctl.sock"));
        let cfg = dirigo_config::Config::parse(&text, "bench")
            .unwrap_or_else(|e| panic!("fwmark {fwmark}: {e}\n{text}"));
        assert_eq!(cfg.marks.len(), 16 + usize::from(fwmark));
        assert_eq!(cfg.services[0].spec.key.is_fwmark(), fwmark);
        let last = cfg.marks.last().unwrap();
        assert_eq!(last.mark == 1, fwmark, "{last}");
    }
}
