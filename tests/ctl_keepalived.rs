//! `dirigoctl keepalived-convert`, the real binary, on the keepalived.conf
//! fixtures in tests/fixtures/keepalived: offline (no daemon), TOML on
//! stdout that dirigo reads, warnings and errors as `file:line` on stderr.

use dirigo::health::spec::{OnFailure, Probe};
use dirigo::lb::spec::Method;
use dirigo_config::Config;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `dirigoctl keepalived-convert FILE` run in the fixtures' folder (so the
/// messages name files as the command line does), with no daemon socket.
fn convert(file: &str) -> Out {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/keepalived");
    let o = Command::new(concat!(env!("CARGO_BIN_EXE_dirigo"), "ctl"))
        .args([
            "--socket",
            "/nonexistent/dirigo.sock",
            "keepalived-convert",
            file,
        ])
        .current_dir(dir)
        .env_remove("DIRIGO_SOCKET")
        .output()
        .expect("run dirigoctl");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
}

/// What a config needs besides the services.
const PREFIX: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/keepalived/dirigo-prefix.toml"
));

#[test]
fn converts_a_keepalived_conf_with_includes() {
    let o = convert("keepalived.conf");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let warnings: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(
        warnings,
        [
            "keepalived.conf:4: warning: global_defs skipped: keepalived's global settings have no dirigo equivalent",
            "keepalived.conf:11: warning: vrrp_instance VI_1 skipped: dirigo does not run VRRP (keepalived can go on doing it: VRRP reaches the kernel through dirigo's exception path)",
            "conf.d/20-api.conf:35: warning: virtual_server fwmark 7: keepalived takes the mark from iptables (-t mangle ... -j MARK), which dirigo does not read: add [[mark]] rules that give mark 7 to the service's packets (docs/CONFIG.md, [[mark]]); until then the service receives nothing",
        ]
    );
    assert!(
        o.stdout
            .starts_with("# dirigo services converted from keepalived.conf"),
        "{}",
        o.stdout
    );
    assert!(o
        .stdout
        .contains("# virtual_server 10.10.10.10 80 (conf.d/10-web.conf:2)"));

    let c = Config::parse(&format!("{PREFIX}{}", o.stdout), "converted.toml")
        .unwrap_or_else(|e| panic!("{e}\n{}", o.stdout));
    assert_eq!(c.services.len(), 3);
    // the fwmark service, its rules for the operator to add
    let fwm = &c.services[2];
    assert_eq!(fwm.spec.key, dirigo::lb::spec::ServiceKey::fwmark(7, false));
    assert!(
        o.stdout.contains("[[service]]\nfwmark = 7\n"),
        "{}",
        o.stdout
    );
    assert!(c.marks.is_empty());
    let web = &c.services[0];
    assert_eq!(web.spec.key.port, 80);
    assert!(web.dests.iter().all(|d| d.method == Method::Dr));
    assert_eq!(
        web.dests.iter().map(|d| d.weight).collect::<Vec<_>>(),
        [3, 1]
    );
    let tcp = web
        .health
        .check
        .clone()
        .expect("one check for both servers");
    assert_eq!(tcp.probe, Probe::Tcp);
    assert_eq!(
        (tcp.interval, tcp.timeout, tcp.rise, tcp.fall, tcp.port),
        (
            Duration::from_secs(6),
            Duration::from_secs(3),
            1,
            4,
            Some(8081)
        )
    );
    assert_eq!(tcp.on_failure, OnFailure::Remove);
    assert_eq!(tcp.retry_delay, Some(Duration::from_secs(3)));

    let api = &c.services[1];
    assert_eq!(api.spec.key.port, 443);
    assert_eq!(api.spec.persistent, Some(300));
    assert!(api
        .dests
        .iter()
        .all(|d| d.method == Method::Nat && d.key.port == 8080));
    assert_eq!(api.health.sorry, Some("172.16.0.99:8080".parse().unwrap()));
    assert_eq!(api.health.quorum, Some(1));
    let on_failure: Vec<OnFailure> = api
        .health
        .checks
        .iter()
        .map(|(_, c)| c.on_failure)
        .collect();
    assert_eq!(on_failure, [OnFailure::Inhibit, OnFailure::Remove]);
    assert!(matches!(
        &api.health.checks[0].1.probe,
        Probe::Http { path, status, .. } if path == "/health" && status == &vec![(200, 200)]
    ));
}

#[test]
fn a_missing_brace_is_an_error_with_its_line_and_no_output() {
    let o = convert("broken.conf");
    assert_ne!(o.code, 0);
    assert_eq!(o.stdout, "");
    assert_eq!(o.stderr, "broken.conf:8: error: this '{' is never closed\n");
}

#[test]
fn a_bad_address_is_an_error_with_its_line_and_no_output() {
    let o = convert("bad-address.conf");
    assert_ne!(o.code, 0);
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr,
        "bad-address.conf:4: error: real_server: '172.16.0.256' is not an IP address\n"
    );
}

#[test]
fn an_include_cycle_is_an_error_and_no_output() {
    let o = convert("cycle-a.conf");
    assert_ne!(o.code, 0);
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr,
        "cycle-b.conf:5: error: include cycle: cycle-a.conf -> cycle-b.conf -> cycle-a.conf\n"
    );
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let o = convert("no-such.conf");
    assert_ne!(o.code, 0);
    assert_eq!(o.stdout, "");
    assert!(
        o.stderr
            .starts_with("no-such.conf: error: cannot read no-such.conf: "),
        "{}",
        o.stderr
    );
}

#[test]
fn smtp_dns_and_file_checks_convert_and_pass_dirigo_check() {
    let o = convert("checkers.conf");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stderr, "", "nothing skipped");
    let c = Config::parse(&format!("{PREFIX}{}", o.stdout), "converted.toml")
        .unwrap_or_else(|e| panic!("{e}\n{}", o.stdout));
    assert_eq!(c.services.len(), 3);
    let smtp = c.services[0].health.check.clone().expect("one smtp check");
    assert_eq!(
        smtp.probe,
        Probe::Smtp {
            helo: "lb.example.org".into()
        }
    );
    assert_eq!(
        (smtp.fall, smtp.retry_delay),
        (3, Some(Duration::from_secs(1)))
    );
    let dns = c.services[1].health.check.clone().expect("the dns check");
    assert_eq!(
        dns.probe,
        Probe::Dns {
            qtype: 1,
            name: "www.example.org".into(),
            expect: None
        }
    );
    // keepalived's DNS_CHECK: retry 3, delay_before_retry the delay_loop
    assert_eq!(
        (dns.fall, dns.retry_delay),
        (4, Some(Duration::from_secs(4)))
    );
    let files: Vec<Probe> = c.services[2]
        .health
        .checks
        .iter()
        .map(|(_, s)| s.probe.clone())
        .collect();
    assert_eq!(
        files,
        [
            Probe::File {
                path: "/run/dirigo-fixture/web-drain".into(),
                factor: 0,
                reverse: false
            },
            Probe::File {
                path: "/run/dirigo-fixture/web-boost".into(),
                factor: 2,
                reverse: false
            }
        ]
    );
    // and `dirigo --check` takes it (its own EAL arguments: --in-memory is
    // refused by --check)
    let dir = std::env::temp_dir().join(format!("dirigo-ka-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("converted.toml");
    let prefix = PREFIX.replace(", \"--in-memory\"", "");
    std::fs::write(&file, format!("{prefix}{}", o.stdout)).unwrap();
    let check = Command::new(env!("CARGO_BIN_EXE_dirigo"))
        .arg("--check")
        .arg("--config")
        .arg(&file)
        .output()
        .expect("run dirigo --check");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        check.status.success(),
        "dirigo --check: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}
