//! dirigoadm and dirigoctl as built: they link neither DPDK nor an async
//! runtime (they speak only the control protocol), and say which commit
//! they are. (Building them here also puts them beside `dirigo` in the
//! target directory, where the root package's tests run them.)

use std::process::Command;

const TOOLS: [&str; 2] = [
    env!("CARGO_BIN_EXE_dirigoadm"),
    env!("CARGO_BIN_EXE_dirigoctl"),
];

#[test]
fn the_tools_link_no_dpdk() {
    for exe in TOOLS {
        let out = Command::new("ldd").arg(exe).output().expect("run ldd");
        let libs = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "ldd {exe}: {libs}");
        assert!(libs.contains("libc.so"), "ldd {exe}: {libs}");
        for lib in ["librte_", "libdpdk"] {
            assert!(!libs.contains(lib), "{exe} links {lib}:\n{libs}");
        }
    }
}

#[test]
fn dirigoctl_names_its_commit_and_no_dpdk() {
    let out = Command::new(TOOLS[1])
        .arg("--version")
        .output()
        .expect("run dirigoctl --version");
    let v = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{v}");
    let want = format!(
        "dirigoctl {} (commit {})",
        dirigo_proto::version::VERSION,
        dirigo_proto::version::COMMIT
    );
    assert_eq!(v.trim(), want);
}

#[test]
fn dirigoadm_answers_as_ipvsadm() {
    let out = Command::new(TOOLS[0])
        .arg("-v")
        .output()
        .expect("run dirigoadm -v");
    let v = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{v}");
    assert!(v.starts_with("ipvsadm v1.31 (dirigoadm "), "{v}");
    assert!(
        v.contains(&format!("commit {}", dirigo_proto::version::COMMIT)),
        "{v}"
    );
}
