//! ipvsadm 1.31's output layouts, byte for byte (`print_title`,
//! `print_service_entry`, `print_largenum`, `print_conn`, `list_timeout`,
//! and the `-S` rule format). Addresses are always printed numerically.

use super::command::ListCmd;
use super::defaults::IPVS_VERSION;
use crate::view::{ConnInfo, DestInfo, ServiceInfo, ServiceList};
use dirigo_core::lb::group::member_text;
use dirigo_core::lb::sched::SchedFlags;
use dirigo_core::lb::spec::{Method, Proto, ServiceKey, ServiceSpec, Timeouts};
use std::fmt::Write;
use std::net::Ipv4Addr;

/// ipvsadm's `print_largenum`: 9 columns; K/M/G/T suffixes unless exact.
pub fn largenum(i: u64, exact: bool) -> String {
    if exact {
        let len = i.to_string().len();
        let w = if len <= 8 { 9 } else { len + 1 };
        return format!("{i:>w$}");
    }
    if i < 100_000_000 {
        format!("{i:>9}")
    } else if i < 1_000_000_000 {
        format!("{:>8}K", i / 1000)
    } else if i < 100_000_000_000 {
        format!("{:>8}M", i / 1_000_000)
    } else if i < 100_000_000_000_000 {
        format!("{:>8}G", i / 1_000_000_000)
    } else {
        format!("{:>8}T", i / 1_000_000_000_000)
    }
}

/// ipvsadm's title for the chosen listing format.
fn title(o: &ListCmd) -> String {
    const PROT: &str = "Prot LocalAddress:Port";
    const RS: &str = "  -> RemoteAddress:Port";
    if o.stats {
        format!(
            "{PROT:<33} {:>8} {:>8} {:>8} {:>8} {:>8}\n{RS}\n",
            "Conns", "InPkts", "OutPkts", "InBytes", "OutBytes"
        )
    } else if o.rate {
        format!(
            "{PROT:<33} {:>8} {:>8} {:>8} {:>8} {:>8}\n{RS}\n",
            "CPS", "InPPS", "OutPPS", "InBPS", "OutBPS"
        )
    } else if o.thresholds {
        format!(
            "{PROT:<33} {:<10} {:<10} {:<10} {:<10}\n{RS}\n",
            "Uthreshold", "Lthreshold", "ActiveConn", "InActConn"
        )
    } else if o.persist_conn {
        format!(
            "{PROT:<33} {:<9} {:<11} {:<10} {:<10}\n{RS}\n",
            "Weight", "PersistConn", "ActiveConn", "InActConn"
        )
    } else if o.tun_info {
        format!(
            "{PROT} Scheduler Flags\n{RS}           Forward TunnelInfo    Weight ActiveConn InActConn\n"
        )
    } else {
        format!("{PROT} Scheduler Flags\n{RS}           Forward Weight ActiveConn InActConn\n")
    }
}

fn sched_flags_str(spec: &ServiceSpec) -> Option<String> {
    let SchedFlags { fallback, port } = spec.flags;
    if !fallback && !port {
        return None;
    }
    let p = spec.sched.name();
    let mut v = Vec::new();
    if fallback {
        v.push(format!("{p}-fallback"));
    }
    if port {
        v.push(format!("{p}-port"));
    }
    Some(v.join(","))
}

/// ipvsadm's Flags column of a service, as `-L -n` prints it after the
/// scheduler: `(sh-fallback,sh-port)`, `persistent T`, `mask M`; empty
/// when none applies.
pub fn service_flags(spec: &ServiceSpec) -> String {
    let mut v = Vec::new();
    if let Some(f) = sched_flags_str(spec) {
        v.push(format!("({f})"));
    }
    if let Some(t) = spec.persistent {
        v.push(format!("persistent {t}"));
        if let Some(m) = mask_arg(spec) {
            v.push(format!("mask {m}"));
        }
    }
    if spec.ops {
        v.push("ops".into());
    }
    if spec.synproxy {
        v.push("synproxy".into());
    }
    if !spec.client_address.is_none() {
        v.push(format!("client-address {}", spec.client_address.name()));
    }
    v.join(" ")
}

/// The persistence mask as ipvsadm prints it (after `mask` or `-M`):
/// dotted for IPv4, a prefix length for IPv6; None at the default.
fn mask_arg(spec: &ServiceSpec) -> Option<String> {
    if spec.key.vip.is_ipv6() {
        (spec.prefix6 != 128).then(|| spec.prefix6.to_string())
    } else {
        (spec.netmask != Ipv4Addr::BROADCAST).then(|| spec.netmask.to_string())
    }
}

/// `addr:port` as ipvsadm writes it: `[addr]:port` for IPv6.
fn addr_port(a: std::net::IpAddr, port: u16) -> String {
    std::net::SocketAddr::new(a, port).to_string()
}

/// A service's name in `-L`: `TCP  192.0.2.1:80`, or ipvsadm's `FWM  1`
/// (`FWM  1 IPv6`) for an fwmark service.
fn service_name(k: &ServiceKey) -> String {
    if k.is_fwmark() {
        let v6 = if k.vip.is_ipv6() { " IPv6" } else { "" };
        format!("FWM  {}{v6}", k.fwmark)
    } else {
        format!("{}  {}", k.proto.upper(), addr_port(k.vip, k.port))
    }
}

/// A service as `-S` names it: `-t 192.0.2.1:80`, or `-f 1` (`-f 1 -6`).
pub fn service_rule(k: &ServiceKey) -> String {
    if k.is_fwmark() {
        let v6 = if k.vip.is_ipv6() { " -6" } else { "" };
        return format!("-f {}{v6}", k.fwmark);
    }
    let sw = match k.proto {
        Proto::Tcp => "-t",
        Proto::Udp => "-u",
    };
    format!("{sw} {}", addr_port(k.vip, k.port))
}

fn sorted_services<'a>(list: &'a ServiceList, o: &ListCmd) -> Vec<&'a ServiceInfo> {
    let mut v: Vec<&ServiceInfo> = list.services.iter().collect();
    if !o.nosort {
        // fwmark services after the others, by mark, as ipvsadm sorts
        v.sort_by_key(|s| (s.spec.key.fwmark, s.spec.key));
    }
    v
}

fn sorted_dests(s: &ServiceInfo, nosort: bool) -> Vec<&DestInfo> {
    let mut v: Vec<&DestInfo> = s.dests.iter().collect();
    if !nosort {
        v.sort_by_key(|d| d.spec.key);
    }
    v
}

/// A real server's port as listed: its own, or the service's when 0.
pub fn dest_port(svc: &ServiceInfo, d: &DestInfo) -> u16 {
    if d.spec.key.port == 0 {
        svc.spec.key.port
    } else {
        d.spec.key.port
    }
}

fn service_entry(out: &mut String, s: &ServiceInfo, o: &ListCmd) {
    let name = service_name(&s.spec.key);
    let ex = o.exact;
    if o.stats {
        let st = &s.stats;
        let _ = write!(out, "{name:<33}");
        for n in [st.conns, st.inpkts, st.outpkts, st.inbytes, st.outbytes] {
            out.push_str(&largenum(n, ex));
        }
    } else if o.rate {
        let r = &s.rate;
        let _ = write!(out, "{name:<33}");
        for n in [r.cps, r.inpps, r.outpps, r.inbps, r.outbps] {
            out.push_str(&largenum(n, ex));
        }
    } else {
        let _ = write!(out, "{name} {}", s.spec.sched.name());
        let flags = service_flags(&s.spec);
        if !flags.is_empty() {
            let _ = write!(out, " {flags}");
        }
    }
    out.push('\n');
    for d in sorted_dests(s, o.nosort) {
        let dname = addr_port(d.spec.key.addr, dest_port(s, d));
        if o.stats {
            let st = &d.stats;
            let _ = write!(out, "  -> {dname:<28}");
            for n in [st.conns, st.inpkts, st.outpkts, st.inbytes, st.outbytes] {
                out.push_str(&largenum(n, ex));
            }
            out.push('\n');
        } else if o.rate {
            let r = &d.rate;
            let _ = write!(
                out,
                "  -> {dname:<28} {:>8} {:>8} {:>8}",
                r.cps, r.inpps, r.outpps
            );
            out.push_str(&largenum(r.inbps, ex));
            out.push_str(&largenum(r.outbps, ex));
            out.push('\n');
        } else if o.thresholds {
            let _ = writeln!(
                out,
                "  -> {dname:<28} {:<10} {:<10} {:<10} {:<10}",
                d.spec.upper, d.spec.lower, d.active, d.inactive
            );
        } else if o.persist_conn {
            let _ = writeln!(
                out,
                "  -> {dname:<28} {:<9} {:<11} {:<10} {:<10}",
                d.spec.weight, d.persist, d.active, d.inactive
            );
        } else if o.tun_info {
            let info = match d.spec.method {
                Method::Tun => d.spec.tun.info(),
                _ => "n/a".to_string(),
            };
            let _ = writeln!(
                out,
                "  -> {dname:<28} {:<7} {:<13} {:<6} {:<10} {:<10}",
                d.spec.method.ipvsadm_name(),
                info,
                d.spec.weight,
                d.active,
                d.inactive
            );
        } else {
            let _ = writeln!(
                out,
                "  -> {dname:<28} {:<7} {:<6} {:<10} {:<10}",
                d.spec.method.ipvsadm_name(),
                d.spec.weight,
                d.active,
                d.inactive
            );
        }
    }
}

/// `-L` output. With `o.service` set (a single service) ipvsadm prints no
/// version line; `list` then holds just that service.
pub fn list(list: &ServiceList, o: &ListCmd) -> String {
    let mut out = String::new();
    if o.service.is_none() {
        let _ = writeln!(
            out,
            "IP Virtual Server version {IPVS_VERSION} (size={})",
            list.conn_tab_size
        );
    }
    out.push_str(&title(o));
    let shown = with_members(list);
    for s in sorted_services(&shown, o) {
        if o.service.is_none_or(|k| k == s.spec.key) {
            service_entry(&mut out, s, o);
        }
    }
    out
}

/// `list` with each service group's member keys as services of their
/// own, the group's real servers (and counts) under each, as ipvsadm
/// shows the services keepalived makes of a `virtual_server_group`.
fn with_members(list: &ServiceList) -> ServiceList {
    let mut shown = list.clone();
    for s in &list.services {
        for m in &s.spec.members {
            let mut one = s.clone();
            one.spec.key = *m;
            one.spec.members.clear();
            shown.services.push(one);
        }
    }
    shown
}

/// `--get-laddr` output (DPVS's columns, less its per-address conflict
/// and connection counts, which dirigo does not keep): each service with
/// local addresses, then one line per address.
pub fn laddrs(list: &ServiceList) -> String {
    let mut out = format!("{:<30} {:<8} {}\n", "VIP:VPORT", "TOTAL", "SNAT_IP");
    for s in sorted_services(list, &ListCmd::default()) {
        let k = &s.spec.key;
        if s.spec.local_addresses.is_empty() {
            continue;
        }
        let name = format!("{} {}", k.proto.upper(), addr_port(k.vip, k.port));
        let _ = writeln!(out, "{name:<30} {:<8}", s.spec.local_addresses.len());
        for a in &s.spec.local_addresses {
            let _ = writeln!(out, "{:<30} {:<8} {a}", "", "");
        }
    }
    out
}

/// `-S` output (ipvsadm-save rules). A TUN server's tunnel follows its
/// weight as ipvsadm 1.31 writes it (`--tun-type ipip`, `--tun-type gue
/// --tun-port 6080 --tun-nocsum`, `--tun-type gre --tun-csum`).
/// Thresholds, which ipvsadm does not save, are appended as `-x`/`-y`
/// when set so a restore loses nothing.
pub fn save(list: &ServiceList) -> String {
    let mut out = String::new();
    let o = ListCmd::default();
    for s in sorted_services(list, &o) {
        let svc = service_rule(&s.spec.key);
        let _ = write!(out, "-A {svc} -s {}", s.spec.sched.name());
        if let Some(f) = sched_flags_str(&s.spec) {
            let _ = write!(out, " -b {f}");
        }
        if let Some(t) = s.spec.persistent {
            let _ = write!(out, " -p {t}");
            if let Some(m) = mask_arg(&s.spec) {
                let _ = write!(out, " -M {m}");
            }
        }
        if s.spec.ops {
            out.push_str(" -o");
        }
        if s.spec.synproxy {
            out.push_str(" --synproxy");
        }
        if !s.spec.client_address.is_none() {
            let _ = write!(out, " --client-address {}", s.spec.client_address.name());
        }
        out.push('\n');
        // the local addresses before the FullNAT servers that need them
        for a in &s.spec.local_addresses {
            let _ = writeln!(out, "-P {svc} -z {a}");
        }
        for d in sorted_dests(s, false) {
            let sw = match d.spec.method {
                Method::Dr => "-g",
                Method::Tun => "-i",
                Method::Nat => "-m",
                Method::FullNat => "-b",
            };
            let _ = write!(
                out,
                "-a {svc} -r {} {sw} -w {}",
                addr_port(d.spec.key.addr, dest_port(s, d)),
                d.spec.weight
            );
            if d.spec.method == Method::Tun {
                // as ipvsadm 1.31: every TUN server's tunnel, ipip included
                let _ = write!(out, " {}", d.spec.tun.save_options());
            }
            if d.spec.upper != 0 {
                let _ = write!(out, " -x {}", d.spec.upper);
            }
            if d.spec.lower != 0 {
                let _ = write!(out, " -y {}", d.spec.lower);
            }
            out.push('\n');
        }
        // a service group's members: ipvsadm has no rule for them, so
        // they are comments to -R (and to ipvsadm); the state file reads
        // them back (`MEMBER`)
        for m in &s.spec.members {
            let _ = writeln!(out, "{MEMBER}{svc} {}", member_text(m));
        }
    }
    out
}

/// The prefix of a `-S` line naming a member of a service group:
/// `#member -t 192.0.2.1:80 192.0.2.2:80` (the service, then the member
/// as the config file's `members` writes it).
pub const MEMBER: &str = "#member ";

/// `-L -c` output.
pub fn conns(conns: &[ConnInfo]) -> String {
    let mut out = String::from("IPVS connection entries\n");
    let _ = writeln!(
        out,
        "pro expire {:<11} {:<18} {:<18} destination",
        "state", "source", "virtual"
    );
    for c in conns {
        let expire = format!("{:02}:{:02}", c.expire_secs / 60, c.expire_secs % 60);
        let _ = writeln!(
            out,
            "{:<3} {:<6} {:<11} {:<18} {:<18} {}",
            c.proto.upper(),
            expire,
            c.state,
            c.client.to_string(),
            c.vaddr.to_string(),
            c.dest
        );
    }
    out
}

/// `-L --timeout` output.
pub fn timeouts(t: &Timeouts) -> String {
    format!(
        "Timeout (tcp tcpfin udp): {} {} {}\n",
        t.tcp, t.tcpfin, t.udp
    )
}

/// `-L --daemon`: ipvsadm's lines for the sync daemons (none when sync is
/// off). dirigo's one sync thread is IPVS's master when it sends and its
/// backup when it receives; `mcast=` names the kernel interface.
pub fn daemon(s: Option<&crate::view::SyncInfo>) -> String {
    let Some(s) = s else {
        return String::new();
    };
    let mut out = String::new();
    for (on, kind) in [(s.send, "master"), (s.receive, "backup")] {
        if on {
            out.push_str(&format!(
                "{kind} sync daemon (mcast={}, syncid={}, maxlen={}, group={}, port={}, ttl={})\n",
                s.interface, s.syncid, s.max_message, s.group, s.udp_port, s.ttl
            ));
        }
    }
    out
}

/// `-v` output.
pub fn version() -> String {
    format!(
        "ipvsadm v1.31 (dirigoadm {}, commit {}; IPVS v{IPVS_VERSION} compatible)\n",
        crate::version::VERSION,
        crate::version::COMMIT
    )
}

/// `-h` output (ipvsadm's usage, trimmed to what dirigoadm supports).
pub fn usage(prog: &str) -> String {
    let p = prog;
    format!(
        "Usage:\n\
  {p} -A|E -t|u service-address|-f fwmark [-6] [-s scheduler] [-p [timeout]] [-M netmask] [-b sched-flags] [-o] [--synproxy] [--client-address how]\n\
  {p} -D -t|u service-address|-f fwmark [-6]\n\
  {p} -C\n\
  {p} -R\n\
  {p} -S [-n]\n\
  {p} -a|e -t|u service-address|-f fwmark [-6] -r server-address [options]\n\
  {p} -d -t|u service-address|-f fwmark [-6] -r server-address\n\
  {p} -L|l [options]\n\
  {p} -Z [-t|u service-address]\n\
  {p} --set tcp tcpfin udp\n\
  {p} -h\n\n\
Options:\n\
  --socket PATH                       control socket (else $DIRIGO_SOCKET, else /run/dirigo/ctl.sock)\n\
  --tcp-service  -t service-address   service-address is host[:port]\n\
  --udp-service  -u service-address   service-address is host[:port]\n\
  --fwmark-service -f fwmark          fwmark is an integer greater than zero, given to\n\
                                      packets by dirigo's mark rules (dirigoctl mark)\n\
  --ipv6         -6                   fwmark entry uses IPv6\n\
  --scheduler    -s scheduler         one of rr|wrr|lc|wlc|sed|nq|sh|dh|mh|fo,\n\
                                      the default scheduler is wlc.\n\
  --sched-flags  -b flags             sh-fallback,sh-port,mh-fallback,mh-port\n\
  --persistent   -p [timeout]         persistent service\n\
  --netmask      -M netmask           persistent granularity mask\n\
  --synproxy     -j [enable|disable]  SYN proxy with SYN cookies (NAT real servers only)\n\
  --client-address how                none|toa|proxy-v1|proxy-v2 (FullNAT TCP services)\n\
  --ops          -o                   one-packet scheduling (UDP; DR and TUN real servers)\n\
  --real-server  -r server-address    server-address is host (and port)\n\
  --gatewaying   -g                   gatewaying (direct routing) (default)\n\
  --ipip         -i                   ipip encapsulation (tunneling)\n\
  --masquerading -m                   masquerading (NAT)\n\
  --tun-type      type                one of ipip|gue|gre,\n\
                                      the default tunnel type is ipip.\n\
  --tun-port      port                tunnel destination port\n\
  --tun-nocsum                        tunnel encapsulation without checksum\n\
  --tun-csum                          tunnel encapsulation with checksum\n\
  --tun-remcsum                       tunnel encapsulation with remote checksum\n\
  --weight       -w weight            capacity of real server\n\
  --u-threshold  -x uthreshold        upper threshold of connections\n\
  --l-threshold  -y lthreshold        lower threshold of connections\n\
  --connection   -c                   output of current IPVS connections\n\
  --timeout                           output of timeout (tcp tcpfin udp)\n\
  --stats                             output of statistics information\n\
  --rate                              output of rate information\n\
  --exact                             expand numbers (display exact values)\n\
  --thresholds                        output of thresholds information\n\
  --persistent-conn                   output of persistent connection info\n\
  --tun-info                          output of tunnel information\n\
  --nosort                            disable sorting output of service/server entries\n\
  --numeric      -n                   numeric output of addresses and ports\n"
    )
}
