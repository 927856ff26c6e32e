//! The connection handoff in the lab (issue 53): long byte-exact
//! transfers and UDP flows across a SIGTERM restart of dirigo on the same
//! configuration, and a handoff file dirigo must refuse.

use super::checks::{finish_download, finish_upload, spawn_download, spawn_upload};
use super::{Lab, VIP};
use crate::common::support;
use std::time::{Duration, Instant};

/// Where the lab's dirigo keeps its handoff file.
pub fn handoff_path(lab: &Lab) -> String {
    lab.dir.join("handoff").display().to_string()
}

/// `[control] handoff_file` in the scratch directory of lab `name`, for
/// [`Lab::start_with_config`]'s closure.
pub fn with_handoff(c: crate::common::DaemonConfig, name: &str) -> crate::common::DaemonConfig {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    c.control(&format!("handoff_file = \"{}/handoff\"", dir.display()))
}

/// [`with_handoff`] and the crash checkpoint every second.
pub fn with_checkpoint(c: crate::common::DaemonConfig, name: &str) -> crate::common::DaemonConfig {
    with_handoff(c, name).control("connection_checkpoint_s = 1")
}

/// UDP flow from client port `sport`: the real server that answered.
fn udp_flow(lab: &Lab, sport: u16) -> String {
    let out = lab.client(&[
        "python3",
        &support("udp_flow.py"),
        VIP,
        "5353",
        "--sport",
        &sport.to_string(),
    ]);
    out.split(':').next().unwrap_or_default().trim().to_string()
}

/// `dirigoctl handoff`'s counter `name`.
fn counter(h: &serde_json::Value, name: &str) -> u64 {
    h["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .find(|c| c["name"] == name)
        .and_then(|c| c["value"].as_u64())
        .unwrap_or_else(|| panic!("no counter {name} in {h}"))
}

/// Start two downloads and an upload slow enough to span a restart, and
/// three UDP flows; SIGTERM dirigo and start it again; every transfer
/// completes byte-exact, every UDP flow keeps its real server (asked in
/// the reverse order, so a fresh round-robin would move them), and
/// `dirigoctl handoff` shows the entries installed, none refused.
pub fn restart_keeps_connections(lab: &mut Lab, tag: &str) {
    const SIZE: usize = 1 << 20;
    let flows: Vec<(u16, String)> = (40771..40774).map(|p| (p, udp_flow(lab, p))).collect();
    let rate = Some("300k");
    let d1 = spawn_download(lab, SIZE, &format!("{tag}-h1"), rate);
    let d2 = spawn_download(lab, SIZE, &format!("{tag}-h2"), rate);
    let (up, want) = spawn_upload(lab, SIZE, 53, &format!("{tag}-hu"), rate);
    // every transfer under way before the restart
    std::thread::sleep(Duration::from_millis(1200));
    let t0 = Instant::now();
    let old = lab.restart(|_| ());
    assert!(old.contains("handoff: "), "no handoff written:\n{old}");
    let h = lab.ctl_json(&["handoff"]);
    eprintln!(
        "{tag}: restarted in {:.1} s; handoff {h}",
        t0.elapsed().as_secs_f64()
    );
    let installed = counter(&h, "handoff_installed");
    assert!(installed >= 6, "{tag}: too few installed: {h}");
    assert_eq!(counter(&h, "handoff_written"), installed, "{tag}: {h}");
    assert!(h["gap_ms"].as_u64().is_some(), "{tag}: no gap: {h}");
    for (p, rs) in flows.iter().rev() {
        assert_eq!(&udp_flow(lab, *p), rs, "{tag}: UDP flow from port {p}");
    }
    let a = finish_download(lab, d1, SIZE, &format!("{tag}-h1"));
    let b = finish_download(lab, d2, SIZE, &format!("{tag}-h2"));
    let c = finish_upload(up, &want, SIZE, &format!("{tag}-hu"));
    eprintln!(
        "{tag}: across the restart: downloads via {a} and {b}, upload via {c}, UDP flows {flows:?}: intact"
    );
}

/// The crash checkpoint ([`with_checkpoint`]): transfers and UDP flows
/// under way, a checkpoint written after they started, then SIGKILL (no
/// handoff) and a start: the new dirigo installs the checkpoint, every
/// transfer completes byte-exact and every UDP flow keeps its server.
pub fn crash_keeps_checkpointed(lab: &mut Lab, tag: &str) {
    const SIZE: usize = 1 << 20;
    let written = |lab: &Lab| {
        let h = lab.ctl_json(&["handoff"]);
        h["checkpoint"]["written"]
            .as_u64()
            .unwrap_or_else(|| panic!("no checkpoint in {h}"))
    };
    let flows: Vec<(u16, String)> = (40781..40784).map(|p| (p, udp_flow(lab, p))).collect();
    let rate = Some("300k");
    let d1 = spawn_download(lab, SIZE, &format!("{tag}-c1"), rate);
    let (up, want) = spawn_upload(lab, SIZE, 57, &format!("{tag}-cu"), rate);
    std::thread::sleep(Duration::from_millis(500));
    // two checkpoints more: the second began after every flow had started
    let w0 = written(lab);
    lab.wait_for("two checkpoints", 10, || written(lab) >= w0 + 2);
    let h = lab.ctl_json(&["handoff"]);
    eprintln!("{tag}: before the SIGKILL: {}", h["checkpoint"]);
    let old = lab.crash_restart();
    assert!(!old.contains("panicked"), "{old}");
    let h = lab.ctl_json(&["handoff"]);
    eprintln!("{tag}: after the SIGKILL and a start: handoff {h}");
    let installed = counter(&h, "handoff_installed");
    assert!(
        installed >= 5,
        "{tag}: too few installed from the checkpoint: {h}"
    );
    assert_eq!(h["outcome"], "installed", "{tag}: {h}");
    for (p, rs) in flows.iter().rev() {
        assert_eq!(&udp_flow(lab, *p), rs, "{tag}: UDP flow from port {p}");
    }
    let a = finish_download(lab, d1, SIZE, &format!("{tag}-c1"));
    let b = finish_upload(up, &want, SIZE, &format!("{tag}-cu"));
    eprintln!("{tag}: across the SIGKILL: download via {a}, upload via {b}, UDP flows: intact");
}

/// A handoff file of another format version: dirigo refuses it whole,
/// counts it, removes it and serves.
pub fn bumped_version_is_refused(lab: &mut Lab) {
    let path = handoff_path(lab);
    lab.restart(|_| {
        let mut f = std::fs::read(&path).expect("the stopped dirigo's handoff file");
        f[8] = f[8].wrapping_add(1); // the version's low byte
        std::fs::write(&path, f).unwrap();
    });
    let h = lab.ctl_json(&["handoff"]);
    assert_eq!(counter(&h, "handoff_file_version"), 1, "{h}");
    assert_eq!(counter(&h, "handoff_installed"), 0, "{h}");
    assert!(
        h["outcome"].as_str().unwrap_or("").starts_with("refused"),
        "{h}"
    );
    assert!(
        !std::path::Path::new(&path).exists(),
        "the file is used once"
    );
    assert!(
        lab.daemon_log().contains("refused whole"),
        "no log line:\n{}",
        lab.daemon_log()
    );
    // and dirigo serves
    let d = spawn_download(lab, 1 << 16, "after-refusal", None);
    finish_download(lab, d, 1 << 16, "after-refusal");
}

/// A handoff file whose checksum does not match is refused whole, counted
/// and removed; then entries naming a real server removed from the
/// configuration meanwhile are refused alone (`handoff_no_dest`) while the
/// others are installed. dirigo serves after each; the configuration is
/// restored at the end.
pub fn bad_checksum_and_removed_server_are_refused(lab: &mut Lab, method: &str) {
    let path = handoff_path(lab);
    lab.restart(|_| {
        let mut f = std::fs::read(&path).expect("the stopped dirigo's handoff file");
        if let Some(b) = f.last_mut() {
            *b ^= 0x40;
        }
        std::fs::write(&path, f).unwrap();
    });
    let h = lab.ctl_json(&["handoff"]);
    assert_eq!(counter(&h, "handoff_file_checksum"), 1, "{h}");
    assert_eq!(counter(&h, "handoff_installed"), 0, "{h}");
    let d = spawn_download(lab, 1 << 16, "after-checksum", None);
    finish_download(lab, d, 1 << 16, "after-checksum");

    // UDP flows on every server; the third server leaves the UDP service
    let flows: Vec<(u16, String)> = (40791..40797).map(|p| (p, udp_flow(lab, p))).collect();
    assert!(flows.iter().any(|f| f.1 == "rs3"), "{flows:?}");
    let cfg_path = lab.dir.join("dirigo.toml");
    let orig = std::fs::read_to_string(&cfg_path).unwrap();
    let rs3 = format!("[[service.real_server]]\naddress = \"10.98.0.13\"\nmethod = \"{method}\"\n");
    let at = orig
        .rfind(&rs3)
        .expect("the UDP service's third real server");
    let without = format!("{}{}", &orig[..at], &orig[at + rs3.len()..]);
    lab.restart(|_| std::fs::write(&cfg_path, &without).unwrap());
    let h = lab.ctl_json(&["handoff"]);
    let gone = flows.iter().filter(|f| f.1 == "rs3").count() as u64;
    assert!(counter(&h, "handoff_no_dest") >= gone, "{h}");
    assert!(counter(&h, "handoff_installed") >= 1, "{h}");
    assert!(
        h["outcome"].as_str().unwrap_or("").contains("refused"),
        "{h}"
    );
    for (p, rs) in &flows {
        let now = udp_flow(lab, *p);
        if rs == "rs3" {
            assert_ne!(now, "rs3", "flow from port {p}: a removed server");
        } else {
            assert_eq!(&now, rs, "flow from port {p}");
        }
    }
    eprintln!("handoff: a bad checksum refused whole; {gone} flow(s) of a removed server refused alone, the others kept");
    lab.restart(|_| std::fs::write(&cfg_path, &orig).unwrap());
}
