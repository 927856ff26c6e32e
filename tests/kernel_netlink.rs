//! `dirigo::kernel` against the real kernel (root): a named namespace made
//! as `ip netns add` makes it, a veth end configured over netlink (MAC, MTU,
//! namespace, up, IPv4 and IPv6 addresses), each step checked both by what the kernel
//! reports to `Rtnl` and by what `ip` prints. Only the test runs `ip`, to
//! make the veth pair and to look.

mod common;

use common::{root, sh};
use dirigo::kernel::link::{locally_administered, Addr6, Rtnl};
use dirigo::kernel::netns::Netns;
use dirigo::kernel::KernelError;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::unix::fs::MetadataExt;
use std::process::Command;

/// Run `cmd` and insist that it succeeds; its output.
fn ok(cmd: &str) -> String {
    let (good, out) = sh(cmd);
    assert!(good, "`{cmd}` failed:\n{out}");
    out
}

/// Removes the veth pair and the namespace however the test ends.
struct Cleanup {
    ns: String,
    veth: [String; 2],
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for v in &self.veth {
            let _ = sh(&format!("ip link del {v} 2>/dev/null"));
            let _ = sh(&format!("ip -n {} link del {v} 2>/dev/null", self.ns));
        }
        let _ = Netns::remove(&self.ns);
    }
}

/// The inode of a namespace (what tells two namespaces apart).
fn ns_inode(ns: &Netns) -> u64 {
    let fd = ns.fd().try_clone_to_owned().unwrap();
    std::fs::File::from(fd).metadata().unwrap().ino()
}

#[test]
fn netns_veth_mac_mtu_up_addresses() {
    if !root("kernel_netlink") {
        return;
    }
    let pid = std::process::id();
    let name = format!("dgk-{pid}");
    let (inner, outer) = (format!("dgka{pid}"), format!("dgkb{pid}"));
    let _cleanup = Cleanup {
        ns: name.clone(),
        veth: [inner.clone(), outer.clone()],
    };

    // The namespace: created, then opened as it is.
    let ns = Netns::ensure(&name).unwrap();
    assert_eq!(ns.name(), name);
    assert_eq!(
        ns.path().display().to_string(),
        format!("/run/netns/{name}")
    );
    let again = Netns::ensure(&name).unwrap();
    assert_eq!(
        ns_inode(&ns),
        ns_inode(&again),
        "the second ensure opens the same namespace"
    );
    let ours = std::fs::metadata("/proc/self/ns/net").unwrap().ino();
    assert_ne!(ns_inode(&ns), ours, "a new namespace, not ours");
    assert_eq!(ns_inode(&Netns::open(&name).unwrap()), ns_inode(&ns));
    assert!(ok("ip netns list")
        .lines()
        .any(|l| l.split_whitespace().next() == Some(&name)));
    // `ip netns exec` enters it: a fresh namespace has only lo.
    let links = ok(&format!("ip netns exec {name} ip -br link"));
    assert_eq!(links.lines().count(), 1, "{links}");
    assert!(links.starts_with("lo "), "{links}");

    // A veth pair in our namespace; one end is configured over netlink.
    ok(&format!("ip link add {inner} type veth peer name {outer}"));
    let mut rtnl = Rtnl::open().unwrap();
    let index = rtnl.index_of(&inner).unwrap().expect("the veth end exists");
    assert_eq!(rtnl.index_of("dgk-none0").unwrap(), None);
    let before = rtnl.link_info(index).unwrap();
    assert_eq!(before.name, inner);
    let mac = locally_administered(before.mac.expect("a veth has a MAC"));
    rtnl.set_mac(index, mac).unwrap();
    rtnl.set_mtu(index, 1400).unwrap();
    let after = rtnl.link_info(index).unwrap();
    assert_eq!((after.mac, after.mtu, after.up), (Some(mac), 1400, false));
    let mac_text = mac.map(|b| format!("{b:02x}")).join(":");
    let shown = ok(&format!("ip link show {inner}"));
    assert!(
        shown.contains(&mac_text) && shown.contains("mtu 1400"),
        "{shown}"
    );

    // Into the namespace: gone from ours, found there by name.
    rtnl.set_netns(index, &ns).unwrap();
    assert_eq!(rtnl.index_of(&inner).unwrap(), None);
    let (inside, info, addrs) = ns
        .run(|| -> Result<_, KernelError> {
            let mut r = Rtnl::open()?;
            let i = r.index_of(&inner)?.expect("moved into the namespace");
            r.set_up(i, true)?;
            r.add_addr(i, Ipv4Addr::new(10, 201, 0, 1), 24)?;
            r.add_addr(i, Ipv4Addr::new(10, 201, 0, 1), 24)?; // already there: fine
            Ok((i, r.link_info(i)?, r.addrs(i)?))
        })
        .unwrap()
        .unwrap();
    assert_eq!(info.name, inner);
    assert_eq!((info.mac, info.mtu, info.up), (Some(mac), 1400, true));
    assert!(!info.lower_up, "the peer is down: no carrier");
    assert_eq!(addrs, vec![(Ipv4Addr::new(10, 201, 0, 1), 24)]);
    let br = ok(&format!("ip -n {name} -br addr show {inner}"));
    assert!(br.starts_with(&format!("{inner}@")), "{br}");
    assert!(br.contains("10.201.0.1/24"), "{br}");
    let full = ok(&format!("ip -n {name} addr show {inner}"));
    assert!(
        full.contains("inet 10.201.0.1/24 brd 10.201.0.255 scope global"),
        "{full}"
    );
    let link = ok(&format!("ip -n {name} link show {inner}"));
    assert!(
        link.contains(",UP") && link.contains("mtu 1400") && link.contains(&mac_text),
        "{link}"
    );

    // The same namespace from this thread, through a socket opened there.
    let mut there = Rtnl::open_in(&ns).unwrap();
    assert_eq!(there.index_of(&inner).unwrap(), Some(inside));
    there
        .add_addr(inside, Ipv4Addr::new(10, 202, 0, 1), 32)
        .unwrap();
    assert_eq!(
        there.addrs(inside).unwrap(),
        vec![
            (Ipv4Addr::new(10, 201, 0, 1), 24),
            (Ipv4Addr::new(10, 202, 0, 1), 32)
        ]
    );
    there
        .del_addr(inside, Ipv4Addr::new(10, 201, 0, 1), 24)
        .unwrap();
    assert_eq!(
        there.addrs(inside).unwrap(),
        vec![(Ipv4Addr::new(10, 202, 0, 1), 32)]
    );
    let br = ok(&format!("ip -n {name} -br addr show {inner}"));
    assert!(
        !br.contains("10.201.0.1") && br.contains("10.202.0.1/32"),
        "{br}"
    );
    let e = there
        .del_addr(inside, Ipv4Addr::new(10, 201, 0, 1), 24)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Cannot assign requested address"), "{e}");
    assert!(
        e.contains(&format!("interface '{inner}' (index {inside})")),
        "{e}"
    );
    eprintln!("removing an absent address: {e}");

    // IPv6: added `nodad` (no duplicate address detection: dirigo answers
    // it on the wire), listed by addrs6, removed, and refused twice.
    let g6: Ipv6Addr = "2001:db8:201::1".parse().unwrap();
    there.add_addr(inside, g6, 64).unwrap();
    there.add_addr(inside, g6, 64).unwrap(); // already there: fine
    let a6 = there.addrs6(inside).unwrap();
    assert!(
        a6.contains(&Addr6 {
            addr: g6,
            prefix_len: 64,
            nodad: true
        }),
        "{a6:?}"
    );
    assert_eq!(
        there.addrs(inside).unwrap(),
        vec![(Ipv4Addr::new(10, 202, 0, 1), 32)],
        "addrs lists IPv4 only"
    );
    let shown = ok(&format!("ip -n {name} -6 addr show {inner}"));
    assert!(
        shown.contains("inet6 2001:db8:201::1/64 scope global nodad"),
        "{shown}"
    );
    assert!(!shown.contains("tentative"), "{shown}");
    there.del_addr(inside, g6, 64).unwrap();
    assert!(there.addrs6(inside).unwrap().iter().all(|a| a.addr != g6));
    let e = there.del_addr(inside, g6, 64).unwrap_err().to_string();
    assert!(e.contains("2001:db8:201::1/64"), "{e}");

    // Refusals read as one line naming the link and the errno's text.
    let e = there.set_mtu(70_000, 1500).unwrap_err();
    assert_eq!(e.errno(), Some(libc::ENODEV));
    let e = e.to_string();
    assert!(e.contains("No such device") && e.contains("70000"), "{e}");
    assert_eq!(e.lines().count(), 1);
    eprintln!("unknown link: {e}");
    let e = there.set_mtu(inside, 70_000).unwrap_err().to_string();
    assert!(e.contains(&inner) && e.contains("Invalid argument"), "{e}");
    eprintln!("MTU too large: {e}");
    let e = rtnl.index_of("a/b").unwrap_err().to_string();
    assert_eq!(
        e,
        "interface 'a/b': invalid name: an interface name cannot contain '/'"
    );
    let e = Netns::ensure("a/b").unwrap_err().to_string();
    assert!(e.contains("invalid name"), "{e}");

    there.set_up(inside, false).unwrap();
    assert!(!there.link_info(inside).unwrap().up);

    // Removal: the name is gone for `ip` and for us.
    drop((ns, again));
    Netns::remove(&name).unwrap();
    assert!(!ok("ip netns list").contains(&name));
    let e = Netns::open(&name).unwrap_err().to_string();
    assert!(e.contains("No such file or directory"), "{e}");
    let e = Netns::remove(&name).unwrap_err().to_string();
    assert!(e.contains("cannot remove"), "{e}");
}

/// `Netns::ensure` where `/run/netns` does not exist yet and nothing is
/// mounted on it: in a private mount namespace with a fresh tmpfs on
/// `/run`, the helper below must find `/run/netns` made, made a mount point
/// and shared, and `ip netns exec` working. All of it vanishes with that
/// mount namespace.
#[test]
fn netns_dir_is_made_a_shared_mount_point() {
    if !root("kernel_netlink (private mount namespace)") {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(
            "mount -t tmpfs dgk-run /run && exec \"$0\" --exact \
             in_private_mount_namespace --include-ignored --nocapture",
        )
        .arg(&exe)
        .env("DGK_PRIVATE_MOUNT_NS", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "helper failed:\n{text}");
    assert!(text.contains("1 passed"), "the helper did not run:\n{text}");
}

/// The mount points of this process: (mount point, optional fields).
fn mounts() -> Vec<(String, String)> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let optional = f[6..].iter().take_while(|x| **x != "-").copied();
            (f[4].to_string(), optional.collect::<Vec<_>>().join(" "))
        })
        .collect()
}

#[test]
#[ignore = "run by netns_dir_is_made_a_shared_mount_point inside a private mount namespace"]
fn in_private_mount_namespace() {
    if std::env::var("DGK_PRIVATE_MOUNT_NS").as_deref() != Ok("1") {
        return;
    }
    assert!(!std::path::Path::new("/run/netns").exists(), "a fresh /run");
    let ns = Netns::ensure("dgk-private").unwrap();
    let m = mounts();
    // The last mount on a path is the visible one (the copied mount tree
    // also lists the real /run/netns, under the tmpfs).
    let dir = m.iter().rfind(|(p, _)| p == "/run/netns");
    let dir = dir.expect("/run/netns is a mount point");
    assert!(dir.1.contains("shared:"), "/run/netns is shared: {m:?}");
    assert!(
        m.iter().any(|(p, _)| p == "/run/netns/dgk-private"),
        "{m:?}"
    );
    // A second namespace: /run/netns is already a shared mount point.
    let other = Netns::ensure("dgk-private2").unwrap();
    assert_ne!(ns_inode(&ns), ns_inode(&other));
    assert_eq!(
        m.len() + 1,
        mounts().len(),
        "only the namespace's own mount is added"
    );
    let links = ok("ip netns exec dgk-private ip -br link");
    assert!(links.starts_with("lo "), "{links}");
    Netns::remove("dgk-private").unwrap();
    Netns::remove("dgk-private2").unwrap();
}

/// A TAP interface held open by a child process, as DPDK's net_tap holds
/// dirigo's (not persistent: it goes when its file descriptor closes).
fn tap_held_by_child(name: &str) -> std::process::Child {
    let script = format!(
        "import fcntl, os, struct, sys, time\n\
         fd = os.open('/dev/net/tun', os.O_RDWR)\n\
         fcntl.ioctl(fd, 0x400454ca, struct.pack('16sH', b'{name}', 0x0002 | 0x1000))\n\
         print('ready', flush=True)\n\
         time.sleep(120)\n"
    );
    let mut c = Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(c.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready", "the TAP helper did not start");
    c
}

/// Device routes in a table of our own with a protocol number of our own
/// (how dirigo announces a VIP, IPv4 /32 and IPv6 /128 alike): added (twice
/// is fine), listed by table and protocol only, seen by `ip route` and `ip
/// -6 route`, removed (an absent one is `false`);
/// and gone with their device when the process holding the TAP dies by
/// SIGKILL — what makes a crashed dirigo withdraw its VIPs.
#[test]
fn device_routes_in_a_table_of_our_own() {
    use dirigo::kernel::route::DevRoute;
    if !root("kernel_netlink (routes)") {
        return;
    }
    let pid = std::process::id();
    let name = format!("dgr-{pid}");
    let tap = format!("dgrt{pid}");
    let _cleanup = Cleanup {
        ns: name.clone(),
        veth: [tap.clone(), format!("dgrx{pid}")],
    };
    let ns = Netns::ensure(&name).unwrap();
    let mut child = tap_held_by_child(&tap);
    let mut root_nl = Rtnl::open().unwrap();
    let idx = root_nl.index_of(&tap).unwrap().expect("the TAP exists");
    root_nl.set_netns(idx, &ns).unwrap();
    let mut nl = Rtnl::open_in(&ns).unwrap();
    let idx = nl.index_of(&tap).unwrap().expect("moved");
    nl.set_up(idx, true).unwrap();
    nl.add_addr(idx, Ipv4Addr::new(10, 203, 0, 1), 24).unwrap();
    let vip = |last| DevRoute {
        dst: Ipv4Addr::new(10, 204, 0, last).into(),
        prefix_len: 32,
        oif: idx,
        table: 100,
        protocol: 201,
    };
    let vip6 = |last| DevRoute {
        dst: std::net::Ipv6Addr::new(0xfd00, 0x204, 0, 0, 0, 0, 0, last).into(),
        prefix_len: 128,
        ..vip(1)
    };
    nl.add_route(&vip(1)).unwrap();
    nl.add_route(&vip(1)).unwrap(); // again: replaced, not an error
    nl.add_route(&vip(2)).unwrap();
    nl.add_route(&vip6(1)).unwrap();
    nl.add_route(&vip6(1)).unwrap();
    // a table past 255 (RTA_TABLE only), and another protocol in ours
    nl.add_route(&DevRoute {
        table: 1000,
        ..vip(3)
    })
    .unwrap();
    ok(&format!(
        "ip -n {name} route add 10.204.0.9/32 dev {tap} table 100 proto static"
    ));
    let ours = nl.routes(100, 201).unwrap();
    assert_eq!(ours, vec![vip(1), vip(2), vip6(1)], "IPv4, then IPv6");
    assert_eq!(
        nl.routes(1000, 201).unwrap(),
        vec![DevRoute {
            table: 1000,
            ..vip(3)
        }]
    );
    let shown = ok(&format!("ip -n {name} route show table 100 proto 201"));
    assert!(
        shown.contains(&format!("10.204.0.1 dev {tap} scope link"))
            && shown.contains("10.204.0.2")
            && !shown.contains("10.204.0.9"),
        "{shown}"
    );
    let shown6 = ok(&format!("ip -n {name} -6 route show table 100 proto 201"));
    assert!(
        shown6.contains(&format!("fd00:204::1 dev {tap}")),
        "{shown6}"
    );
    assert!(nl.del_route(&vip(2)).unwrap());
    assert!(!nl.del_route(&vip(2)).unwrap(), "already gone");
    assert_eq!(nl.routes(100, 201).unwrap(), vec![vip(1), vip6(1)]);
    // a route through an interface that does not exist: one line
    let e = nl
        .add_route(&DevRoute {
            oif: 70_000,
            ..vip(5)
        })
        .unwrap_err();
    assert_eq!(e.errno(), Some(libc::ENODEV), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("10.204.0.5/32") && e.contains("table 100"),
        "{e}"
    );
    eprintln!("route through no interface: {e}");

    // SIGKILL: the TAP goes, and its routes with it
    child.kill().unwrap();
    child.wait().unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while nl.index_of(&tap).unwrap().is_some() {
        assert!(
            std::time::Instant::now() < end,
            "the TAP outlived its process"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(nl.routes(100, 201).unwrap(), vec![]);
    assert_eq!(nl.routes(1000, 201).unwrap(), vec![]);
    let shown = ok(&format!("ip -n {name} route show table 100"));
    assert!(shown.trim().is_empty(), "{shown}");
    let shown6 = ok(&format!("ip -n {name} -6 route show table 100"));
    assert!(shown6.trim().is_empty(), "{shown6}");
    drop(nl);
    drop(ns);
}
