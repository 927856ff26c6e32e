use super::*;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use dirigo_proto::adm::parse_restore;
use std::net::Ipv4Addr;

fn svc(proto: Proto, vip: [u8; 4], port: u16, sched: SchedKind) -> ServiceSpec {
    ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
            proto,
            vip: std::net::IpAddr::V4(Ipv4Addr::from(vip)),
            port,
        },
        sched,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: false,
        ops: false,
        client_address: Default::default(),
    }
}

fn rs(addr: [u8; 4], port: u16, method: Method, weight: u32) -> DestSpec {
    DestSpec {
        key: DestKey {
            addr: std::net::IpAddr::V4(Ipv4Addr::from(addr)),
            port,
        },
        method,
        weight,
        upper: 0,
        lower: 0,
        tun: Default::default(),
    }
}

/// A table with every kind of setting the rules carry, in the order the
/// rules list it (services and real servers sorted).
fn table() -> ServiceTable {
    let mut persistent = svc(Proto::Tcp, [10, 0, 0, 5], 443, SchedKind::Sh);
    persistent.flags = SchedFlags {
        fallback: true,
        port: true,
    };
    persistent.persistent = Some(600);
    persistent.netmask = Ipv4Addr::new(255, 255, 255, 0);
    persistent.synproxy = true;
    let mut fullnat = svc(Proto::Tcp, [10, 0, 0, 7], 80, SchedKind::Rr);
    fullnat.local_addresses = vec![std::net::IpAddr::V4(Ipv4Addr::new(172, 16, 0, 200))];
    fullnat.client_address = crate::lb::spec::ClientAddress::ProxyV1;
    let mut thresholds = rs([172, 16, 0, 12], 8080, Method::Nat, 0);
    thresholds.upper = 100;
    thresholds.lower = 10;
    vec![
        (
            svc(Proto::Tcp, [10, 0, 0, 5], 80, SchedKind::Rr),
            vec![
                rs([172, 16, 0, 11], 80, Method::Dr, 1),
                rs([172, 16, 0, 12], 80, Method::Tun, 65535),
            ],
        ),
        (
            persistent,
            vec![rs([172, 16, 0, 11], 443, Method::Nat, 3), thresholds],
        ),
        (fullnat, vec![rs([172, 16, 0, 13], 80, Method::FullNat, 1)]),
        (svc(Proto::Udp, [10, 0, 0, 6], 53, SchedKind::Wlc), vec![]),
    ]
}

const TIMEOUTS: Timeouts = Timeouts {
    tcp: 1000,
    tcpfin: 60,
    udp: 30,
};

#[test]
fn render_is_the_header_timeouts_and_dirigoadm_save() {
    let t = table();
    let text = render(&t, &TIMEOUTS, None);
    let rules = rules(&t);
    assert_eq!(text, format!("{HEADER}--set 1000 60 30\n{rules}"));
    assert_eq!(
        rules,
        "-A -t 10.0.0.5:80 -s rr\n\
         -a -t 10.0.0.5:80 -r 172.16.0.11:80 -g -w 1\n\
         -a -t 10.0.0.5:80 -r 172.16.0.12:80 -i -w 65535 --tun-type ipip\n\
         -A -t 10.0.0.5:443 -s sh -b sh-fallback,sh-port -p 600 -M 255.255.255.0 --synproxy\n\
         -a -t 10.0.0.5:443 -r 172.16.0.11:443 -m -w 3\n\
         -a -t 10.0.0.5:443 -r 172.16.0.12:8080 -m -w 0 -x 100 -y 10\n\
         -A -t 10.0.0.7:80 -s rr --client-address proxy-v1\n\
         -P -t 10.0.0.7:80 -z 172.16.0.200\n\
         -a -t 10.0.0.7:80 -r 172.16.0.13:80 -b -w 1\n\
         -A -u 10.0.0.6:53 -s wlc\n"
    );
    // what `dirigoadm -R` reads: the same batch
    assert_eq!(parse_restore(&text).unwrap().len(), 11);
}

#[test]
fn parse_of_render_gives_the_table_back() {
    let t = table();
    let saved = parse(&render(&t, &TIMEOUTS, None), Timeouts::default()).unwrap();
    assert_eq!(saved.services, t);
    assert_eq!(saved.timeouts, TIMEOUTS);
    // empty table: the file still says so (and keeps the timeouts)
    let saved = parse(&render(&Vec::new(), &TIMEOUTS, None), Timeouts::default()).unwrap();
    assert!(saved.services.is_empty());
    assert_eq!(saved.timeouts, TIMEOUTS);
}

#[test]
fn parse_replaces_the_table_and_keeps_unset_timeouts() {
    // plain `dirigoadm -S` output (no header, no --set) is a state file too
    let saved = parse("-A -t 10.1.1.1:80 -s rr\n", TIMEOUTS).unwrap();
    assert_eq!(saved.services.len(), 1);
    assert_eq!(saved.timeouts, TIMEOUTS);
    // `--set 0 ...` keeps a value, as ipvsadm's does
    let saved = parse("--set 0 5 0\n", TIMEOUTS).unwrap();
    assert_eq!(saved.timeouts.tcpfin, 5);
    assert_eq!(saved.timeouts.tcp, 1000);
}

#[test]
fn a_bad_line_is_refused_with_its_number() {
    let good = render(&table(), &TIMEOUTS, None);
    let lines: Vec<&str> = good.lines().collect();
    let n = lines.len();
    let with = |i: usize, bad: &str| {
        let mut l = lines.clone();
        l[i] = bad;
        l.join("\n")
    };
    let cases = [
        // a torn line (cut in the middle of an address)
        (with(n - 1, "-a -t 10.0.0.5:443 -r 172.16."), n),
        (with(5, "-A -t 10.0.0.9:80 -s nosuch"), 6),
        (with(4, "-L -n"), 5),
        // a real server of a service not (yet) defined
        (
            format!("{good}-a -t 10.9.9.9:80 -r 172.16.0.1:80 -g -w 1\n"),
            n + 1,
        ),
        // the same service twice
        (format!("{good}-A -u 10.0.0.6:53 -s rr\n"), n + 1),
    ];
    for (text, line) in cases {
        let (l, msg) = parse(&text, Timeouts::default()).unwrap_err();
        assert_eq!(l, line, "{msg}\n{text}");
        assert!(!msg.is_empty());
    }
    let (_, msg) = parse(&format!("{good}-A -u 10.0.0.6:53 -s rr\n"), TIMEOUTS).unwrap_err();
    assert_eq!(msg, "Service already exists");
    let (_, msg) = parse("-a -t 10.9.9.9:80 -r 172.16.0.1:80\n", TIMEOUTS).unwrap_err();
    assert_eq!(msg, "Service not defined");
}

#[test]
fn load_missing_is_none_and_corrupt_is_file_line_message() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rules");
    let ps = p.display().to_string();
    assert_eq!(load(&ps, TIMEOUTS).unwrap(), None);
    std::fs::write(&p, render(&table(), &TIMEOUTS, None)).unwrap();
    assert_eq!(
        load(&ps, Timeouts::default()).unwrap().unwrap().services,
        table()
    );
    std::fs::write(
        &p,
        "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 1.2.3.4 -w x\n",
    )
    .unwrap();
    let e = load(&ps, TIMEOUTS).unwrap_err();
    assert_eq!(e.problem.line, Some(2));
    assert!(e.to_string().starts_with(&format!("{ps}:2: ")), "{e}");
    // not text: the line of the first bad byte
    std::fs::write(&p, b"-A -t 10.0.0.1:80 -s rr\n\n-A \xff\n").unwrap();
    let e = load(&ps, TIMEOUTS).unwrap_err();
    assert_eq!(e.to_string(), format!("{ps}:3: not UTF-8 text"));
    // a directory where the file should be: refused, not "no file"
    std::fs::remove_file(&p).unwrap();
    std::fs::create_dir(&p).unwrap();
    let e = load(&ps, TIMEOUTS).unwrap_err();
    assert_eq!(e.problem.line, None);
    assert!(e.to_string().contains("cannot read the state file"), "{e}");
}

#[test]
fn write_atomic_creates_the_directory_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("var/lib/dirigo/rules");
    write_atomic(&p, b"one\n").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"one\n");
    write_atomic(&p, b"two\n").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"two\n");
    let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["rules"]);
}

#[test]
fn a_reader_never_sees_a_torn_file() {
    // two large contents written in turn; every read is one or the other
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rules");
    let a = "-A -t 10.0.0.1:80 -s rr\n".repeat(4000);
    let b = "-A -u 10.0.0.2:53 -s wlc\n".repeat(3000);
    write_atomic(&p, a.as_bytes()).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let got = std::fs::read_to_string(&p).unwrap();
                assert!(got == a || got == b, "torn read of {} bytes", got.len());
                reads += 1;
            }
            reads
        });
        for i in 0..100 {
            let c = if i % 2 == 0 { &b } else { &a };
            write_atomic(&p, c.as_bytes()).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    });
}

#[test]
fn a_failed_write_leaves_the_old_file_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rules");
    write_atomic(&p, b"old\n").unwrap();
    // the temporary's name is taken by a directory: open fails
    let tmp = dir.path().join(".rules.tmp");
    std::fs::create_dir(&tmp).unwrap();
    let e = write_atomic(&p, b"new\n").unwrap_err();
    assert!(e.to_string().contains(".rules.tmp"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"old\n");
    // the directory cannot be made (a file is in the way)
    let e = write_atomic(&dir.path().join("rules/x"), b"new\n").unwrap_err();
    assert!(e.to_string().starts_with("create "), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"old\n");
}

#[test]
fn state_file_counts_failures_retries_and_skips_what_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rules");
    let mut f = StateFile::new(&p);
    let t = table();
    // at start: taken as saved, nothing written
    f.mark_saved(&t, &TIMEOUTS, None);
    f.save(&t, &TIMEOUTS, None).unwrap();
    assert!(!p.exists());
    // a change is written
    let mut t2 = t.clone();
    t2.pop();
    f.save(&t2, &TIMEOUTS, None).unwrap();
    assert_eq!(
        parse(&std::fs::read_to_string(&p).unwrap(), Timeouts::default())
            .unwrap()
            .services,
        t2
    );
    // a failed write: counted, the file keeps the previous rules
    let tmp = dir.path().join(".rules.tmp");
    std::fs::create_dir(&tmp).unwrap();
    assert!(f.save(&t, &TIMEOUTS, None).is_err());
    assert_eq!(f.failed(), 1);
    assert_eq!(
        parse(&std::fs::read_to_string(&p).unwrap(), Timeouts::default())
            .unwrap()
            .services,
        t2
    );
    // the next save of the same table writes it (not taken as saved)
    std::fs::remove_dir(&tmp).unwrap();
    f.save(&t, &TIMEOUTS, None).unwrap();
    assert_eq!(f.failed(), 1);
    let on_disk = std::fs::read_to_string(&p).unwrap();
    assert_eq!(on_disk, render(&t, &TIMEOUTS, None));
    // timeouts alone are a change too
    let t3 = Timeouts {
        udp: 99,
        ..TIMEOUTS
    };
    f.save(&t, &t3, None).unwrap();
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .contains("--set 1000 60 99\n"));
}

#[test]
fn commit_saves_configured_weights_not_health_verdicts() {
    use crate::daemon::control::{ControlState, LbSettings};
    use crate::daemon::health::HealthState;
    use crate::health::spec::JobKey;
    use crate::net::addr::{Ipv4Cidr, OwnAddrs};
    use crate::net::neigh::{NeighConfig, NeighTable};
    use crate::net::route::RouteTable;
    use crate::net::view::{NetView, PortInfo};
    use std::sync::Arc;
    // a service whose one real server is checked (the check's settings
    // as the config gives them)
    let toml = r#"
[eal]
args = ["-l", "0-1"]
[[port]]
name = "wan"
device = "net_null0"
addresses = ["10.0.0.1/24"]
[health]
[[service]]
protocol = "tcp"
address = "10.0.0.5:80"
scheduler = "rr"
[service.check]
type = "tcp"
[[service.real_server]]
address = "10.0.0.11:80"
weight = 7
"#;
    let cfg = dirigo_config::Config::parse(toml, "t.toml").unwrap();
    let s = &cfg.services[0];
    let t: ServiceTable = vec![(s.spec.clone(), s.dests.clone())];
    let mut health = HealthState::default();
    health.services.insert(s.spec.key, s.health.clone());
    health.sync(&t, |_, _, _| None, 0);
    let key = JobKey {
        service: s.spec.key,
        rs: s.dests[0].key,
    };
    // taken out for maintenance: weight 0 where the workers forward
    health.set_enabled(&key, false, &t, 0).unwrap();
    assert_eq!(health.effective(&t)[0].1[0].weight, 0);

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rules");
    let port_addr = Ipv4Cidr::new(u32::from(Ipv4Addr::new(10, 0, 0, 1)), 24).unwrap();
    let mut st = ControlState {
        services: Vec::new(),
        timeouts: Timeouts::default(),
        ids: crate::lb::snapshot::LbIds::new(16, 64),
        epoch: 0,
        port_addrs: vec![(0, port_addr)],
        port_addrs6: Vec::new(),
        static_routes: Vec::new(),
        neigh: NeighTable::new(NeighConfig::default()),
        net6: Default::default(),
        settings: LbSettings {
            tunnel_source: None,
            expire_nodest_conn: false,
            sloppy_tcp: false,
            workers: 1,
            mh_table_size: 251,
            synproxy: false,
            nat64_pool: Vec::new(),
            snat: Vec::new(),
        },
        pending_garp: Vec::new(),
        pending_na6: Vec::new(),
        health,
        state_file: Some(StateFile::new(&p)),
        marks: Vec::new(),
        marks_saved: false,
    };
    let mut addrs = OwnAddrs::new();
    addrs.add_port_addr(0, port_addr).unwrap();
    let routes = RouteTable::new(&addrs, &[]).unwrap();
    let view = NetView::new(
        vec![PortInfo {
            mac: [2, 0, 0, 0, 0, 1],
            mtu: 1500,
            kernel: false,
        }]
        .into(),
        Arc::new(addrs),
        Arc::new(routes),
        Arc::new(st.neigh.snapshot()),
    );
    let shared = crate::dataplane::shared::Shared {
        net: Arc::new(arc_swap::ArcSwap::from_pointee(view)),
        lb: Arc::new(arc_swap::ArcSwap::from_pointee(
            crate::lb::snapshot::Snapshot::empty(&st.ids),
        )),
        events: crossbeam_queue::ArrayQueue::new(4),
        workers: Vec::new(),
        stop: Arc::new(std::sync::atomic::AtomicBool::new(false)),
    };
    st.commit(&shared, t.clone(), Timeouts::default()).unwrap();
    let on_disk = std::fs::read_to_string(&p).unwrap();
    assert!(
        on_disk.contains("-a -t 10.0.0.5:80 -r 10.0.0.11:80 -g -w 7\n"),
        "{on_disk}"
    );
    // the snapshot the workers have carries the verdict
    let snap = shared.lb.load();
    assert_eq!(snap.services()[0].spec.key, s.spec.key);
    // a health refresh (same configured table) writes nothing
    std::fs::remove_file(&p).unwrap();
    st.refresh(&shared).unwrap();
    assert!(!p.exists());
    // an invalid change is refused before anything is saved
    let mut bad = t.clone();
    bad[0].1.push(rs([192, 168, 9, 9], 80, Method::Dr, 1));
    assert!(st.commit(&shared, bad, Timeouts::default()).is_err());
    assert!(!p.exists());
    // mark rules: committed with the table, published, saved; refused
    // ones change nothing
    let r1: crate::lb::mark::MarkRule = "tcp 10.0.0.5/32 443 mark 1".parse().unwrap();
    st.commit_marks(&shared, vec![r1]).unwrap();
    assert!(shared.lb.load().has_marks4());
    let on_disk = std::fs::read_to_string(&p).unwrap();
    assert!(
        on_disk.ends_with("#mark tcp 10.0.0.5/32 443 mark 1\n"),
        "{on_disk}"
    );
    let overlap = "tcp 10.0.0.0/24 400-500 mark 2".parse().unwrap();
    let e = st.commit_marks(&shared, vec![r1, overlap]).unwrap_err();
    assert!(e.msg.contains("overlaps"), "{}", e.msg);
    assert_eq!(st.marks, [r1]);
    // a host rule's destination is answered like a VIP
    assert!(st
        .announced(&st.services)
        .contains(&u32::from(Ipv4Addr::new(10, 0, 0, 5))));
    st.commit_marks(&shared, vec![]).unwrap();
    assert!(!shared.lb.load().has_marks4());
    let on_disk = std::fs::read_to_string(&p).unwrap();
    assert!(on_disk.ends_with(&format!("{MARKS}\n")), "{on_disk}");
}

#[test]
fn mark_rules_are_saved_as_comments_to_r_and_read_back() {
    use crate::lb::mark::MarkRule;
    let mut t = table();
    let mut fwm = svc(Proto::Tcp, [0, 0, 0, 0], 0, SchedKind::Rr);
    fwm.key = ServiceKey::fwmark(1, false);
    fwm.persistent = Some(300);
    t.push((fwm, vec![rs([172, 16, 0, 9], 0, Method::Dr, 1)]));
    let marks: Vec<MarkRule> = vec![
        "tcp 10.0.0.100/32 80 mark 1".parse().unwrap(),
        "tcp 10.0.0.100/32 443 from 198.51.100.0/24 mark 1"
            .parse()
            .unwrap(),
    ];
    let text = render(&t, &TIMEOUTS, Some(&marks));
    assert!(
        text.ends_with(&format!(
            "-A -f 1 -s rr -p 300\n-a -f 1 -r 172.16.0.9:0 -g -w 1\n{MARKS}\n\
             #mark tcp 10.0.0.100/32 80 mark 1\n\
             #mark tcp 10.0.0.100/32 443 from 198.51.100.0/24 mark 1\n"
        )),
        "{text}"
    );
    let saved = parse(&text, Timeouts::default()).unwrap();
    assert_eq!(saved.services, t);
    assert_eq!(saved.marks.as_deref(), Some(marks.as_slice()));
    // -R (and ipvsadm) read the same file: the marks are comments to it
    assert_eq!(
        parse_restore(&text).unwrap().len(),
        parse_restore(&render(&t, &TIMEOUTS, None)).unwrap().len()
    );
    // an empty section: no rules (they replace the config's)
    let saved = parse(&render(&t, &TIMEOUTS, Some(&[])), TIMEOUTS).unwrap();
    assert_eq!(saved.marks, Some(vec![]));
    // no section: the config's rules
    assert_eq!(
        parse(&render(&t, &TIMEOUTS, None), TIMEOUTS).unwrap().marks,
        None
    );
    // a bad or overlapping rule, or one before the section: its line
    let n = text.lines().count();
    let bad = format!("{text}#mark tcp 10.0.0.100 80 mark zero\n");
    let (l, msg) = parse(&bad, TIMEOUTS).unwrap_err();
    assert_eq!((l, msg.contains("mark \"zero\"")), (n + 1, true), "{msg}");
    let (l, msg) = parse(
        &format!("{text}#mark tcp 10.0.0.0/24 80 mark 2\n"),
        TIMEOUTS,
    )
    .unwrap_err();
    assert_eq!((l, msg.contains("overlaps")), (n + 1, true), "{msg}");
    let (l, msg) = parse("#mark tcp 10.0.0.1 80 mark 2\n", TIMEOUTS).unwrap_err();
    assert_eq!((l, msg.contains("before the line")), (1, true), "{msg}");
}

/// A service group saves as its service's rules and one `#member` line
/// per member (comments to `-R` and ipvsadm), and loads back whole;
/// ipvsadm's verbs on a member name the group's service instead, and
/// `-E` of the service keeps its members.
#[test]
fn service_groups_round_trip_and_members_take_no_verbs() {
    use dirigo_proto::proto::BatchCmd;
    let mut g = svc(Proto::Tcp, [10, 0, 0, 5], 80, SchedKind::Rr);
    g.members = crate::lb::group::parse_member("10.0.0.8-9:80", Proto::Tcp, false).unwrap();
    g.members.push(ServiceKey::fwmark(4, false));
    let mut six = svc(Proto::Udp, [10, 0, 0, 5], 53, SchedKind::Rr);
    six.key.vip = "2001:db8::5".parse().unwrap();
    six.members = vec![ServiceKey {
        vip: "2001:db8::6".parse().unwrap(),
        ..six.key
    }];
    let t: ServiceTable = vec![
        (g.clone(), vec![rs([172, 16, 0, 11], 80, Method::Nat, 1)]),
        (six, vec![]),
    ];
    let text = render(&t, &TIMEOUTS, None);
    assert!(
        text.contains(
            "-a -t 10.0.0.5:80 -r 172.16.0.11:80 -m -w 1\n\
             #member -t 10.0.0.5:80 10.0.0.8:80\n\
             #member -t 10.0.0.5:80 10.0.0.9:80\n\
             #member -t 10.0.0.5:80 fwmark 4\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("#member -u [2001:db8::5]:53 [2001:db8::6]:53\n"),
        "{text}"
    );
    // -R reads the rules alone: two services
    assert_eq!(parse_restore(&text).unwrap().len(), 4);
    let saved = parse(&text, Timeouts::default()).unwrap();
    assert_eq!(saved.services, t);
    // a member of no service is refused at its line
    let e = parse("#member -t 10.9.9.9:80 10.0.0.8:80\n", TIMEOUTS).unwrap_err();
    assert_eq!(e.0, 1);
    // -D, -E, -a on a member: the group's service is named
    let member = g.members[0];
    let mut tt = t.clone();
    let mut to = TIMEOUTS;
    let e = apply(&mut tt, &mut to, &BatchCmd::DelService { key: member }).unwrap_err();
    assert_eq!(
        e.msg,
        "TCP 10.0.0.8:80 is a member of the service group of TCP 10.0.0.5:80: change that service"
    );
    let edit = ServiceSpec {
        key: member,
        ..g.clone()
    };
    assert!(apply(&mut tt, &mut to, &BatchCmd::EditService { service: edit }).is_err());
    // -E of the service (ipvsadm sends no members) keeps them
    let mut plain = g.clone();
    plain.members.clear();
    plain.sched = SchedKind::Wlc;
    apply(&mut tt, &mut to, &BatchCmd::EditService { service: plain }).unwrap();
    assert_eq!(tt[0].0.members, g.members);
    assert_eq!(tt[0].0.sched, SchedKind::Wlc);
}
