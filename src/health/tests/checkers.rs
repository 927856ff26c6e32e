//! The SMTP, DNS and file checks against real servers on 127.0.0.1 (an
//! SMTP responder of the test's own, Debian's dnsmasq), a file the test
//! writes, and `retry_delay` in the engine's schedule.

use super::super::engine::Engine;
use super::super::probe::run;
use super::super::spec::Probe;
use super::super::state::Outcome;
use super::job;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the SMTP responder answers: the greeting's and HELO's codes.
type Codes = Arc<Mutex<(u16, u16)>>;

/// An SMTP responder: the greeting, then an answer to each line (HELO:
/// the code asked for, multi-line; QUIT: 221 and close). Returns its
/// address, the codes it answers with and the HELO lines it received.
fn smtp_server() -> (SocketAddrV4, Codes, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, l.local_addr().unwrap().port());
    let codes: Codes = Arc::new(Mutex::new((220, 250)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (c, s) = (codes.clone(), seen.clone());
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (greet, helo) = *c.lock().unwrap();
            let s = s.clone();
            let peer = conn
                .peer_addr()
                .map(|a| a.ip().to_string())
                .unwrap_or_default();
            std::thread::spawn(move || {
                let _ = write!(conn, "{greet} mx.test ESMTP test\r\n");
                let mut r = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 0 {
                    let cmd = line.trim_end().to_string();
                    line.clear();
                    if cmd.starts_with("HELO") {
                        s.lock().unwrap().push(format!("{peer} {cmd}"));
                        let _ = write!(conn, "{helo}-mx.test\r\n{helo} pleased\r\n");
                    } else if cmd == "QUIT" {
                        let _ = write!(conn, "221 bye\r\n");
                        break;
                    } else {
                        let _ = write!(conn, "500 what\r\n");
                    }
                }
            });
        }
    });
    (addr, codes, seen)
}

async fn check(probe: Probe, target: SocketAddrV4) -> Outcome {
    run(&job(probe, target, 1000, 1000, 0)).await
}

#[tokio::test]
async fn smtp_is_up_on_220_then_2xx_and_down_otherwise() {
    let (addr, codes, seen) = smtp_server();
    let smtp = || Probe::Smtp {
        helo: "checker.test".into(),
    };
    let o = check(smtp(), addr).await;
    assert!(o.ok && o.detail == "HELO answered 250", "{o:?}");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        ["127.0.0.1 HELO checker.test"]
    );
    // from the source asked for (keepalived's bindto)
    let mut j = job(smtp(), addr, 1000, 1000, 0);
    j.bind = Some(std::net::SocketAddr::new(
        Ipv4Addr::new(127, 0, 0, 2).into(),
        0,
    ));
    assert!(run(&j).await.ok);
    assert_eq!(
        seen.lock().unwrap().last().unwrap(),
        "127.0.0.2 HELO checker.test"
    );
    *codes.lock().unwrap() = (554, 250);
    let o = check(smtp(), addr).await;
    assert!(
        !o.ok && o.detail == "greeting 554 mx.test ESMTP test",
        "{o:?}"
    );
    *codes.lock().unwrap() = (220, 421);
    let o = check(smtp(), addr).await;
    assert!(!o.ok && o.detail == "HELO answered 421 mx.test", "{o:?}");
    *codes.lock().unwrap() = (220, 250);
    assert!(check(smtp(), addr).await.ok);
    // a server that is not SMTP, one that says nothing, a closed port
    let (http, _) = super::servers::http();
    let o = check(smtp(), http).await;
    assert!(!o.ok, "{o:?}");
    let (_held, closed) = super::servers::closed_tcp();
    assert_eq!(check(smtp(), closed).await.detail, "refused");
}

/// dnsmasq on 127.0.0.1 (port chosen here), answering up.test A, an MX and
/// a TXT, NXDOMAIN for the rest of .test; `None` (a printed skip) when
/// dnsmasq is not installed outside CI.
struct Dnsmasq(Child, SocketAddrV4);

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn dnsmasq() -> Option<Dnsmasq> {
    let port = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bin = ["/usr/sbin/dnsmasq", "/usr/bin/dnsmasq"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(bin) = bin else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("dnsmasq is not installed (scripts/install-deps.sh installs dnsmasq-base)");
        }
        eprintln!("SKIP dns check against dnsmasq: dnsmasq is not installed");
        return None;
    };
    let child = Command::new(bin)
        .args([
            "--no-daemon",
            "--conf-file=/dev/null",
            "--pid-file=",
            &format!("--port={port}"),
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            "--no-resolv",
            "--no-hosts",
            "--local=/test/",
            "--address=/up.test/192.0.2.7",
            "--mx-host=mx.test,mail.test,10",
            "--txt-record=txt.test,hello",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dnsmasq");
    let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    let d = Dnsmasq(child, addr);
    // ready when it answers
    let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let t = Instant::now();
    let mut buf = [0u8; 512];
    while t.elapsed() < Duration::from_secs(5) {
        let _ = s.send_to(&super::super::dns::query(7, "up.test", 1), addr);
        if s.recv(&mut buf).is_ok() {
            return Some(d);
        }
    }
    panic!("dnsmasq did not answer on {addr}");
}

fn dns(qtype: u16, name: &str, expect: Option<&str>) -> Probe {
    Probe::Dns {
        qtype,
        name: name.into(),
        expect: expect.map(str::to_string),
    }
}

#[tokio::test]
async fn dns_against_dnsmasq() {
    let Some(d) = dnsmasq() else { return };
    let at = d.1;
    let o = check(dns(1, "up.test", None), at).await;
    assert!(o.ok && o.detail == "NOERROR, 1 answer(s)", "{o:?}");
    let o = check(dns(1, "up.test", Some("192.0.2.7")), at).await;
    assert!(o.ok, "{o:?}");
    let o = check(dns(1, "up.test", Some("192.0.2.8")), at).await;
    assert!(
        !o.ok && o.detail == "answer 192.0.2.7 (want 192.0.2.8)",
        "{o:?}"
    );
    let o = check(dns(15, "mx.test", Some("mail.test")), at).await;
    assert!(o.ok, "{o:?}");
    let o = check(dns(16, "txt.test", Some("hello")), at).await;
    assert!(o.ok, "{o:?}");
    let o = check(dns(1, "nothing.test", None), at).await;
    assert!(!o.ok && o.detail == "NXDOMAIN", "{o:?}");
    // the server gone: its port unreachable fails the check at once
    drop(d);
    let t = Instant::now();
    let o = check(dns(1, "up.test", None), at).await;
    assert!(!o.ok && o.detail == "refused", "{o:?}");
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    // a server that answers garbage: ignored until the timeout
    let junk = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let junk_at = match junk.local_addr().unwrap() {
        std::net::SocketAddr::V4(a) => a,
        _ => unreachable!(),
    };
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((_, peer)) = junk.recv_from(&mut buf) {
            let _ = junk.send_to(b"\xff\xff garbage", peer);
        }
    });
    let o = run(&job(dns(1, "up.test", None), junk_at, 1000, 300, 0)).await;
    assert!(!o.ok && o.detail == "timeout", "{o:?}");
}

#[tokio::test]
async fn file_marks_down_and_changes_the_weight() {
    let dir = std::env::temp_dir().join(format!("dirigo-file-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("weight");
    let path = f.display().to_string();
    let probe = |factor| Probe::File {
        path: path.clone(),
        factor,
        reverse: false,
    };
    let any = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1);
    let o = check(probe(0), any).await;
    assert!(!o.ok && o.detail.contains("No such file"), "{o:?}");
    std::fs::write(&f, "0\n").unwrap();
    let o = check(probe(0), any).await;
    assert!(o.ok && o.weight.is_none(), "{o:?}");
    std::fs::write(&f, "1\n").unwrap();
    assert!(!check(probe(0), any).await.ok);
    std::fs::write(&f, "3\n").unwrap();
    let o = check(probe(2), any).await;
    assert!(o.ok && o.weight == Some(6), "{o:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_check_is_retried_after_retry_delay_until_fall() {
    let (_held, closed) = super::servers::closed_tcp();
    let mut j = job(Probe::Tcp, closed, 1000, 100, 0);
    j.spec.fall = 3;
    j.spec.retry_delay = Some(Duration::from_millis(100));
    let e = Engine::start(None).unwrap();
    e.set_jobs(vec![j]);
    // the first check within one interval, then two retries 100 ms apart,
    // then the next tick of the schedule
    std::thread::sleep(Duration::from_millis(2600));
    let at: Vec<Instant> = e.drain().iter().map(|r| r.at).collect();
    e.stop();
    assert!(at.len() >= 4, "{} reports", at.len());
    let gaps: Vec<Duration> = at.windows(2).map(|w| w[1] - w[0]).collect();
    for g in &gaps[..2] {
        assert!(
            *g >= Duration::from_millis(90) && *g < Duration::from_millis(450),
            "a retry {g:?} after a failure: {gaps:?}"
        );
    }
    assert!(
        gaps[2] > Duration::from_millis(500),
        "after fall failures the schedule goes on: {gaps:?}"
    );
}
