//! The HTTP endpoint's bounds on 127.0.0.1, with a stand-in renderer (no
//! EAL): GET /metrics and nothing else, the render cache, oversized
//! requests, idle clients, a client that never reads, a port in use.

use super::super::render::CONTENT_TYPE;
use super::super::server::Limits;
use super::super::{bind, EndpointCounters, RenderFn};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Running {
    ep: Option<super::super::Endpoint>,
    addr: SocketAddr,
    renders: Arc<AtomicUsize>,
    counters: Arc<EndpointCounters>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(e) = self.ep.take() {
            e.stop();
        }
    }
}

fn start(limits: Limits, body: String) -> Running {
    let b = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = b.addr;
    let renders = Arc::new(AtomicUsize::new(0));
    let r2 = Arc::clone(&renders);
    let render: RenderFn = Arc::new(move || {
        r2.fetch_add(1, Ordering::SeqCst);
        body.clone()
    });
    let counters = Arc::new(EndpointCounters::default());
    let ep = b.serve(render, limits, Arc::clone(&counters)).unwrap();
    Running {
        ep: Some(ep),
        addr,
        renders,
        counters,
    }
}

/// Send `req` and read the whole answer (the server closes after one).
fn http(addr: SocketAddr, req: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(req).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn get(addr: SocketAddr, path: &str) -> String {
    http(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
    )
}

#[test]
fn get_metrics_and_nothing_else() {
    let r = start(Limits::default(), "up 1\n".into());
    let a = get(r.addr, "/metrics");
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    assert!(
        a.to_ascii_lowercase()
            .contains(&format!("content-type: {CONTENT_TYPE}")),
        "{a}"
    );
    assert!(a.ends_with("\r\n\r\nup 1\n"), "{a}");
    assert!(get(r.addr, "/metrics?x=1").starts_with("HTTP/1.1 200"));
    assert!(get(r.addr, "/").starts_with("HTTP/1.1 404"));
    assert!(get(r.addr, "/metricsx").starts_with("HTTP/1.1 404"));
    let post = http(
        r.addr,
        b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
    );
    assert!(post.starts_with("HTTP/1.1 405"), "{post}");
    assert!(post.to_ascii_lowercase().contains("allow: get"), "{post}");
    let garbage = http(r.addr, b"\x16\x03\x01garbage\r\n\r\n");
    assert!(
        garbage.is_empty() || garbage.starts_with("HTTP/1.1 400"),
        "{garbage}"
    );
    assert_eq!(r.counters.requests.load(Ordering::SeqCst), 5);
}

#[test]
fn a_scrape_storm_renders_once_per_period() {
    let r = start(
        Limits {
            cache_for: Duration::from_secs(60),
            ..Limits::default()
        },
        "up 1\n".into(),
    );
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let a = r.addr;
            std::thread::spawn(move || get(a, "/metrics"))
        })
        .collect();
    for t in threads {
        assert!(t.join().unwrap().starts_with("HTTP/1.1 200"));
    }
    assert_eq!(r.renders.load(Ordering::SeqCst), 1);
    let r = start(
        Limits {
            cache_for: Duration::ZERO,
            ..Limits::default()
        },
        "up 1\n".into(),
    );
    get(r.addr, "/metrics");
    get(r.addr, "/metrics");
    assert_eq!(r.renders.load(Ordering::SeqCst), 2);
}

#[test]
fn an_oversized_request_is_refused() {
    let r = start(Limits::default(), "up 1\n".into());
    // 10 MB of header: 431 once the head passes the limit, then closed
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let t = Instant::now();
    let mut sent = 0usize;
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nX-Big: ");
    let chunk = vec![b'a'; 64 * 1024];
    while sent < 10 << 20 {
        if s.write_all(&chunk).is_err() {
            break;
        }
        sent += chunk.len();
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let a = String::from_utf8_lossy(&out);
    assert!(a.is_empty() || a.starts_with("HTTP/1.1 431"), "{a}");
    assert!(t.elapsed() < Duration::from_secs(8));
    // a 10 MB body is never read: 405 and closed
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(b"PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n");
    let mut sent = 0usize;
    while sent < 10 << 20 {
        if s.write_all(&chunk).is_err() {
            break;
        }
        sent += chunk.len();
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let a = String::from_utf8_lossy(&out);
    assert!(a.is_empty() || a.starts_with("HTTP/1.1 405"), "{a}");
    // and the endpoint still serves
    assert!(get(r.addr, "/metrics").starts_with("HTTP/1.1 200"));
}

#[test]
fn idle_clients_are_capped_and_cut() {
    let limits = Limits {
        max_conns: 4,
        header_timeout: Duration::from_millis(300),
        deadline: Duration::from_secs(2),
        ..Limits::default()
    };
    let r = start(limits, "up 1\n".into());
    let idle: Vec<TcpStream> = (0..50)
        .map(|_| TcpStream::connect(r.addr).unwrap())
        .collect();
    // beyond the cap: closed at once; the first four: cut at the header
    // timeout
    let t = Instant::now();
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 64];
        let n = s.read(&mut b).unwrap_or(0);
        assert!(n == 0 || b.starts_with(b"HTTP/1.1 408"), "{:?}", &b[..n]);
    }
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(r.counters.refused.load(Ordering::SeqCst) >= 40);
    assert!(get(r.addr, "/metrics").starts_with("HTTP/1.1 200"));
}

#[test]
fn a_client_that_never_reads_is_dropped_at_the_deadline() {
    let limits = Limits {
        deadline: Duration::from_millis(800),
        ..Limits::default()
    };
    // 32 MB: more than the loopback socket buffers hold
    let r = start(limits, "x".repeat(32 << 20));
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let t = Instant::now();
    while r.counters.timed_out.load(Ordering::SeqCst) == 0 {
        assert!(t.elapsed() < Duration::from_secs(5), "never timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(s);
    // meanwhile and after, others are served
    let mut b = [0u8; 12];
    let mut c = TcpStream::connect(r.addr).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"HTTP/1.1 200");
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let b = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let e = bind(b.addr).unwrap_err().to_string();
    assert!(e.contains(&format!("[metrics] listen {}", b.addr)), "{e}");
    assert!(e.contains("in use"), "{e}");
}
