use super::build;
use super::{parse_start, DROPS, HEALTH, SERVICES, WORKERS};
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use crate::pmd::telemetry::{
    output_budget, Dict, MAX_DICT_ENTRIES, MAX_OUTPUT_LEN, MAX_STRING_LEN,
};
use dirigo_proto::view::{
    DestInfo, DropCount, HealthEvent, HealthInfo, HealthReport, LcoreInfo, NamedCounter,
    ServiceInfo, ServiceList, Stats,
};
use serde_json::Value as J;
use std::net::Ipv4Addr;

/// The page as a client receives it: within the 16 KiB answer, and JSON.
fn receive(cmd: &str, d: &Dict) -> J {
    let text = d.to_json();
    assert_eq!(text.len(), d.json_len());
    let answer = format!("{{\"{cmd}\":{text}}}");
    assert!(
        answer.len() < MAX_OUTPUT_LEN,
        "{cmd}: {} bytes do not fit",
        answer.len()
    );
    assert!(d.json_len() <= output_budget(cmd));
    let v: J = serde_json::from_str(&answer).expect("JSON");
    v[cmd].clone()
}

fn key(proto: Proto, n: u32, port: u16) -> ServiceKey {
    ServiceKey {
        fwmark: 0,
        proto,
        vip: std::net::IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + n)),
        port,
    }
}

fn dest(n: u32, port: u16, method: Method, weight: u32) -> DestInfo {
    DestInfo {
        spec: DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(0xac10_0000 + n)),
                port,
            },
            method,
            weight,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        },
        active: n,
        inactive: n * 2,
        persist: 0,
        stats: Stats {
            conns: u64::from(n) * 1000,
            inpkts: 7,
            outpkts: 8,
            inbytes: 9,
            outbytes: 10,
        },
        rate: Default::default(),
    }
}

fn service(k: ServiceKey, sched: SchedKind, dests: Vec<DestInfo>) -> ServiceInfo {
    ServiceInfo {
        spec: ServiceSpec {
            members: Vec::new(),
            local_addresses: Vec::new(),
            key: k,
            sched,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
            ops: false,
            client_address: Default::default(),
        },
        stats: Stats {
            conns: 3,
            ..Default::default()
        },
        rate: Default::default(),
        dests,
    }
}

#[test]
fn services_show_what_dirigoadm_lists() {
    let mut mh = service(
        key(Proto::Udp, 1, 53),
        SchedKind::Mh,
        vec![dest(3, 5353, Method::Nat, 5)],
    );
    mh.spec.flags = SchedFlags {
        fallback: true,
        port: true,
    };
    mh.spec.persistent = Some(300);
    mh.spec.netmask = Ipv4Addr::new(255, 255, 255, 0);
    let list = ServiceList {
        conn_tab_size: 65536,
        services: vec![
            mh,
            service(
                key(Proto::Tcp, 10, 80),
                SchedKind::Wlc,
                // unsorted, and one with port 0 (the service's)
                vec![dest(10, 0, Method::Tun, 1), dest(9, 8080, Method::Dr, 2)],
            ),
            service(key(Proto::Tcp, 2, 80), SchedKind::Rr, vec![]),
        ],
    };
    let d = build::services(&list, SERVICES, 0, output_budget(SERVICES));
    // dirigoadm's order (by address, not by text), which DPDK keeps
    let text = d.to_json();
    let pos = |s: &str| text.find(s).unwrap_or_else(|| panic!("no {s} in {text}"));
    assert!(pos("TCP_10_0_0_2_80") < pos("TCP_10_0_0_10_80"));
    assert!(pos("TCP_10_0_0_10_80") < pos("UDP_10_0_0_1_53"));
    assert!(pos("172_16_0_9_8080") < pos("172_16_0_10_80"));
    let v = receive(SERVICES, &d);
    assert_eq!(v["total"], 3);
    assert_eq!(v["shown"], 3);
    assert_eq!(v["conn_tab_size"], 65536);
    assert!(v.get("next").is_none(), "{v}");
    let svcs = v["services"].as_object().unwrap();
    assert_eq!(svcs.len(), 3);
    assert_eq!(
        svcs["TCP_10_0_0_2_80"]["real_servers"],
        serde_json::json!({})
    );
    let t = &svcs["TCP_10_0_0_10_80"];
    assert_eq!(t["protocol"], "TCP");
    assert_eq!(t["address"], "10.0.0.10:80");
    assert_eq!(t["scheduler"], "wlc");
    assert_eq!(t["flags"], "");
    assert_eq!(t["conns"], 3);
    assert_eq!(t["real_servers_total"], 2);
    let rs = t["real_servers"].as_object().unwrap();
    assert_eq!(rs.len(), 2);
    let r1 = &rs["172_16_0_9_8080"];
    assert_eq!(r1["address"], "172.16.0.9:8080");
    assert_eq!(r1["forward"], "Route");
    assert_eq!(r1["weight"], 2);
    assert_eq!(r1["active"], 9);
    assert_eq!(r1["inactive"], 18);
    assert_eq!(r1["conns"], 9000);
    assert_eq!(rs["172_16_0_10_80"]["address"], "172.16.0.10:80");
    assert_eq!(rs["172_16_0_10_80"]["forward"], "Tunnel");
    let u = &svcs["UDP_10_0_0_1_53"];
    assert_eq!(
        u["flags"],
        "(mh-fallback,mh-port) persistent 300 mask 255.255.255.0"
    );
    assert_eq!(u["real_servers"]["172_16_0_3_5353"]["forward"], "Masq");
    assert_eq!(u["real_servers"]["172_16_0_3_5353"]["weight"], 5);
}

/// Page through with `next` until the end; every page within the answer.
fn all_pages(cmd: &str, list: &str, f: impl Fn(usize) -> Dict) -> (Vec<String>, usize) {
    let (mut keys, mut pages, mut start) = (Vec::new(), 0, 0);
    loop {
        let v = receive(cmd, &f(start));
        pages += 1;
        assert_eq!(v["start"], start);
        let entries = v[list].as_object().unwrap();
        assert_eq!(v["shown"], entries.len());
        assert!(entries.len() <= MAX_DICT_ENTRIES);
        keys.extend(entries.keys().cloned());
        match v.get("next") {
            Some(n) => {
                let n = n.as_str().unwrap();
                assert!(v["truncated"].as_str().unwrap().contains(n), "{v}");
                start = parse_start(cmd, n.strip_prefix(&format!("{cmd},"))).unwrap();
            }
            None => return (keys, pages),
        }
        assert!(pages < 1000, "paging does not end");
    }
}

#[test]
fn many_services_are_paged_and_none_is_lost() {
    let services: Vec<ServiceInfo> = (0..300)
        .map(|i| {
            service(
                key(Proto::Tcp, i, 80),
                SchedKind::Rr,
                vec![dest(1, 80, Method::Dr, 1), dest(2, 80, Method::Dr, 1)],
            )
        })
        .collect();
    let list = ServiceList {
        conn_tab_size: 1,
        services,
    };
    let budget = output_budget(SERVICES);
    let (keys, pages) = all_pages(SERVICES, "services", |s| {
        build::services(&list, SERVICES, s, budget)
    });
    assert!(pages > 2, "300 services need several 16 KiB pages: {pages}");
    let mut want: Vec<String> = (0..300)
        .map(|i| format!("TCP_{}_80", Ipv4Addr::from(0x0a00_0000 + i)).replace('.', "_"))
        .collect();
    let mut got = keys.clone();
    got.sort();
    got.dedup();
    want.sort();
    assert_eq!(got.len(), keys.len(), "a service on two pages");
    assert_eq!(got, want, "every service exactly once");
    // past the end: an empty page, no next
    let v = receive(SERVICES, &build::services(&list, SERVICES, 300, budget));
    assert_eq!(v["shown"], 0);
    assert!(v.get("next").is_none());
}

#[test]
fn a_service_too_big_for_a_page_shows_what_fits_and_counts_the_rest() {
    let big = service(
        key(Proto::Tcp, 2, 443),
        SchedKind::Wrr,
        (1..=600).map(|n| dest(n, 443, Method::Nat, 1)).collect(),
    );
    let small = service(
        key(Proto::Tcp, 1, 80),
        SchedKind::Rr,
        vec![dest(1, 80, Method::Dr, 1)],
    );
    let list = ServiceList {
        conn_tab_size: 1,
        services: vec![big, small],
    };
    let budget = output_budget(SERVICES);
    let first = receive(SERVICES, &build::services(&list, SERVICES, 0, budget));
    // the small one first (sorted); the big one gets a page of its own
    assert_eq!(first["shown"], 1, "{first}");
    assert_eq!(first["next"], "/dirigo/services,1");
    let second = receive(SERVICES, &build::services(&list, SERVICES, 1, budget));
    assert_eq!(second["shown"], 1);
    let b = &second["services"]["TCP_10_0_0_2_443"];
    let shown = b["real_servers"].as_object().unwrap().len();
    assert!(shown > 10 && shown < 600, "{shown}");
    assert_eq!(b["real_servers_total"], 600);
    assert_eq!(b["real_servers_omitted"], 600 - shown);
    assert!(second.get("next").is_none());
}

#[test]
fn drops_with_long_odd_names_and_too_many_reasons() {
    let mut drops: Vec<DropCount> = (0..400)
        .map(|i| DropCount {
            reason: format!("reason_{i}"),
            count: i,
        })
        .collect();
    drops.push(DropCount {
        reason: format!("tx_full_{}", "w\u{e4}n.port-".repeat(40)),
        count: 5,
    });
    drops.push(DropCount {
        reason: "tx_full_w.n".into(),
        count: 6,
    });
    drops.push(DropCount {
        reason: "tx_full_w n".into(),
        count: 7,
    });
    let want_sum: u64 = drops.iter().map(|d| d.count).sum();
    let budget = output_budget(DROPS);
    let first = receive(DROPS, &build::drops(&drops, DROPS, 0, budget));
    assert_eq!(first["total"], 403);
    assert_eq!(first["dropped"], want_sum);
    assert!(first["shown"].as_u64().unwrap() <= MAX_DICT_ENTRIES as u64);
    assert!(first.get("next").is_some());
    let (keys, _) = all_pages(DROPS, "drops", |s| build::drops(&drops, DROPS, s, budget));
    assert_eq!(keys.len(), 403);
    for k in &keys {
        assert!(k.len() <= MAX_STRING_LEN, "{k}");
        assert!(
            k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'/'),
            "{k}"
        );
    }
    // within one page the two names that clean alike stay apart
    let last = receive(DROPS, &build::drops(&drops, DROPS, 400, budget));
    let d = last["drops"].as_object().unwrap();
    assert_eq!(d["tx_full_w_n"], 6);
    assert_eq!(d["tx_full_w_n_2"], 7);
}

#[test]
fn workers_with_many_counters_keep_within_the_limits() {
    let w = |lcore: u32, n: usize| LcoreInfo {
        lcore,
        role: "worker".into(),
        queues: vec!["wan:rx0/tx0".into(), "lan:rx0/tx0".into()],
        rx_packets: 10,
        tx_packets: 9,
        dropped: 1,
        conns: 2,
        conns_created: 3,
        busy_ns: None,
        extra: (0..n)
            .map(|i| NamedCounter {
                name: format!("counter_{i}"),
                value: i as u64,
            })
            .collect(),
    };
    let budget = output_budget(WORKERS);
    let v = receive(
        WORKERS,
        &build::workers(&[w(1, 3), w(2, 0)], WORKERS, 0, budget),
    );
    assert_eq!(v["total"], 2);
    let one = &v["workers"]["1"];
    assert_eq!(one["lcore"], 1);
    assert_eq!(one["queues"][0], "wan:rx0/tx0");
    assert_eq!(one["rx_packets"], 10);
    assert_eq!(one["counters"]["counter_2"], 2);
    assert!(one.get("counters_omitted").is_none());
    // 400 counters: at most 256, the rest counted
    let v = receive(WORKERS, &build::workers(&[w(1, 400)], WORKERS, 0, budget));
    let c = v["workers"]["1"]["counters"].as_object().unwrap().len();
    assert!(c <= MAX_DICT_ENTRIES);
    assert_eq!(v["workers"]["1"]["counters_omitted"], 400 - c);
    // 40 workers with 100 counters each: paged
    let many: Vec<LcoreInfo> = (1..=40).map(|i| w(i, 100)).collect();
    let (keys, pages) = all_pages(WORKERS, "workers", |s| {
        build::workers(&many, WORKERS, s, budget)
    });
    assert_eq!(keys.len(), 40);
    assert!(pages > 1);
}

#[test]
fn health_lists_are_capped_and_servers_paged() {
    let server = |i: u32| HealthInfo {
        service: key(Proto::Tcp, 1, 80),
        dest: DestKey {
            addr: std::net::IpAddr::V4(Ipv4Addr::from(0xac10_0000 + i)),
            port: 80,
        },
        check: "http via VIP".into(),
        state: if i % 2 == 0 { "up" } else { "down" }.into(),
        since_secs: 5,
        last: Some("status 503".into()),
        last_ok: Some(false),
        latency_us: Some(1200),
        checks: 10,
        failures: 2,
        transitions: 1,
        weight: 3,
        effective_weight: if i % 2 == 0 { Some(3) } else { None },
    };
    let r = HealthReport {
        servers: (1..=200).map(server).collect(),
        quorum_lost: (0..20).map(|i| format!("TCP 10.0.1.{i}:80")).collect(),
        withdrawn: (0..3).map(|i| Ipv4Addr::new(10, 0, 1, i).into()).collect(),
        counts: [4, 3, 2, 1],
        events: (0..30)
            .map(|i| HealthEvent {
                secs_ago: 100 - i,
                what: format!("TCP 10.0.0.1:80 -> 172.16.0.{i}:80 down"),
                why: "x".repeat(300),
            })
            .collect(),
    };
    let budget = output_budget(HEALTH);
    let v = receive(HEALTH, &build::health(&r, HEALTH, 0, budget));
    assert_eq!(v["went_down"], 4);
    assert_eq!(v["quorum_restored_times"], 1);
    assert_eq!(v["quorum_lost"].as_array().unwrap().len(), 16);
    assert_eq!(v["quorum_lost_omitted"], 4);
    assert_eq!(v["withdrawn"][2], "10.0.1.2");
    let ev = v["events"].as_array().unwrap();
    assert_eq!(ev.len(), 16);
    // newest first, cut visibly
    assert!(ev[0].as_str().unwrap().starts_with("71s ago"), "{}", ev[0]);
    assert!(ev[0].as_str().unwrap().ends_with("..."));
    let s = &v["servers"]["TCP_10_0_0_1_80/172_16_0_1_80"];
    assert_eq!(s["server"], "172.16.0.1:80");
    assert_eq!(s["removed"], 1);
    assert_eq!(
        v["servers"]["TCP_10_0_0_1_80/172_16_0_2_80"]["effective_weight"],
        3
    );
    let (keys, pages) = all_pages(HEALTH, "servers", |st| {
        build::health(&r, HEALTH, st, budget)
    });
    assert_eq!(keys.len(), 200);
    assert!(pages > 1);
}

#[test]
fn the_parameter_is_a_start_index() {
    assert_eq!(parse_start(SERVICES, None), Ok(0));
    assert_eq!(parse_start(SERVICES, Some("40")), Ok(40));
    let e = parse_start(SERVICES, Some("all")).unwrap_err();
    assert!(e.contains("/dirigo/services,40"), "{e}");
    assert!(parse_start(SERVICES, Some("-1")).is_err());
}

/// Before start and after stop (nothing in `SOURCE`), every command
/// answers an error instead of touching a daemon that is gone.
#[test]
fn without_a_daemon_the_commands_answer_an_error() {
    for (cmd, f) in [
        (SERVICES, super::services as fn(&_, _, _) -> _),
        (WORKERS, super::workers),
        (DROPS, super::drops),
        (HEALTH, super::health),
    ] {
        let e = super::answer(cmd, None, f).unwrap_err();
        assert!(e.contains("not running"), "{cmd}: {e}");
        // a bad parameter is refused first, with the same kind of answer
        let e = super::answer(cmd, Some("x"), f).unwrap_err();
        assert!(e.contains("a number"), "{cmd}: {e}");
    }
}

#[test]
fn the_commands_are_valid_for_the_library() {
    let cmds = super::commands();
    let names: Vec<&str> = cmds.iter().map(|c| c.name).collect();
    assert_eq!(names, [SERVICES, WORKERS, DROPS, HEALTH]);
    for c in &cmds {
        assert!(crate::pmd::telemetry::valid_command(c.name), "{}", c.name);
        assert!(c.help.len() <= MAX_STRING_LEN, "{}: help too long", c.name);
    }
}
