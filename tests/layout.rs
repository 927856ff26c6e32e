//! The workspace's layout rules (scripts/check-layout.py): plain module
//! folders (no `#[path]`), `unsafe` denied at each crate root and allowed
//! only in `pmd` and the core's `hint`, no import circle in a crate, the
//! layer crates depending on nothing above them (no DPDK, no tokio), and
//! no header sliced at a numeric offset outside the core's wire module.
//! Each rule is also planted, broken, in a copy of the sources: the check
//! must fail there, naming it.

use std::fs;
use std::path::Path;
use std::process::Command;

fn check(root: &Path) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-layout.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--root")
        .arg(root)
        .output()
        .expect("run python3 scripts/check-layout.py");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// A copy of what the check reads: every crate's sources and Cargo.toml.
fn copy_tree() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&root.join("src"), &tmp.path().join("src"));
    for c in ["core", "proto", "config", "tools"] {
        let d = Path::new("crates").join(c);
        copy_dir(&root.join(&d).join("src"), &tmp.path().join(&d).join("src"));
        fs::copy(
            root.join(&d).join("Cargo.toml"),
            tmp.path().join(&d).join("Cargo.toml"),
        )
        .unwrap();
    }
    tmp
}

fn edit(root: &Path, file: &str, f: impl FnOnce(String) -> String) {
    let p = root.join(file);
    let s = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{file}: {e}"));
    fs::write(&p, f(s)).unwrap();
}

#[test]
fn layout_rules_hold() {
    let (ok, text) = check(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(ok, "layout rules broken:\n{text}");
    assert!(text.contains("layout ok"), "{text}");
    // the copy the planted violations start from passes as it is
    let t = copy_tree();
    let (ok, text) = check(t.path());
    assert!(ok, "the unchanged copy fails:\n{text}");
}

/// Each violation, planted alone in a fresh copy: the check fails and
/// names it.
#[test]
fn each_planted_violation_fails_the_check() {
    type Plant = (
        &'static str,
        &'static str,
        fn(String) -> String,
        &'static str,
    );
    let plants: [Plant; 12] = [
        (
            "a #[path] module",
            "crates/core/src/net/mod.rs",
            |s| s + "\n#[path = \"x.rs\"]\nmod x;\n",
            "#[path] attribute",
        ),
        (
            "unsafe allowed in the protocol crate",
            "crates/proto/src/lib.rs",
            |s| s.replace("pub mod client;", "#[allow(unsafe_code)]\npub mod client;"),
            "allow(unsafe_code) outside the allowed modules",
        ),
        (
            "no deny(unsafe_code) at the configuration crate's root",
            "crates/config/src/lib.rs",
            |s| s.replace("#![deny(unsafe_code)]", ""),
            "missing #![deny(unsafe_code)]",
        ),
        (
            "an import circle in the core (net::meta -> lb::balancer -> net::meta)",
            "crates/core/src/net/meta.rs",
            |s| s + "\n#[allow(unused_imports)]\nuse crate::lb::balancer::Balancer;\n",
            "import circle",
        ),
        (
            "the core depending on DPDK",
            "crates/core/Cargo.toml",
            |s| {
                s.replace(
                    "[dependencies]",
                    "[dependencies]\ndpdk-sys = { path = \"../../dpdk-sys\" }",
                )
            },
            "depends on dpdk-sys",
        ),
        (
            "the tools depending on an async runtime",
            "crates/tools/Cargo.toml",
            |s| s.replace("[dependencies]", "[dependencies]\ntokio = \"1\""),
            "depends on tokio",
        ),
        (
            "the tools depending on the daemon",
            "crates/tools/Cargo.toml",
            |s| {
                s.replace(
                    "[dependencies]",
                    "[dependencies]\ndirigo = { path = \"../..\" }",
                )
            },
            "depends on dirigo (allowed",
        ),
        (
            "the configuration importing from the daemon",
            "crates/config/src/names.rs",
            |s| s + "\n#[allow(unused_imports)]\nuse dirigo::pmd::port::PortStats;\n",
            "names dirigo::",
        ),
        (
            "a header sliced at a numeric offset in classify",
            "crates/core/src/net/classify/mod.rs",
            |s| s + "\n/// planted\npub fn ttl_of(frame: &[u8]) -> u8 {\n    frame[22]\n}\n",
            "header sliced at a numeric offset",
        ),
        (
            "a sibling importing what its folder's hub re-exports",
            "crates/core/src/lb/balancer/icmp.rs",
            |s| s.replace("use super::machine::Balancer;", "use super::Balancer;"),
            "imports super::Balancer from its folder's hub",
        ),
        (
            "a sibling importing its folder's hub whole",
            "crates/core/src/lb/balancer/icmp.rs",
            |s| s + "\n#[allow(unused_imports)]\nuse super::*;\n",
            "imports super::* from its folder's hub",
        ),
        (
            "a file importing an item its folder's hub defines, by its crate path",
            "crates/config/src/keepalived/parse.rs",
            |s| s + "\n#[allow(unused_imports)]\nuse crate::keepalived::Converted;\n",
            "imports crate::keepalived::Converted from its folder's hub",
        ),
    ];
    for (what, file, plant, says) in plants {
        let t = copy_tree();
        edit(t.path(), file, plant);
        let (ok, text) = check(t.path());
        assert!(!ok, "{what}: the check passed:\n{text}");
        assert!(
            text.contains(says),
            "{what}: the check did not say {says:?}:\n{text}"
        );
    }
}
