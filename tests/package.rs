//! The Debian package end to end (root; runs in CI): `scripts/package.sh`
//! builds `dirigo_<version>_amd64.deb`; `dpkg -i` installs the three
//! programs, the conffile, the man pages, the completions and the unit;
//! the installed dirigo names its commit and the DPDK it runs with;
//! `systemd-analyze verify` accepts the unit; an upgrade to a newer
//! package keeps the installed dirigo's connections (the handoff: the
//! maintainer scripts try-restart a running unit, whose SIGTERM writes the
//! handoff file the newer dirigo installs); `dpkg -r` removes the
//! programs and keeps an edited conffile; `dpkg -P` leaves nothing.
//!
//! It refuses to run where a dirigo package is already installed (it
//! would remove it). It packages the debug build this test run has already
//! made (`DIRIGO_PACKAGE_PROFILE=dev`): what it checks is the packaging, and
//! a release build would add minutes to CI; `scripts/package.sh` without
//! the variable builds release, as an operator's package is.

mod common;
#[path = "vdev_modes/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "vdev_modes/packets.rs"]
#[allow(dead_code)]
mod packets;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Run a program; its exit code, stdout and stderr.
fn run(prog: &str, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{prog}: {e}"));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn ok(prog: &str, args: &[&str]) -> String {
    let (code, out, err) = run(prog, args);
    assert_eq!(code, 0, "{prog} {args:?}:\n{out}{err}");
    out
}

/// dpkg's view of the package: "" when it knows nothing of it.
fn status() -> String {
    run("dpkg-query", &["-W", "-f", "${Status}", "dirigo"]).1
}

fn has(prog: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {prog}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whatever happens, the package is purged at the end, and the formatted
/// man pages man-db's trigger cached for it removed.
struct Purge {
    cat_pages: Vec<PathBuf>,
}

impl Drop for Purge {
    fn drop(&mut self) {
        let _ = run("dpkg", &["-P", "dirigo"]);
        for p in &self.cat_pages {
            let _ = std::fs::remove_file(p);
        }
    }
}

const PROGRAMS: [&str; 3] = [
    "/usr/sbin/dirigo",
    "/usr/sbin/dirigoadm",
    "/usr/bin/dirigoctl",
];
const CONFFILE: &str = "/etc/dirigo/dirigo.toml";

#[test]
fn package_builds_installs_and_leaves_no_trace() {
    if !common::root("the Debian package (dpkg -i)") {
        return;
    }
    let mut missing: Vec<&str> = ["dpkg", "dpkg-deb", "dpkg-query"]
        .into_iter()
        .filter(|p| !has(p))
        .collect();
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        missing.extend(["systemd-analyze", "man"].into_iter().filter(|p| !has(p)));
    }
    assert!(
        missing.is_empty(),
        "missing {missing:?}: run scripts/install-deps.sh"
    );
    let before = status();
    if !before.is_empty() && before != "unknown ok not-installed" {
        let why =
            format!("a dirigo package is on this machine ({before}); the test would remove it");
        assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "{why}");
        eprintln!("SKIP the Debian package: {why}");
        return;
    }

    // Build, in this test build's target directory.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let t0 = Instant::now();
    let mut cmd = Command::new(root.join("scripts/package.sh"));
    // Not what `cargo test` set for this process: the nested cargo would
    // see them as changed inputs (ring's build script reruns on
    // CARGO_PKG_* and OUT_DIR, dirigo's on DIRIGO_GIT_COMMIT) and rebuild half the
    // tree, then the next `cargo` here would rebuild it back.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if (k.starts_with("CARGO") && k != "CARGO_HOME")
            || k == "OUT_DIR"
            || k == "DIRIGO_GIT_COMMIT"
        {
            cmd.env_remove(&*k);
        }
    }
    let o = cmd
        .env("CARGO_TARGET_DIR", target)
        .env("DIRIGO_PACKAGE_PROFILE", "dev")
        .output()
        .expect("run scripts/package.sh");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "package.sh failed:\n{out}\n{err}");
    eprintln!(
        "package.sh took {:.0} s ({})",
        t0.elapsed().as_secs_f64(),
        out.lines().find(|l| l.contains(" build ")).unwrap_or("")
    );
    let deb = out.lines().last().unwrap_or_default().trim().to_string();
    let name = format!("dirigo_{}_amd64.deb", env!("CARGO_PKG_VERSION"));
    assert!(deb.ends_with(&format!("/{name}")), "{deb}");
    assert!(Path::new(&deb).is_file(), "{deb}");

    // Depends come from the binaries (dpkg-shlibdeps), not a list.
    let depends = ok("dpkg-deb", &["-f", &deb, "Depends"]);
    for lib in ["libc6", "librte-eal23", "librte-ethdev23"] {
        assert!(depends.contains(lib), "Depends: {depends}");
    }

    let man_cache = |p: &str| PathBuf::from(format!("/var/cache/man/{p}"));
    let guard = Purge {
        cat_pages: [
            "cat8/dirigo.8.gz",
            "cat8/dirigoadm.8.gz",
            "cat1/dirigoctl.1.gz",
        ]
        .into_iter()
        .map(man_cache)
        .filter(|p| !p.exists())
        .collect(),
    };
    ok("dpkg", &["-i", &deb]);
    assert_eq!(status(), "install ok installed");

    // What it installed.
    for f in PROGRAMS.iter().copied().chain([
        CONFFILE,
        "/etc/default/dirigo",
        "/usr/lib/systemd/system/dirigo.service",
        "/usr/libexec/dirigo/setup-hugepages",
        "/usr/share/man/man8/dirigo.8.gz",
        "/usr/share/man/man8/dirigoadm.8.gz",
        "/usr/share/man/man1/dirigoctl.1.gz",
        "/usr/share/bash-completion/completions/dirigoadm",
        "/usr/share/zsh/vendor-completions/_dirigoctl",
        "/usr/share/fish/vendor_completions.d/dirigo.fish",
        "/usr/share/doc/dirigo/CONFIG.md",
        "/usr/share/doc/dirigo/OPERATIONS.md",
        "/usr/share/doc/dirigo/examples/lab.toml",
        "/usr/share/doc/dirigo/examples/bird-director.conf",
    ]) {
        assert!(Path::new(f).is_file(), "{f} was not installed");
    }
    let conffiles = ok("dpkg-query", &["-W", "-f", "${Conffiles}", "dirigo"]);
    assert!(conffiles.contains(CONFFILE), "{conffiles}");
    if has("man") {
        let w = ok("man", &["-w", "dirigoadm"]);
        assert_eq!(w.trim(), "/usr/share/man/man8/dirigoadm.8.gz");
        // the page has the table's options and the differences
        let page = ok("sh", &["-c", "zcat /usr/share/man/man8/dirigoadm.8.gz"]);
        for s in ["add\\-service", "DIFFERENCES FROM IPVSADM", "\\-\\-socket"] {
            assert!(page.contains(s), "dirigoadm.8 lacks {s}");
        }
    }
    ok(
        "bash",
        &["-n", "/usr/share/bash-completion/completions/dirigoctl"],
    );

    // The installed daemon says its commit and the DPDK it runs with.
    let want = format!(
        "{} (commit {}, DPDK {})",
        dirigo::version::VERSION,
        dirigo::version::COMMIT,
        dirigo::version::dpdk()
    );
    assert_eq!(
        ok("/usr/sbin/dirigo", &["--version"]).trim(),
        format!("dirigo {want}")
    );
    // the tools link no DPDK: they name their commit only
    assert_eq!(
        ok("/usr/bin/dirigoctl", &["--version"]).trim(),
        format!(
            "dirigoctl {} (commit {})",
            dirigo::version::VERSION,
            dirigo::version::COMMIT
        )
    );
    for tool in ["/usr/bin/dirigoctl", "/usr/sbin/dirigoadm"] {
        let (_, libs, _) = run("ldd", &[tool]);
        assert!(!libs.contains("librte_"), "{tool} links DPDK:\n{libs}");
    }
    let adm = ok("/usr/sbin/dirigoadm", &["-v"]);
    assert!(
        adm.contains(&format!("commit {}", dirigo::version::COMMIT)),
        "{adm}"
    );
    if run(
        "git",
        &["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"],
    )
    .0 == 0
    {
        assert_ne!(
            dirigo::version::COMMIT,
            "unknown",
            "built in a git checkout"
        );
    }

    // The conffile as shipped starts nothing: --check refuses it, saying why.
    let (code, _, err) = run("/usr/sbin/dirigo", &["--check", "--config", CONFFILE]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{CONFFILE}:1: no [eal] section")),
        "{err}"
    );

    // The unit.
    if has("systemd-analyze") {
        let (code, out, err) = run(
            "systemd-analyze",
            &["verify", "/usr/lib/systemd/system/dirigo.service"],
        );
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            !format!("{out}{err}").contains("dirigo"),
            "warnings:\n{out}{err}"
        );
    } else {
        eprintln!("SKIP systemd-analyze verify: no systemd-analyze here (apt-get install systemd)");
    }

    // An upgrade keeps the connections.
    upgrade_keeps_connections(&deb);

    // Remove: the programs go, the edited conffile stays.
    let edited = std::fs::read_to_string(CONFFILE).unwrap() + "# edited by tests/package.rs\n";
    std::fs::write(CONFFILE, &edited).unwrap();
    ok("dpkg", &["-r", "dirigo"]);
    assert_eq!(status(), "deinstall ok config-files");
    for p in PROGRAMS {
        assert!(!Path::new(p).exists(), "{p} is still there after dpkg -r");
    }
    assert!(!Path::new("/usr/lib/systemd/system/dirigo.service").exists());
    assert_eq!(std::fs::read_to_string(CONFFILE).unwrap(), edited);

    // Purge: nothing left.
    ok("dpkg", &["-P", "dirigo"]);
    assert!(
        !Path::new("/etc/dirigo").exists(),
        "/etc/dirigo after dpkg -P"
    );
    assert!(!Path::new("/etc/default/dirigo").exists());
    let after = status();
    assert!(
        after.is_empty() || after == "unknown ok not-installed",
        "{after}"
    );
    drop(guard); // and man-db's cached pages
}

/// An upgrade keeps the installed dirigo's connections (issue 53):
/// - the maintainer scripts: on upgrade the old package's prerm does not
///   stop dirigo, the new one's postinst try-restarts it (systemd's stop
///   is the SIGTERM that writes the handoff file, its start the new
///   dirigo that installs it);
/// - that sequence, with the installed binaries (no systemd runs here):
///   the installed dirigo tracks 40 UDP flows, a SIGTERM writes them, a
///   newer package (the same files, version `+upgrade1`) is installed
///   over it, and its dirigo installs all 40: the same datagrams sent
///   again create no connection.
fn upgrade_keeps_connections(deb: &str) {
    use harness::{config, ctl, write_pcap, VIP, WAN_MAC};
    use packets::{eth, ip_udp, ETH_IPV4};
    let scripts = tempfile::tempdir().unwrap();
    let sd = scripts.path().display().to_string();
    ok("dpkg-deb", &["-e", deb, &sd]);
    let postinst = std::fs::read_to_string(scripts.path().join("postinst")).unwrap();
    assert!(
        postinst.contains("if [ -n \"$2\" ]; then")
            && postinst.contains("deb-systemd-invoke try-restart dirigo.service"),
        "postinst does not restart dirigo on upgrade:\n{postinst}"
    );
    let prerm = std::fs::read_to_string(scripts.path().join("prerm")).unwrap();
    assert!(
        prerm.contains("\"$1\" = remove") && !prerm.contains("upgrade"),
        "prerm stops dirigo on upgrade:\n{prerm}"
    );
    if !common::privileged("an upgrade keeps the connections (the installed dirigo)") {
        return;
    }
    // the newer package: the same files, a higher version
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let rd = root.display().to_string();
    ok("dpkg-deb", &["-R", deb, &rd]);
    let control = root.join("DEBIAN/control");
    let old = env!("CARGO_PKG_VERSION");
    let newer = format!("{old}+upgrade1");
    let c = std::fs::read_to_string(&control).unwrap();
    std::fs::write(
        &control,
        c.replace(&format!("Version: {old}\n"), &format!("Version: {newer}\n")),
    )
    .unwrap();
    let newer_deb = work.path().join("newer.deb").display().to_string();
    ok("dpkg-deb", &["-b", &rd, &newer_deb]);

    // the installed dirigo, 40 UDP flows through it (DR)
    let dir = work.path();
    let p = |f: &str| dir.join(f).display().to_string();
    let flows: Vec<Vec<u8>> = (0..40u8)
        .map(|i| {
            let client = [192, 0, 2, 10 + i];
            eth(
                WAN_MAC,
                [2, 0, 0, 0, 0x50, i],
                ETH_IPV4,
                &ip_udp(client, VIP, 40000, 53, 64, b"q"),
            )
        })
        .collect();
    write_pcap(&dir.join("in.pcap"), &flows);
    write_pcap(&dir.join("empty.pcap"), &[]);
    let sock = dir.join("ctl.sock");
    let cfg = config(
        "dg-pkg-upgrade",
        &sock,
        &format!("rx_pcap={},tx_pcap={}", p("in.pcap"), p("wan.pcap")),
        &format!("rx_pcap={},tx_pcap={}", p("empty.pcap"), p("lan.pcap")),
    )
    .control(&format!("handoff_file = \"{}\"", p("handoff")))
    .service(
        "udp",
        "10.0.0.100:53",
        "rr",
        &[("172.16.0.11:53", "dr"), ("172.16.0.12:53", "dr")],
    )
    .toml();
    let workers = |what: &str| -> u64 {
        let l = ctl(&sock, &["lcores"]);
        l.as_array()
            .expect("lcores")
            .iter()
            .filter(|w| w["role"] == "worker")
            .map(|w| w[what].as_u64().unwrap_or(0))
            .sum()
    };
    let wait_rx = || {
        let t0 = Instant::now();
        while workers("rx_packets") < 40 {
            assert!(t0.elapsed().as_secs() < 20, "the flows did not arrive");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let d = common::Daemon::start_bin("/usr/sbin/dirigo", dir, &cfg);
    wait_rx();
    assert_eq!(workers("conns"), 40);
    let out = d.stop();
    assert!(out.contains("handoff: 40 entries written to"), "{out}");

    // the upgrade, then what systemd's start would run: the newer dirigo
    ok("dpkg", &["-i", &newer_deb]);
    let v = ok("dpkg-query", &["-W", "-f", "${Version}", "dirigo"]);
    assert_eq!(v, newer);
    let d = common::Daemon::start_bin("/usr/sbin/dirigo", dir, &cfg);
    wait_rx();
    let h = ctl(&sock, &["handoff"]);
    let counter = |name: &str| {
        h["counters"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == name))
            .and_then(|c| c["value"].as_u64())
            .unwrap_or_else(|| panic!("no {name} in {h}"))
    };
    assert_eq!(h["outcome"], "installed", "{h}");
    assert_eq!(counter("handoff_installed"), 40, "{h}");
    // the same datagrams again: every one found its connection
    assert_eq!(workers("conns"), 40);
    assert_eq!(workers("conns_created"), 0, "flows scheduled anew");
    let out = d.stop();
    assert!(!out.contains("panicked"), "{out}");
    eprintln!("upgrade {old} -> {newer}: 40 connections written, installed, none scheduled anew");
}
