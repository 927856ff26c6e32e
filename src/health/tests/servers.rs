//! Small servers on 127.0.0.1 for the probes to check, each on threads of
//! its own (left running until the test process ends).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

fn local(port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
}

fn port_of(l: &TcpListener) -> u16 {
    l.local_addr().unwrap().port()
}

/// A TCP listener that accepts and closes every connection.
pub fn tcp() -> SocketAddrV4 {
    let l = TcpListener::bind(local(0)).unwrap();
    let addr = local(port_of(&l));
    thread::spawn(move || {
        for c in l.incoming() {
            drop(c);
        }
    });
    addr
}

/// A port on 127.0.0.1 that refuses connections, held (bound, not
/// listening) as long as the socket lives.
pub fn closed_tcp() -> (tokio::net::TcpSocket, SocketAddrV4) {
    let s = tokio::net::TcpSocket::new_v4().unwrap();
    s.bind(local(0).into()).unwrap();
    let port = s.local_addr().unwrap().port();
    (s, local(port))
}

/// A listener whose accept queue is full (backlog 1, two connections
/// waiting, none accepted): a further connection attempt goes unanswered.
/// Needs a runtime (the listener is tokio's).
pub async fn full_tcp() -> (
    (tokio::net::TcpListener, Vec<std::net::TcpStream>),
    SocketAddrV4,
) {
    let s = tokio::net::TcpSocket::new_v4().unwrap();
    s.bind(local(0).into()).unwrap();
    let l = s.listen(1).unwrap();
    let addr = local(l.local_addr().unwrap().port());
    let mut waiting = Vec::new();
    for _ in 0..4 {
        if let Ok(c) =
            std::net::TcpStream::connect_timeout(&addr.into(), Duration::from_millis(100))
        {
            waiting.push(c);
        }
    }
    assert!(
        waiting.len() >= 2,
        "the queue took {} connections",
        waiting.len()
    );
    ((l, waiting), addr)
}

/// The requests an HTTP server received, head only.
pub type Seen = Arc<Mutex<Vec<String>>>;

/// An HTTP/1.1 server; every connection gets one answer then is closed:
///
/// * `/ok`: 200 "ok"; `/bad`: 200 "bad"; `/503`: 503 "down"; `/301`: 301;
/// * `/big`: 200, 70,000 bytes of `x` then "needle";
/// * `/slow`: 200 "ok" after two seconds;
/// * `/echo`: 200, the request's head as the body;
/// * `/sni`: 200 "sni=NAME" (TLS) or "sni=none";
/// * anything else: 404.
pub fn http() -> (SocketAddrV4, Seen) {
    serve(None)
}

/// [`http`] over TLS, with a self-signed certificate for another name.
pub fn https() -> (SocketAddrV4, Seen) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let cert = CertificateDer::from_pem_slice(include_bytes!("cert.pem")).unwrap();
    let key = PrivateKeyDer::from_pem_slice(include_bytes!("key.pem")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .unwrap();
    serve(Some(Arc::new(config)))
}

fn serve(tls: Option<Arc<rustls::ServerConfig>>) -> (SocketAddrV4, Seen) {
    let l = TcpListener::bind(local(0)).unwrap();
    let addr = local(port_of(&l));
    let seen: Seen = Arc::default();
    let log = seen.clone();
    thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { continue };
            let log = log.clone();
            let tls = tls.clone();
            thread::spawn(move || {
                let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
                match tls {
                    None => answer(c, None, &log),
                    Some(config) => {
                        let Ok(conn) = rustls::ServerConnection::new(config) else {
                            return;
                        };
                        let mut s = rustls::StreamOwned::new(conn, c);
                        // the handshake, so that the SNI is known
                        while s.conn.is_handshaking() {
                            if s.conn.complete_io(&mut s.sock).is_err() {
                                return;
                            }
                        }
                        let sni = s.conn.server_name().unwrap_or("none").to_string();
                        answer(s, Some(sni), &log);
                    }
                }
            });
        }
    });
    (addr, seen)
}

fn answer<S: Read + Write>(mut s: S, sni: Option<String>, log: &Seen) {
    let mut head = String::new();
    {
        let mut r = BufReader::new(&mut s);
        loop {
            let mut line = String::new();
            match r.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
    }
    log.lock().unwrap().push(head.clone());
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let (status, body): (&str, Vec<u8>) = match path.as_str() {
        "/ok" => ("200 OK", b"ok".to_vec()),
        "/bad" => ("200 OK", b"bad".to_vec()),
        "/503" => ("503 Service Unavailable", b"down".to_vec()),
        "/301" => ("301 Moved Permanently", Vec::new()),
        "/big" => {
            let mut b = vec![b'x'; 70_000];
            b.extend_from_slice(b"needle");
            ("200 OK", b)
        }
        "/slow" => {
            thread::sleep(Duration::from_secs(2));
            ("200 OK", b"ok".to_vec())
        }
        "/echo" => ("200 OK", head.clone().into_bytes()),
        "/sni" => (
            "200 OK",
            format!("sni={}", sni.as_deref().unwrap_or("none")).into_bytes(),
        ),
        _ => ("404 Not Found", Vec::new()),
    };
    let _ = write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(&body);
    let _ = s.flush();
}

/// A UDP server answering every datagram with "echo:" and the datagram.
pub fn udp_echo() -> SocketAddrV4 {
    let s = UdpSocket::bind(local(0)).unwrap();
    let addr = local(s.local_addr().unwrap().port());
    thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = s.recv_from(&mut buf) {
            let mut answer = b"echo:".to_vec();
            answer.extend_from_slice(&buf[..n]);
            let _ = s.send_to(&answer, from);
        }
    });
    addr
}

/// A UDP port that takes datagrams and never answers (held as long as the
/// socket lives).
pub fn udp_silent() -> (UdpSocket, SocketAddrV4) {
    let s = UdpSocket::bind(local(0)).unwrap();
    let port = s.local_addr().unwrap().port();
    (s, local(port))
}

/// A UDP port nothing listens on (answered by ICMP port unreachable).
pub fn udp_closed() -> SocketAddrV4 {
    let s = UdpSocket::bind(local(0)).unwrap();
    let port = s.local_addr().unwrap().port();
    drop(s);
    local(port)
}
