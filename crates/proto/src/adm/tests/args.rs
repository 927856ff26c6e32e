//! Argument parsing tests (ipvsadm syntax, checks and wording).

use super::{dest, svc, tkey};
use crate::adm::args::{lookup_service, parse, parse_addr_port};
use crate::adm::*;
use crate::proto::BatchCmd;
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::{Method, Proto, ServiceKey, Timeouts};
use std::net::Ipv4Addr;

fn argv(s: &str) -> Vec<String> {
    std::iter::once("ipvsadm".to_string())
        .chain(s.split_whitespace().map(String::from))
        .collect()
}

fn p(s: &str) -> Result<Command, AdmError> {
    parse(&argv(s))
}

fn err(s: &str) -> String {
    let e = p(s).unwrap_err();
    assert_eq!(e.exit, 2, "{s}");
    e.msg
}

/// The mutation `s` parses to.
fn m(s: &str) -> BatchCmd {
    match p(s) {
        Ok(Command::Mutate(c)) => c,
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn add_service_defaults_and_options() {
    let k = tkey([10, 0, 0, 100], 80);
    for (args, service) in [
        ("-A -t 10.0.0.100:80", svc(k, SchedKind::Wlc, None)),
        (
            "-A -t 10.0.0.100:80 -s rr -p",
            svc(k, SchedKind::Rr, Some(300)),
        ),
        (
            "--add-service --tcp-service 10.0.0.100:80 --scheduler sed --persistent 600",
            svc(k, SchedKind::Sed, Some(600)),
        ),
        (
            "-A -t10.0.0.100:80 -swrr --persistent=60",
            svc(k, SchedKind::Wrr, Some(60)),
        ),
        // Port 0 is fine for a persistent service.
        (
            "-A -t 10.0.0.100 -p 10",
            svc(tkey([10, 0, 0, 100], 0), SchedKind::Wlc, Some(10)),
        ),
    ] {
        assert_eq!(m(args), BatchCmd::AddService { service }, "{args}");
    }
    let mut s = svc(k, SchedKind::Sh, Some(300));
    s.flags = SchedFlags {
        fallback: true,
        port: true,
    };
    s.netmask = Ipv4Addr::new(255, 255, 255, 0);
    assert_eq!(
        m("-A -t 10.0.0.100:80 -s sh -b sh-fallback,sh-port -p -M 255.255.255.0"),
        BatchCmd::AddService { service: s }
    );
    let mut s = svc(k, SchedKind::Mh, None);
    s.flags = SchedFlags {
        fallback: true,
        port: false,
    };
    assert_eq!(
        m("-E -t 10.0.0.100:80 -s mh --sched-flags mh-fallback"),
        BatchCmd::EditService { service: s }
    );
    let u = ServiceKey {
        fwmark: 0,
        proto: Proto::Udp,
        vip: std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        port: 53,
    };
    assert_eq!(
        m("--edit-service --udp-service 10.0.0.1:53 -s dh"),
        BatchCmd::EditService {
            service: svc(u, SchedKind::Dh, None)
        }
    );
    for s in [
        "rr", "wrr", "lc", "wlc", "sed", "nq", "sh", "dh", "mh", "fo",
    ] {
        match m(&format!("-A -t 1.2.3.4:1 -s {s}")) {
            BatchCmd::AddService { service } => assert_eq!(service.sched.name(), s),
            other => panic!("{other:?}"),
        }
    }
    for args in ["-D -t 10.0.0.100:80", "--delete-service -t 10.0.0.100:80"] {
        assert_eq!(m(args), BatchCmd::DelService { key: k });
    }
    assert_eq!(m("-C"), BatchCmd::Clear);
    assert_eq!(m("--clear"), BatchCmd::Clear);
}

#[test]
fn service_errors() {
    assert_eq!(err("-A -t 10.0.0.100:80 -s bogus"), "Scheduler not found");
    assert_eq!(
        err("-A -t 10.0.0.100"),
        "Zero port specified for non-persistent service"
    );
    assert_eq!(
        err("-A -t 80"),
        "illegal virtual server address[:port] specified"
    );
    assert_eq!(
        err("-A -t 10.0.0.300:80"),
        "illegal virtual server address[:port] specified"
    );
    assert_eq!(
        err("-A -t 10.0.0.1:65536"),
        "illegal virtual server address[:port] specified"
    );
    assert_eq!(
        err("-A -t 10.0.0.1:80 -p 0"),
        "invalid timeout value `0' specified"
    );
    assert_eq!(
        err("-A -t 10.0.0.1:80 -p 2678401"),
        "invalid timeout value `2678401' specified"
    );
    assert_eq!(
        err("-A -t 10.0.0.1:80 -p -M 1.2.3"),
        "illegal virtual server persistent mask specified"
    );
    assert_eq!(
        err("-A -t 10.0.0.1:80 -b sh-port"),
        "incompatible scheduler flag `sh-port'"
    );
    assert_eq!(
        err("-A -t 10.0.0.1:80 -s sh -b sh-x"),
        "invalid scheduler flag `sh-x'"
    );
    assert_eq!(
        err("-A -s rr"),
        "You need to supply the 'service-address' option for the 'add-service' command"
    );
    assert_eq!(
        err("-A -t 1.2.3.4:80 -w 3"),
        "Illegal 'weight' option with the 'add-service' command"
    );
    assert_eq!(
        err("-D -t 1.2.3.4:80 -s rr"),
        "Illegal 'scheduler' option with the 'delete-service' command"
    );
    assert_eq!(err("-A -E -t 1.2.3.4:80"), "multiple commands specified");
    assert_eq!(
        err("-A -t 1.2.3.4:80 -u 1.2.3.4:80"),
        "multiple 'service-address' options specified"
    );
    assert_eq!(err("-A -t 1.2.3.4:80 extra"), "unexpected argument extra");
    assert!(err("-A -t").contains("missing argument"));
    assert_eq!(err("-A -t 1.2.3.4:80 -q"), "invalid option `-q'");
    assert_eq!(err("--bogus"), "invalid option `--bogus'");
    assert_eq!(
        err("-C -t 1.2.3.4:80"),
        "Illegal 'service-address' option with the 'flush' command"
    );
    assert!(err("-t 1.2.3.4:80").contains("--help"));
}

#[test]
fn dest_commands() {
    let k = tkey([10, 0, 0, 100], 80);
    let rs = [172, 16, 0, 11];
    for (args, dest) in [
        ("-a -t 10.0.0.100:80 -r 172.16.0.11", dest(rs, 80, Method::Dr, 1)),
        // DR and TUN force the service port; NAT keeps the given one.
        (
            "-a -t 10.0.0.100:80 -r 172.16.0.11:8080 -g",
            dest(rs, 80, Method::Dr, 1),
        ),
        (
            "-a -t 10.0.0.100:80 -r 172.16.0.11:8080 -i -w 5",
            dest(rs, 80, Method::Tun, 5),
        ),
        (
            "--add-server --tcp-service 10.0.0.100:80 --real-server 172.16.0.11:8080 --masquerading --weight 0",
            dest(rs, 8080, Method::Nat, 0),
        ),
        ("-a -t 10.0.0.100:80 -r 172.16.0.11 -m", dest(rs, 80, Method::Nat, 1)),
    ] {
        assert_eq!(m(args), BatchCmd::AddDest { service: k, dest }, "{args}");
    }
    assert_eq!(
        p("-a -t 10.0.0.100:80 -r 172.16.0.11 --ipip --gatewaying")
            .unwrap_err()
            .msg,
        "multiple 'forwarding-method' options specified"
    );
    let mut d = dest(rs, 80, Method::Dr, 65535);
    d.upper = 100;
    d.lower = 50;
    for args in [
        "-e -t 10.0.0.100:80 -r 172.16.0.11 -w 65535 -x 100 -y 50",
        "--edit-server -t 10.0.0.100:80 -r 172.16.0.11 --weight 65535 --u-threshold 100 --l-threshold 50",
    ] {
        let dest = d.clone();
        assert_eq!(m(args), BatchCmd::EditDest { service: k, dest }, "{args}");
    }
    for args in [
        "-d -t 10.0.0.100:80 -r 172.16.0.11",
        "--delete-server -t 10.0.0.100:80 -r 172.16.0.11:80",
    ] {
        let dest = d.key;
        assert_eq!(m(args), BatchCmd::DelDest { service: k, dest }, "{args}");
    }
    // a NAT server on another port than the service's is deleted at its
    // own port (-d takes no forwarding method; ipvsadm forces the service's
    // port only on -a and -e of DR and TUN servers)
    assert_eq!(
        m("-d -t 10.0.0.100:80 -r 172.16.0.11:8080"),
        BatchCmd::DelDest {
            service: k,
            dest: dest(rs, 8080, Method::Nat, 1).key
        }
    );
}

#[test]
fn real_server_before_service() {
    let u = ServiceKey {
        fwmark: 0,
        proto: Proto::Udp,
        vip: std::net::IpAddr::V4(Ipv4Addr::new(1, 2, 3, 4)),
        port: 53,
    };
    assert_eq!(
        p("-a -r 5.6.7.8:5353 -m -u 1.2.3.4:53").unwrap(),
        Command::Mutate(BatchCmd::AddDest {
            service: u,
            dest: dest([5, 6, 7, 8], 5353, Method::Nat, 1)
        })
    );
}

#[test]
fn dest_errors() {
    assert_eq!(
        err("-a -t 1.2.3.4:80 -r 5.6.7.8 -w 65536"),
        "illegal weight specified"
    );
    assert_eq!(
        err("-a -t 1.2.3.4:80 -r 5.6.7.8 -w -1"),
        "illegal weight specified"
    );
    assert_eq!(
        err("-a -t 1.2.3.4:80 -r 5.6.7.8 -w abc"),
        "illegal weight specified"
    );
    assert_eq!(
        err("-a -t 1.2.3.4:80 -r 5.6.7.8 -x 2147483648"),
        "illegal u_threshold specified"
    );
    assert_eq!(
        err("-a -t 1.2.3.4:80 -r 5.6.7.8 -y z"),
        "illegal l_threshold specified"
    );
    assert_eq!(
        err("-a -t 1.2.3.4:80 -r 5.6.7"),
        "illegal real server address[:port] specified"
    );
    assert_eq!(
        err("-a -t 1.2.3.4:80"),
        "You need to supply the 'real-server' option for the 'add-server' command"
    );
    assert_eq!(
        err("-a -r 5.6.7.8"),
        "You need to supply the 'service-address' option for the 'add-server' command"
    );
    assert_eq!(
        err("-d -t 1.2.3.4:80 -r 5.6.7.8 -w 2"),
        "Illegal 'weight' option with the 'delete-server' command"
    );
    assert_eq!(
        err("-a -t 1.2.3.4:80 -r 5.6.7.8 -s rr"),
        "Illegal 'scheduler' option with the 'add-server' command"
    );
}

#[test]
fn list_zero_set_save_restore() {
    assert_eq!(p("").unwrap(), Command::List(ListCmd::default()));
    let ln = ListCmd {
        numeric: true,
        ..Default::default()
    };
    assert_eq!(p("-L -n").unwrap(), Command::List(ln));
    assert_eq!(p("-Ln").unwrap(), Command::List(ln));
    assert_eq!(p("-ln").unwrap(), Command::List(ln));
    assert_eq!(p("--list --numeric").unwrap(), Command::List(ln));
    let all = ListCmd {
        numeric: true,
        stats: true,
        exact: true,
        nosort: true,
        ..Default::default()
    };
    assert_eq!(
        p("-L -n --stats --exact --nosort --sort").unwrap(),
        Command::List(all)
    );
    let r = ListCmd {
        rate: true,
        ..Default::default()
    };
    assert_eq!(p("-L --rate").unwrap(), Command::List(r));
    let c = ListCmd {
        numeric: true,
        conns: true,
        ..Default::default()
    };
    assert_eq!(p("-Lnc").unwrap(), Command::List(c));
    assert_eq!(p("-L -n --connection").unwrap(), Command::List(c));
    let t = ListCmd {
        timeout: true,
        ..Default::default()
    };
    assert_eq!(p("-L --timeout").unwrap(), Command::List(t));
    let d = ListCmd {
        daemon: true,
        numeric: true,
        ..Default::default()
    };
    assert_eq!(p("-L -n --daemon").unwrap(), Command::List(d));
    assert!(err("-L --daemon --timeout").contains("conflicts"));
    assert!(err("-L --daemon --stats").contains("conflicts"));
    assert!(err("-A --daemon -t 1.2.3.4:80").contains("Illegal 'daemon' option"));
    let th = ListCmd {
        thresholds: true,
        ..Default::default()
    };
    assert_eq!(p("-L --thresholds").unwrap(), Command::List(th));
    let one = ListCmd {
        service: Some(tkey([1, 2, 3, 4], 80)),
        numeric: true,
        ..Default::default()
    };
    assert_eq!(p("-L -n -t 1.2.3.4:80").unwrap(), Command::List(one));
    assert_eq!(
        err("-L -c --stats"),
        "options conflicts in the list command"
    );
    assert_eq!(
        err("-L -c --timeout"),
        "The option 'timeout' conflicts with the 'connection' option in the 'list' command"
    );
    assert_eq!(
        err("-L -w 1"),
        "Illegal 'weight' option with the 'list' command"
    );

    assert_eq!(m("-Z"), BatchCmd::Zero { service: None });
    let service = Some(tkey([1, 2, 3, 4], 80));
    assert_eq!(m("--zero -t 1.2.3.4:80"), BatchCmd::Zero { service });
    for (args, (tcp, tcpfin, udp)) in [
        ("--set 900 120 300", (900, 120, 300)),
        ("--set 0 0 5", (0, 0, 5)),
    ] {
        let timeouts = Timeouts { tcp, tcpfin, udp };
        assert_eq!(m(args), BatchCmd::SetTimeouts { timeouts }, "{args}");
    }
    assert_eq!(err("--set 1 2"), "--set option requires 3 timeout values");
    assert_eq!(err("--set 1 2 x"), "invalid timeout value `x' specified");
    assert_eq!(err("--set 1 2 3 4"), "unexpected argument 4");
    assert_eq!(p("-S").unwrap(), Command::Save { numeric: false });
    assert_eq!(p("-S -n").unwrap(), Command::Save { numeric: true });
    assert_eq!(p("--save").unwrap(), Command::Save { numeric: false });
    assert_eq!(
        err("-S -c"),
        "Illegal 'connection' option with the 'save' command"
    );
    assert_eq!(p("-R").unwrap(), Command::Restore);
    assert_eq!(p("--restore").unwrap(), Command::Restore);
    assert_eq!(p("-h").unwrap(), Command::Help);
    assert_eq!(p("--version").unwrap(), Command::Version);
}

#[test]
fn addr_port_parsing() {
    assert_eq!(
        parse_addr_port("1.2.3.4:80", Proto::Tcp),
        Some((Ipv4Addr::new(1, 2, 3, 4).into(), Some(80)))
    );
    assert_eq!(
        parse_addr_port("1.2.3.4", Proto::Tcp),
        Some((Ipv4Addr::new(1, 2, 3, 4).into(), None))
    );
    assert_eq!(
        parse_addr_port("localhost:1", Proto::Tcp),
        Some((Ipv4Addr::LOCALHOST.into(), Some(1)))
    );
    assert_eq!(parse_addr_port("1.2.3.4:", Proto::Udp), None);
    assert_eq!(parse_addr_port("1.2.3.4:x", Proto::Udp), None);
    assert_eq!(parse_addr_port("1234", Proto::Udp), None);
    assert_eq!(parse_addr_port("", Proto::Udp), None);
}

#[test]
fn service_names() {
    let db = "# comment\nhttp\t\t80/tcp\t\twww # WorldWideWeb\nhttp 80/udp\ndomain 53/udp\nkerberos 88/tcp kerberos5 krb5\n";
    assert_eq!(lookup_service(db, "http", Proto::Tcp), Some(80));
    assert_eq!(lookup_service(db, "www", Proto::Tcp), Some(80));
    assert_eq!(lookup_service(db, "domain", Proto::Udp), Some(53));
    assert_eq!(lookup_service(db, "domain", Proto::Tcp), None);
    assert_eq!(lookup_service(db, "krb5", Proto::Tcp), Some(88));
    assert_eq!(lookup_service(db, "WorldWideWeb", Proto::Tcp), None);
    assert_eq!(lookup_service(db, "", Proto::Tcp), None);
}

#[test]
fn socket_option_and_line_split() {
    let (s, rest) = split_socket(&argv("--socket /tmp/x.sock -L -n")).unwrap();
    assert_eq!(s, Some(std::path::PathBuf::from("/tmp/x.sock")));
    assert_eq!(rest, argv("-L -n"));
    let (s, _) = split_socket(&argv("-L --socket=/a")).unwrap();
    assert_eq!(s, Some(std::path::PathBuf::from("/a")));
    assert!(split_socket(&argv("-L --socket")).is_err());
    assert_eq!(
        split_line("  -A -t 1.2.3.4:80  # comment"),
        vec!["-A", "-t", "1.2.3.4:80"]
    );
    assert_eq!(split_line("# only"), Vec::<String>::new());
    assert_eq!(split_line("-s \"r r\" 'x'"), vec!["-s", "r r", "x"]);
}

#[test]
fn synproxy_option() {
    let k = tkey([10, 0, 0, 100], 80);
    let mut want = svc(k, SchedKind::Rr, None);
    want.synproxy = true;
    for args in [
        "-A -t 10.0.0.100:80 -s rr --synproxy",
        "-A -t 10.0.0.100:80 -s rr -j enable",
        "-A -t 10.0.0.100:80 -s rr --synproxy=enable",
    ] {
        assert_eq!(
            m(args),
            BatchCmd::AddService {
                service: want.clone()
            },
            "{args}"
        );
    }
    want.synproxy = false;
    assert_eq!(
        m("-E -t 10.0.0.100:80 -s rr -j disable"),
        BatchCmd::EditService { service: want }
    );
    assert_eq!(
        err("-A -t 10.0.0.100:80 -j maybe"),
        "illegal synproxy value specified (enable or disable)"
    );
    assert!(err("-a -t 10.0.0.100:80 -r 10.0.0.1 --synproxy").starts_with("Illegal 'synproxy'"));
}

#[test]
fn ipv6_addresses_and_prefix_mask() {
    let v6 = |s: &str| std::net::IpAddr::V6(s.parse().unwrap());
    assert_eq!(
        parse_addr_port("[2001:db8::10]:80", Proto::Tcp),
        Some((v6("2001:db8::10"), Some(80)))
    );
    assert_eq!(
        parse_addr_port("[2001:db8::10]", Proto::Tcp),
        Some((v6("2001:db8::10"), None))
    );
    assert_eq!(
        parse_addr_port("2001:db8::10", Proto::Tcp),
        Some((v6("2001:db8::10"), None))
    );
    for bad in [
        "[2001:db8::10",
        "[2001:db8::10]80",
        "[10.0.0.1]:80",
        "[zz::1]:80",
        "[::1]:x y",
    ] {
        assert_eq!(parse_addr_port(bad, Proto::Tcp), None, "{bad}");
    }
    let k = ServiceKey {
        fwmark: 0,
        proto: Proto::Tcp,
        vip: v6("2001:db8::10"),
        port: 80,
    };
    let mut s = svc(k, SchedKind::Rr, Some(60));
    s.prefix6 = 64;
    assert_eq!(
        m("-A -t [2001:db8::10]:80 -s rr -p 60 -M 64"),
        BatchCmd::AddService { service: s }
    );
    // -M before -t works too (read once the family is known)
    let mut s2 = svc(k, SchedKind::Rr, Some(60));
    s2.prefix6 = 48;
    assert_eq!(
        m("-A -M 48 -t [2001:db8::10]:80 -s rr -p 60"),
        BatchCmd::AddService { service: s2 }
    );
    assert_eq!(
        err("-A -t [2001:db8::10]:80 -p 60 -M 255.255.255.0"),
        "illegal ipv6 netmask specified"
    );
    assert_eq!(
        err("-A -t [2001:db8::10]:80 -p 60 -M 129"),
        "illegal ipv6 netmask specified"
    );
    let mut d = dest([0, 0, 0, 0], 8080, Method::Nat, 1);
    d.key.addr = v6("2001:db8:2::11");
    assert_eq!(
        m("-a -t [2001:db8::10]:80 -r [2001:db8:2::11]:8080 -m"),
        BatchCmd::AddDest {
            service: k,
            dest: d
        }
    );
}

/// DPVS's FullNAT spellings: `-b` is --fullnat with -a/-e (and stays
/// --sched-flags with -A/-E); `--add-laddr`/`-P`, `--del-laddr`/`-Q`
/// with `-z`, `--get-laddr`/`-G`.
#[test]
fn fullnat_and_local_addresses() {
    let k = tkey([10, 0, 0, 100], 80);
    for args in [
        "-a -t 10.0.0.100:80 -r 172.16.0.11:8080 -b -w 2",
        "--add-server -t 10.0.0.100:80 -r 172.16.0.11:8080 --fullnat -w 2",
    ] {
        let mut d = dest([172, 16, 0, 11], 8080, Method::FullNat, 2);
        d.key.port = 8080;
        assert_eq!(
            m(args),
            BatchCmd::AddDest {
                service: k,
                dest: d
            },
            "{args}"
        );
    }
    // -b with -A is still ipvsadm's --sched-flags
    assert!(matches!(
        m("-A -t 10.0.0.100:80 -s sh -b sh-port"),
        BatchCmd::AddService { service } if service.flags.port
    ));
    let a: std::net::IpAddr = "10.0.0.200".parse().unwrap();
    for args in [
        "--add-laddr -t 10.0.0.100:80 -z 10.0.0.200",
        "-P -t 10.0.0.100:80 -z 10.0.0.200",
    ] {
        assert_eq!(
            m(args),
            BatchCmd::AddLaddr {
                service: k,
                addr: a
            },
            "{args}"
        );
    }
    assert_eq!(
        m("-Q -t 10.0.0.100:80 --laddr 10.0.0.200"),
        BatchCmd::DelLaddr {
            service: k,
            addr: a
        }
    );
    assert_eq!(
        p("-G -t 10.0.0.100:80").unwrap(),
        Command::GetLaddr { service: Some(k) }
    );
    assert_eq!(
        p("--get-laddr").unwrap(),
        Command::GetLaddr { service: None }
    );
    assert!(err("--add-laddr -t 10.0.0.100:80").contains("'laddr'"));
    assert!(err("-P -t 10.0.0.100:80 -z nope").contains("illegal local address"));
    assert!(err("-A -t 10.0.0.100:80 -z 10.0.0.200").contains("Illegal 'laddr'"));
}

#[test]
fn ops_option() {
    let k = ServiceKey {
        fwmark: 0,
        proto: Proto::Udp,
        ..tkey([10, 0, 0, 53], 53)
    };
    let mut want = svc(k, SchedKind::Rr, None);
    want.ops = true;
    for args in [
        "-A -u 10.0.0.53:53 -s rr -o",
        "-A -u 10.0.0.53:53 --ops -s rr",
    ] {
        assert_eq!(
            m(args),
            BatchCmd::AddService {
                service: want.clone()
            },
            "{args}"
        );
    }
    // -E takes the whole service, as ipvsadm's: without -o it is off
    want.ops = false;
    assert_eq!(
        m("-E -u 10.0.0.53:53 -s rr"),
        BatchCmd::EditService { service: want }
    );
    assert_eq!(
        err("-A -t 10.0.0.100:80 -o"),
        "One-Packet Scheduling is only for UDP virtual services"
    );
    assert!(err("-a -u 10.0.0.53:53 -r 10.0.0.1 -o").starts_with("Illegal 'ops'"));
}

#[test]
fn client_address_option() {
    use dirigo_core::lb::spec::ClientAddress;
    let k = tkey([10, 0, 0, 100], 80);
    let mut want = svc(k, SchedKind::Rr, None);
    for how in ClientAddress::ALL {
        want.client_address = how;
        let args = format!("-A -t 10.0.0.100:80 -s rr --client-address {}", how.name());
        assert_eq!(
            m(&args),
            BatchCmd::AddService {
                service: want.clone()
            },
            "{args}"
        );
    }
    assert_eq!(
        err("-A -t 10.0.0.100:80 --client-address proxy"),
        "illegal client-address value specified (none, toa, proxy-v1 or proxy-v2)"
    );
    assert!(err("-a -t 10.0.0.100:80 -r 10.0.0.1 --client-address toa")
        .starts_with("Illegal 'client-address'"));
}
