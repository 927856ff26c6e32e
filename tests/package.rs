//! The Debian package end to end (root; runs in CI): `scripts/package.sh`
//! builds `dirigo_<version>_amd64.deb`; `dpkg -i` installs the three
//! programs, the conffile, the man pages, the completions and the unit;
//! the installed dirigo names its commit and the DPDK it runs with;
//! `systemd-analyze verify` accepts the unit; `dpkg -r` removes the
//! programs and keeps an edited conffile; `dpkg -P` leaves nothing.
//!
//! It refuses to run where a dirigo package is already installed (it
//! would remove it). It packages the debug build this test run has already
//! made (`DIRIGO_PACKAGE_PROFILE=dev`): what it checks is the packaging, and
//! a release build would add minutes to CI; `scripts/package.sh` without
//! the variable builds release, as an operator's package is.

mod common;

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
