//! The daemon binary: start-up errors are one readable line with a non-zero
//! exit; a good config starts on virtual devices and stops cleanly on
//! SIGTERM, printing its per-port counters.

mod common;

use std::process::Command;

fn run_with(config: &str, name: &str) -> (i32, String) {
    let dir = common::scratch(name);
    let p = dir.join("c.toml");
    std::fs::write(&p, config).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dirigo"))
        .arg("--config")
        .arg(&p)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn good(prefix: &str, vdev: &str) -> String {
    common::DaemonConfig::new(prefix, format!("/tmp/{prefix}.sock"))
        .vdev(vdev)
        .port("wan", "net_pcap0", "10.0.0.1/24")
        .toml()
}

#[test]
fn bad_configs_fail_with_one_clear_line() {
    let base = good("dg-badcfg", "net_null0");
    let cases: Vec<(String, &str)> = vec![
        (
            base.replace("name = \"wan\"", "name = \"wan\"\ncolour = \"red\""),
            "unknown field `colour`",
        ),
        (
            base.replace("10.0.0.1/24", "10.0.0.1/40"),
            "prefix length '40'",
        ),
        (
            base.clone() + "[[port]]\nname = \"wan\"\ndevice = \"net_null1\"\n",
            "duplicate port name 'wan'",
        ),
        ("[eal]\nargs = []\n".into(), "no [[port]] defined"),
        (
            exception(&base, "kni", "k0", None),
            "unknown variant `kni`, expected `tap` or `virtio-user`",
        ),
        (
            exception(&base, "tap", "a-name-too-long0", None),
            "at most 15 bytes",
        ),
        (
            exception(&base, "tap", "k0", None)
                + "[[port]]\nname = \"lan\"\ndevice = \"net_null1\"\nkernel_interface = \"k0\"\n",
            "kernel_interface 'k0' is already another port's",
        ),
        ("this is not toml".into(), "invalid config"),
    ];
    for (i, (cfg, want)) in cases.iter().enumerate() {
        let (code, err) = run_with(cfg, &format!("badcfg{i}"));
        assert_eq!(code, 2, "case {i}: exit code; stderr: {err}");
        assert!(err.contains(want), "case {i}: want '{want}' in: {err}");
        assert_eq!(err.trim().lines().count(), 1, "case {i}: one line: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_dirigo"))
        .args(["--config", "/nonexistent/x.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read config /nonexistent/x.toml"));
}

/// `base` with an `[exception]` section of `backend` (and `netns`) and
/// the wan port's kernel interface `ifname`.
fn exception(base: &str, backend: &str, ifname: &str, netns: Option<&str>) -> String {
    let ns = netns
        .map(|n| format!("netns = \"{n}\"\n"))
        .unwrap_or_default();
    base.replace(
        "name = \"wan\"",
        &format!("name = \"wan\"\nkernel_interface = \"{ifname}\""),
    ) + &format!("[exception]\nbackend = \"{backend}\"\n{ns}")
}

/// Exception-path failures that only start-up can find: one `dirigo:` line
/// naming what is missing or taken, exit 1, nothing left running.
#[test]
fn exception_start_errors_are_clear() {
    if !common::privileged("daemon exception start errors") {
        return;
    }
    let base = common::DaemonConfig::new("dg-excerr", "/tmp/dg-excerr.sock")
        .vdev("net_null0")
        .port("wan", "net_null0", "10.0.0.1/24")
        .toml();
    let mut cases: Vec<(String, Vec<&str>)> = Vec::new();
    if std::path::Path::new("/dev/vhost-net").exists() {
        eprintln!("SKIP the virtio-user refusal case: this machine has /dev/vhost-net");
    } else {
        cases.push((
            exception(&base, "virtio-user", "dgexc0", None),
            vec!["needs /dev/vhost-net", "backend = \"tap\""],
        ));
    }
    // a namespace that cannot be created: a directory where its file goes
    let blocked = "/run/netns/dg-excerr-ns";
    std::fs::create_dir_all(blocked).unwrap();
    cases.push((
        exception(&base, "tap", "dgexc0", Some("dg-excerr-ns")),
        vec!["netns 'dg-excerr-ns'"],
    ));
    // an interface name that is taken
    let _ = Command::new("ip")
        .args(["link", "del", "dgexist0"])
        .status();
    let made = Command::new("ip")
        .args([
            "link", "add", "dgexist0", "type", "veth", "peer", "name", "dgexist1",
        ])
        .status()
        .unwrap();
    assert!(made.success());
    cases.push((
        exception(&base, "tap", "dgexist0", None),
        vec!["port 'wan'", "cannot create kernel interface 'dgexist0'"],
    ));
    for (i, (cfg, want)) in cases.iter().enumerate() {
        let (code, err) = run_with(cfg, &format!("excerr{i}"));
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("dirigo: ")).collect();
        let last = ours.last().copied().unwrap_or_default();
        assert_eq!(code, 1, "case {i}: {err}");
        for w in want {
            assert!(
                last.contains(w),
                "case {i}: want {w:?} in the last line {last:?}: {err}"
            );
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = Command::new("ip")
        .args(["link", "del", "dgexist0"])
        .status();
    let _ = std::fs::remove_dir(blocked);
}

#[test]
fn missing_device_is_a_clear_error() {
    if !common::privileged("daemon missing device") {
        return;
    }
    // The port names a device that EAL was not given.
    let cfg = good("dg-missdev", "net_null0");
    let (code, err) = run_with(&cfg, "missdev");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("port 'wan'") && err.contains("no such DPDK device"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn starts_on_pcap_and_stops_on_sigterm() {
    if !common::privileged("daemon start/stop") {
        return;
    }
    let dir = common::scratch("daemon-startstop");
    let cfg = good(
        "dg-startstop",
        &format!(
            "net_pcap0,rx_iface_in=lo,tx_pcap={}",
            dir.join("out.pcap").display()
        ),
    );
    let d = common::Daemon::start(&dir, &cfg);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = d.stop();
    assert!(out.contains("dirigo: stopping"), "{out}");
    assert!(out.contains("port wan (net_pcap0): rx "), "{out}");
}
