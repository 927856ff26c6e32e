//! Each probe's verdicts against small servers on 127.0.0.1.

use super::super::probe::{run, substitute, Prober};
use super::super::spec::Probe;
use super::super::state::Outcome;
use super::{http, job, root, servers};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn check(probe: Probe, target: SocketAddrV4, timeout_ms: u64) -> Outcome {
    run(&job(probe, target, 1000, timeout_ms, 0)).await
}

#[track_caller]
fn passes(o: &Outcome, detail: &str) {
    assert!(o.ok, "expected a pass with {detail:?}: {o:?}");
    assert_eq!(o.detail, detail, "{o:?}");
}

#[track_caller]
fn fails(o: &Outcome, detail: &str) {
    assert!(!o.ok, "expected a failure with {detail:?}: {o:?}");
    assert_eq!(o.detail, detail, "{o:?}");
}

#[tokio::test]
async fn tcp_passes_on_a_listener_and_fails_at_once_on_a_closed_port() {
    let up = servers::tcp();
    let o = check(Probe::Tcp, up, 1000).await;
    passes(&o, "connected");
    assert!(o.latency_us < 1_000_000, "{o:?}");

    let (_held, down) = servers::closed_tcp();
    let t = Instant::now();
    let o = check(Probe::Tcp, down, 2000).await;
    fails(&o, "refused");
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn tcp_binds_to_the_given_source() {
    let up = servers::tcp();
    let mut j = job(Probe::Tcp, up, 1000, 1000, 0);
    j.bind = Some(std::net::SocketAddr::V4(SocketAddrV4::new(
        Ipv4Addr::new(127, 0, 0, 2),
        0,
    )));
    passes(&run(&j).await, "connected");
    // an address that is not ours cannot be bound
    j.bind = Some(std::net::SocketAddr::V4(SocketAddrV4::new(
        Ipv4Addr::new(192, 0, 2, 1),
        0,
    )));
    let o = run(&j).await;
    assert!(
        !o.ok && o.detail.starts_with("cannot bind 192.0.2.1:0"),
        "{o:?}"
    );
}

/// An IPv6 real server is checked over an IPv6 socket (an IPv4 one
/// failed every check with `Address family not supported by protocol`).
#[tokio::test]
async fn tcp_checks_an_ipv6_target() {
    let l = std::net::TcpListener::bind("[::1]:0").expect("IPv6 loopback");
    let mut j = job(Probe::Tcp, servers::tcp(), 1000, 1000, 0);
    j.target = l.local_addr().unwrap();
    j.key.rs.addr = j.target.ip();
    passes(&run(&j).await, "connected");
}

#[tokio::test]
async fn tcp_to_a_listener_that_takes_no_more_times_out() {
    // a full accept queue: the kernel drops further SYNs unanswered
    let (_listener, full) = servers::full_tcp().await;
    let t = Instant::now();
    fails(&check(Probe::Tcp, full, 300).await, "timeout");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(1),
        "{took:?}"
    );
}

#[tokio::test]
async fn http_judges_status_and_body() {
    let (srv, seen) = servers::http();
    passes(
        &check(http("/ok", &[], None, false), srv, 2000).await,
        "status 200",
    );
    passes(
        &check(http("/ok", &[], Some("ok"), false), srv, 2000).await,
        "status 200, body has \"ok\"",
    );
    fails(
        &check(http("/503", &[], None, false), srv, 2000).await,
        "status 503",
    );
    fails(
        &check(http("/bad", &[], Some("ok"), false), srv, 2000).await,
        "status 200, body lacks \"ok\"",
    );
    fails(
        &check(http("/301", &[], None, false), srv, 2000).await,
        "status 301",
    );
    fails(
        &check(http("/nope", &[], None, false), srv, 2000).await,
        "status 404",
    );
    // ranges
    let ranges = [(200, 299), (300, 399)];
    passes(
        &check(http("/301", &ranges, None, false), srv, 2000).await,
        "status 301",
    );
    passes(
        &check(http("/503", &[(503, 503)], None, false), srv, 2000).await,
        "status 503",
    );
    fails(
        &check(http("/ok", &[(500, 599)], None, false), srv, 2000).await,
        "status 200",
    );
    // only the first 64 KiB of a body are searched
    fails(
        &check(http("/big", &[], Some("needle"), false), srv, 2000).await,
        "status 200, body lacks \"needle\"",
    );
    passes(
        &check(http("/big", &[], Some("xxxx"), false), srv, 2000).await,
        "status 200, body has \"xxxx\"",
    );
    // a server slower than the timeout
    let t = Instant::now();
    fails(
        &check(http("/slow", &[], None, false), srv, 300).await,
        "timeout",
    );
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );

    let heads = seen.lock().unwrap().clone();
    let first = &heads[0];
    assert!(first.starts_with("GET /ok HTTP/1.1\r\n"), "{first}");
    let lower = first.to_ascii_lowercase();
    assert!(lower.contains(&format!("\r\nhost: {srv}\r\n")), "{first}");
    assert!(lower.contains("\r\nconnection: close\r\n"), "{first}");
}

#[tokio::test]
async fn http_sends_the_host_given() {
    let (srv, _) = servers::http();
    let mut p = http("/echo", &[], Some("\r\nhost: www.example.test\r\n"), false);
    if let Probe::Http { host, .. } = &mut p {
        *host = Some("www.example.test".into());
    }
    passes(
        &check(p, srv, 2000).await,
        "status 200, body has \"\\r\\nhost: www.example.test\\r\\n\"",
    );
}

#[tokio::test]
async fn http_to_a_closed_port_is_refused() {
    let (_held, down) = servers::closed_tcp();
    fails(
        &check(http("/ok", &[], None, false), down, 2000).await,
        "refused",
    );
}

#[tokio::test]
async fn https_takes_any_certificate_and_sends_sni_for_a_name() {
    let (srv, _) = servers::https();
    passes(
        &check(http("/ok", &[], Some("ok"), true), srv, 2000).await,
        "status 200, body has \"ok\"",
    );
    fails(
        &check(http("/503", &[], None, true), srv, 2000).await,
        "status 503",
    );
    // no host: the address, no SNI
    passes(
        &check(http("/sni", &[], Some("sni=none"), true), srv, 2000).await,
        "status 200, body has \"sni=none\"",
    );
    // a name (its port left out of the SNI)
    let mut p = http("/sni", &[], Some("sni=www.example.test"), true);
    if let Probe::Http { host, .. } = &mut p {
        *host = Some("www.example.test:8443".into());
    }
    passes(
        &check(p, srv, 2000).await,
        "status 200, body has \"sni=www.example.test\"",
    );
    // plain HTTP to a TLS server fails
    let o = check(http("/ok", &[], None, false), srv, 1000).await;
    assert!(!o.ok, "{o:?}");
    // TLS to a plain HTTP server fails
    let (plain, _) = servers::http();
    let o = check(http("/ok", &[], None, true), plain, 1000).await;
    assert!(!o.ok && o.detail.starts_with("tls: "), "{o:?}");
}

#[tokio::test]
async fn udp_passes_on_an_answer_and_fails_without_one() {
    let echo = servers::udp_echo();
    let udp = |expect: Option<&str>| Probe::Udp {
        payload: b"hello".to_vec(),
        expect: expect.map(str::to_string),
    };
    passes(&check(udp(None), echo, 1000).await, "answer of 10 bytes");
    passes(
        &check(udp(Some("echo:hello")), echo, 1000).await,
        "answer of 10 bytes",
    );
    fails(
        &check(udp(Some("pong")), echo, 1000).await,
        "answer of 10 bytes lacks \"pong\"",
    );
    let (_held, silent) = servers::udp_silent();
    let t = Instant::now();
    fails(&check(udp(None), silent, 300).await, "timeout");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(1),
        "{took:?}"
    );
    // a closed port answers with ICMP port unreachable
    fails(
        &check(udp(None), servers::udp_closed(), 1000).await,
        "refused",
    );
}

fn exec(args: &[&str]) -> Probe {
    Probe::Exec {
        command: args.iter().map(|a| a.to_string()).collect(),
    }
}

#[tokio::test]
async fn exec_passes_on_exit_0() {
    let t = "127.0.0.1:80".parse().unwrap();
    passes(&check(exec(&["/bin/true"]), t, 2000).await, "exit 0");
    passes(&check(exec(&["true"]), t, 2000).await, "exit 0");
    fails(&check(exec(&["/bin/false"]), t, 2000).await, "exit 1");
    fails(
        &check(exec(&["sh", "-c", "exit 3"]), t, 2000).await,
        "exit 3",
    );
    fails(
        &check(exec(&["sh", "-c", "kill -9 $$"]), t, 2000).await,
        "signal 9",
    );
    fails(
        &check(exec(&["/nonexistent/dirigo-check"]), t, 2000).await,
        "not found",
    );
    fails(
        &check(exec(&["dirigo-no-such-program"]), t, 2000).await,
        "not found",
    );
    fails(&check(exec(&[]), t, 2000).await, "no command");
    // no shell: the argument is not split or expanded
    fails(
        &check(exec(&["/bin/true $HOME"]), t, 2000).await,
        "not found",
    );
}

#[tokio::test]
async fn exec_replaces_the_placeholders() {
    let mut j = job(
        exec(&[
            "sh",
            "-c",
            r#"test "$0 $1" = "127.0.0.1:8080 10.0.0.1:80""#,
            "{rip}:{rport}",
            "{vip}:{vport}",
        ]),
        "127.0.0.1:8080".parse().unwrap(),
        1000,
        2000,
        0,
    );
    passes(&run(&j).await, "exit 0");
    assert_eq!(
        substitute("{rip}-{rport}/{vip}-{vport}{rip}", &j),
        "127.0.0.1-8080/10.0.0.1-80127.0.0.1"
    );
    // the test can fail: other values, another verdict
    j.rs = "127.0.0.9:8080".parse().unwrap();
    fails(&run(&j).await, "exit 1");
}

/// Whether a process whose command line contains `marker` runs.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(marker))
            .unwrap_or(false)
    })
}

#[tokio::test]
async fn exec_past_the_timeout_is_killed_with_its_children() {
    // a shell that waits for a child of its own (`; true` keeps the shell
    // from exec'ing it); the child's duration is the marker to find it by
    let marker = format!("30.{}", std::process::id());
    let script = format!("sleep {marker}; true");
    let t = Instant::now();
    let o = check(
        exec(&["sh", "-c", &script]),
        "127.0.0.1:80".parse().unwrap(),
        300,
    )
    .await;
    fails(&o, "timeout");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // the shell and its sleep are gone (a kill of the shell alone would
    // leave the sleep running for 30 s)
    let gone = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !running(&marker)
    });
    assert!(gone, "a process of the timed-out check still runs");
}

#[tokio::test]
async fn ping_answers_from_127_0_0_1() {
    if !root("ping_answers_from_127_0_0_1") {
        return;
    }
    let o = check(Probe::Ping, "127.0.0.1:0".parse().unwrap(), 1000).await;
    assert!(o.ok && o.detail.starts_with("echo reply in "), "{o:?}");
    // (an unanswered echo: in the namespace test, where echoes can be
    // ignored without touching this machine's settings)
}

#[tokio::test]
async fn one_prober_pings_many_at_once() {
    if !root("one_prober_pings_many_at_once") {
        return;
    }
    // one ICMP socket for all, the replies told apart by sequence number
    let prober = Arc::new(Prober::new());
    let mut set = tokio::task::JoinSet::new();
    for n in 0..50 {
        let prober = prober.clone();
        let j = job(Probe::Ping, "127.0.0.1:0".parse().unwrap(), 1000, 1000, n);
        set.spawn(async move { prober.run(&j).await });
    }
    let mut passed = 0;
    while let Some(o) = set.join_next().await {
        let o = o.unwrap();
        assert!(o.ok, "{o:?}");
        passed += 1;
    }
    assert_eq!(passed, 50);
}
