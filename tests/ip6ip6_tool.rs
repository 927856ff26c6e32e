//! The lab's IPv6 TUN-mode tools without dirigo (issue 18): the real
//! server's userspace IPv6-in-IPv6 decapsulator (`ip6ip6_decap.py`) and its
//! test sender / stand-in director (`ip6ip6_encap.py`), proved in two network
//! namespaces by `tests/support/ip6ip6_selftest.sh`: encapsulated UDP and TCP
//! SYNs to the VIP are answered from the VIP straight to the client, a kernel
//! TCP client talks to the VIP through the stand-in, and without the
//! decapsulator the kernel answers next header 41 with ICMPv6 parameter
//! problem. No DPDK: a few seconds.
//!
//! Needs root, IPv6, /dev/net/tun, python3 and `ip` (skips outside CI, fails
//! in CI).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn ip6ip6_decap_and_encap_in_namespaces() {
    const WHAT: &str = "ip6ip6_tool";
    if !common::root(WHAT) {
        return;
    }
    let mut why = Vec::new();
    if !Path::new("/proc/sys/net/ipv6").exists() {
        why.push("the kernel has no IPv6");
    }
    if !Path::new("/dev/net/tun").exists() {
        why.push("no /dev/net/tun");
    }
    if !have("python3") {
        why.push("no python3");
    }
    if !have("ip") {
        why.push("no `ip` command (iproute2)");
    }
    if !common::may_run(WHAT, &why) {
        return;
    }
    let script = common::support("ip6ip6_selftest.sh");
    // A fixed prefix: the script first removes namespaces left over by an
    // aborted run of this test. The script bounds itself (watchdog).
    let o = Command::new("bash")
        .arg(&script)
        .env("IP6IP6_PREFIX", "dgi6")
        .env("SELFTEST_TIMEOUT", "60")
        .stdin(Stdio::null())
        .output()
        .expect("run ip6ip6_selftest.sh");
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{script} failed: {}", common::text(&o));
    assert!(
        out.contains("ip6ip6_selftest: ") && out.contains(" passed, 0 failed"),
        "{out}"
    );
}
