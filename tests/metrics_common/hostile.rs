//! Hostile scrapers against a lab's dirigo: 1,000 idle connections, a
//! 10 MB request head, a 10 MB body and a client that never reads, all at
//! once, while a download through the VIP must stay byte-exact, the
//! control socket must answer within a second, and a normal scrape must
//! still work.

use super::{get, parse, scrape};
use crate::lab_common::checks::{finish_download, spawn_download};
use crate::lab_common::Lab;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long `dirigoadm -L -n` takes to answer.
fn adm_latency(lab: &Lab) -> Duration {
    let t = Instant::now();
    let o = Command::new(crate::common::DIRIGOADM)
        .args(["--socket", &lab.sock, "-L", "-n"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    t.elapsed()
}

/// Write up to `n` bytes of `head` then filler; the server may close
/// first. Then the answer it sent, if any.
fn flood(addr: SocketAddr, head: &[u8], n: usize) -> String {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(3)) else {
        return "(not connected)".into();
    };
    let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let chunk = vec![b'a'; 64 << 10];
    let mut sent = 0;
    if s.write_all(head).is_ok() {
        while sent < n && s.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// The storm, and what must hold through it.
pub fn hostile_scrapers(lab: &Lab, addr: SocketAddr) {
    // room for a thousand sockets in this process
    let (soft, hard) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).unwrap();
    if soft < 4096 {
        nix::sys::resource::setrlimit(
            nix::sys::resource::Resource::RLIMIT_NOFILE,
            4096.min(hard).max(soft),
            hard,
        )
        .unwrap();
    }
    let (_, before) = scrape(addr);
    let refused0 = before.one("dirigo_metrics_connections_refused_total", &[]);
    // a download through the VIP for the whole storm: 8 MiB at 2 MB/s
    let size = 8 << 20;
    let dl = spawn_download(lab, size, "hostile", Some("2M"));
    let t0 = Instant::now();
    let idle = std::thread::spawn(move || {
        let mut socks = Vec::new();
        for _ in 0..1000 {
            if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
                socks.push(s);
            }
        }
        let opened = socks.len();
        // every one must be closed by the server: at once past the cap,
        // at the header timeout within it
        let mut closed = 0;
        for mut s in socks {
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            let mut b = [0u8; 256];
            match s.read(&mut b) {
                // still open after 10 s: not closed
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                // EOF, a reset, or a 408 before the close
                _ => closed += 1,
            }
        }
        (opened, closed)
    });
    let head = std::thread::spawn(move || {
        flood(
            addr,
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ",
            10 << 20,
        )
    });
    let body = std::thread::spawn(move || {
        flood(
            addr,
            b"PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n",
            10 << 20,
        )
    });
    // asks and never reads its answer
    let mut mute = TcpStream::connect(addr).unwrap();
    mute.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();

    // the control socket answers within a second, all along
    let mut worst = Duration::ZERO;
    while t0.elapsed() < Duration::from_secs(4) {
        worst = worst.max(adm_latency(lab));
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("hostile: dirigoadm -L -n worst {worst:?}");
    assert!(
        worst < Duration::from_secs(1),
        "control socket took {worst:?}"
    );
    // a normal scrape works (once the idle ones within the cap are cut)
    let t = Instant::now();
    let ok = loop {
        match get(addr, Duration::from_secs(5)) {
            Ok((s, b)) if s.starts_with("HTTP/1.1 200") => break b,
            r => {
                assert!(
                    t.elapsed() < Duration::from_secs(15),
                    "no scrape in 15 s: {r:?}"
                );
                std::thread::sleep(Duration::from_millis(250));
            }
        }
    };
    eprintln!("hostile: a normal scrape after {:?}", t.elapsed());
    let e = parse(&ok).unwrap();
    let (opened, closed) = idle.join().unwrap();
    eprintln!("hostile: {opened} idle connections opened, {closed} closed by dirigo");
    assert!(
        opened >= 900,
        "only {opened} of 1000 idle connections opened"
    );
    assert_eq!(closed, opened);
    let h = head.join().unwrap();
    let b = body.join().unwrap();
    eprintln!("hostile: 10 MB head -> {h:?}; 10 MB body -> {b:?}");
    assert!(h.is_empty() || h.starts_with("HTTP/1.1 431"), "{h}");
    assert!(b.is_empty() || b.starts_with("HTTP/1.1 405"), "{b}");
    drop(mute);
    let server = finish_download(lab, dl, size, "hostile");
    eprintln!("hostile: 8 MiB download via {server}: byte-exact");
    assert!(
        e.one("dirigo_metrics_connections_refused_total", &[]) - refused0 >= 500.0,
        "the cap refused few connections"
    );
    for _ in 0..3 {
        adm_latency(lab);
    }
    let (_, after) = scrape(addr);
    assert!(after.one("dirigo_metrics_requests_total", &[]) > 0.0);
}
