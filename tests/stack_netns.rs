//! dirigo as a host on real networks: a kernel peer in a network namespace
//! pings dirigo's port address and a VIP, learns dirigo's MAC by ARP, and
//! dirigo resolves the peer's MAC by itself (it must, to forward to it).

mod common;

use common::sh;

use std::process::Command;
use std::time::{Duration, Instant};

struct Netns(&'static [&'static str]);
impl Drop for Netns {
    fn drop(&mut self) {
        for n in self.0 {
            let _ = sh(&format!("ip netns del {n}"));
        }
    }
}

fn wait_link(name: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sh(&format!("ip link show {name}")).0 {
        assert!(Instant::now() < deadline, "tap {name} did not appear");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ping_arp_and_neighbor_resolution_with_kernel_peers() {
    if !common::privileged("stack_netns") {
        return;
    }
    let dir = common::scratch("stack-netns");
    let sock = dir.join("ctl.sock").display().to_string();
    let _ns = Netns(&["dgs-c", "dgs-s"]);
    for n in ["dgs-c", "dgs-s"] {
        let _ = sh(&format!("ip netns del {n}"));
        assert!(sh(&format!("ip netns add {n}")).0);
    }
    let cfg = common::DaemonConfig::new("dg-stack", &sock)
        .vdev("net_tap0,iface=dgs-wan")
        .vdev("net_tap1,iface=dgs-lan")
        .tables(4096, 4095)
        .port("wan", "net_tap0", "10.77.0.1/24")
        .port("lan", "net_tap1", "10.76.0.1/24")
        .service("udp", "10.77.0.100:7", "rr", &[("10.76.0.2:7", "nat")]);
    let d = common::Daemon::start(&dir, &cfg.toml());
    wait_link("dgs-wan");
    wait_link("dgs-lan");
    // net_tap gives the kernel side the PMD's MAC: give it its own.
    for (tap, ns, ip, mac) in [
        ("dgs-wan", "dgs-c", "10.77.0.2/24", "02:00:4d:00:00:02"),
        ("dgs-lan", "dgs-s", "10.76.0.2/24", "02:00:4c:00:00:02"),
    ] {
        let (ok, out) = sh(&format!(
            "ip link set {tap} netns {ns} && ip -n {ns} link set {tap} address {mac} && \
             ip -n {ns} addr add {ip} dev {tap} && ip -n {ns} link set {tap} up && \
             ip -n {ns} link set lo up && \
             ip netns exec {ns} sysctl -qw net.ipv6.conf.all.disable_ipv6=1"
        ));
        assert!(ok, "{out}");
    }
    assert!(sh("ip -n dgs-s route add default via 10.76.0.1").0);

    // ping dirigo's port address and the VIP
    let (ok, out) = sh("ip netns exec dgs-c ping -c 3 -i 0.2 -W 2 10.77.0.1");
    assert!(ok, "ping port address: {out}");
    let (ok, out) = sh("ip netns exec dgs-c ping -c 3 -i 0.2 -W 2 10.77.0.100");
    assert!(ok, "ping VIP: {out}");
    // the peer learned dirigo's MAC for both
    let ports = Command::new(crate::common::DIRIGOCTL)
        .args(["--socket", &sock, "ports", "--json"])
        .output()
        .unwrap();
    let pj: serde_json::Value = serde_json::from_slice(&ports.stdout).unwrap();
    let wan_mac = pj["ok"]["data"][0]["mac"]
        .as_str()
        .or_else(|| pj["data"][0]["mac"].as_str())
        .or_else(|| pj[0]["mac"].as_str())
        .unwrap_or_else(|| panic!("no mac in {pj}"))
        .to_string();
    let (_, neigh) = sh("ip -n dgs-c neigh show dev dgs-wan");
    for ip in ["10.77.0.1 ", "10.77.0.100 "] {
        let line = neigh
            .lines()
            .find(|l| l.starts_with(ip))
            .unwrap_or_else(|| panic!("{ip} not in {neigh}"));
        assert!(line.contains(&wan_mac), "{line} vs {wan_mac}");
    }
    // dirigo resolves the real server's MAC by itself: a UDP request to the
    // VIP (NAT) needs it, and the answer comes back through dirigo.
    let (ok, out) = sh(
        "ip netns exec dgs-s timeout 10 socat -T 5 UDP4-RECVFROM:7,fork EXEC:cat >/dev/null 2>&1 & \
         sleep 0.5; for i in 1 2 3; do \
           r=$(echo hello | ip netns exec dgs-c timeout 2 socat -T 1 - UDP4:10.77.0.100:7); \
           [ \"$r\" = hello ] && echo ok$i && break; done",
    );
    assert!(
        ok && out.contains("ok1"),
        "UDP through NAT, first try: {out}"
    );
    let n = Command::new(crate::common::DIRIGOCTL)
        .args(["--socket", &sock, "neigh", "list"])
        .output()
        .unwrap();
    let n = String::from_utf8_lossy(&n.stdout);
    let line = n
        .lines()
        .find(|l| l.starts_with("10.76.0.2 "))
        .unwrap_or_else(|| panic!("RS not resolved: {n}"));
    assert!(
        line.contains("02:00:4c:00:00:02") && line.contains("reachable"),
        "{line}"
    );
    let out = d.stop();
    assert!(out.contains("echo_replied=6"), "{out}");
    // The real server was resolved when its service was configured, before
    // any request: the first one went straight through, not via the hold
    // area (whose hold-and-release is unit-tested in dataplane::hold).
    assert!(!out.contains(" held="), "{out}");
    assert!(!out.contains("held_expired"), "{out}");
}
