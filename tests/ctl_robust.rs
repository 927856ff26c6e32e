//! The control server under abuse: garbage, truncated JSON, oversized
//! lines, binary junk, half-open clients, too many clients, a panicking
//! handler — and afterwards it still answers correctly and shuts down
//! cleanly.

mod ctl_common;

use ctl_common::{start, start_with, Mock};
use dirigo::ctl::server::{Server, ServerConfig};
use dirigo_proto::client::Client;
use dirigo_proto::proto::{ErrCode, Request, Response, ResponseEnvelope};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

fn connect(p: &Path) -> UnixStream {
    let s = UnixStream::connect(p).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Send raw bytes, read one response line.
fn exchange(s: &mut UnixStream, bytes: &[u8]) -> ResponseEnvelope {
    s.write_all(bytes).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    serde_json::from_str(line.trim_end()).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

/// [`exchange`], or `None` when the server closed the connection first
/// (a write or read error, or no line).
fn try_exchange(s: &mut UnixStream, bytes: &[u8]) -> Option<ResponseEnvelope> {
    s.write_all(bytes).ok()?;
    let mut r = BufReader::new(s.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    serde_json::from_str(line.trim_end()).ok()
}

fn code(env: &ResponseEnvelope) -> ErrCode {
    env.err.as_ref().expect("an error answer").code
}

fn version_works(p: &Path) {
    let mut c = Client::connect(p).unwrap();
    match c.call(Request::Version).unwrap() {
        Response::Version(v) => assert_eq!(v.version, "0.1.0-mock"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_input_gets_error_answers_and_connection_survives() {
    let srv = start();
    let mut s = connect(&srv.path);
    let e = exchange(&mut s, b"hello\n");
    assert_eq!((e.id, code(&e)), (0, ErrCode::BadRequest));
    let e = exchange(&mut s, b"{\"v\":1,\"id\":3,\"req\":{\"op\":\"clear\"}\n");
    assert_eq!(code(&e), ErrCode::BadRequest);
    let e = exchange(&mut s, b"{\"v\":2,\"id\":4,\"req\":{\"op\":\"clear\"}}\n");
    assert_eq!((e.id, code(&e)), (4, ErrCode::BadVersion));
    let e = exchange(&mut s, b"{\"v\":1,\"id\":5,\"req\":{\"op\":\"launch\"}}\n");
    assert_eq!((e.id, code(&e)), (5, ErrCode::UnknownRequest));
    let e = exchange(&mut s, b"\x00\xff\xfe\x01binary\x7f\n");
    assert_eq!(code(&e), ErrCode::BadRequest);
    let e = exchange(&mut s, b"{\"v\":1,\"id\":-1,\"req\":{\"op\":\"clear\"}}\n");
    assert_eq!(code(&e), ErrCode::BadRequest);
    // Blank lines are ignored; CRLF is accepted; then a valid request works.
    let e = exchange(
        &mut s,
        b"\n\r\n   \n{\"v\":1,\"id\":6,\"req\":{\"op\":\"get_timeouts\"}}\r\n",
    );
    assert_eq!(e.id, 6);
    assert!(matches!(e.ok, Some(Response::Timeouts(_))), "{e:?}");
    // Pipelined requests are answered in order.
    s.write_all(b"{\"v\":1,\"id\":7,\"req\":{\"op\":\"version\"}}\n{\"v\":1,\"id\":8,\"req\":{\"op\":\"drops\"}}\n")
        .unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    for want in [7, 8] {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let env: ResponseEnvelope = serde_json::from_str(&line).unwrap();
        assert_eq!(env.id, want);
        assert!(env.ok.is_some());
    }
    srv.shutdown().unwrap();
}

#[test]
fn oversized_line_is_refused_and_closed() {
    let srv = start_with(|c| c.max_request = 4096);
    let mut s = connect(&srv.path);
    // No newline at all: the server must not buffer forever.
    let big = vec![b'a'; 64 * 1024];
    let _ = s.write_all(&big);
    let mut rest = String::new();
    let _ = s.read_to_string(&mut rest);
    let first = rest.lines().next().unwrap();
    let env: ResponseEnvelope = serde_json::from_str(first).unwrap();
    assert_eq!(code(&env), ErrCode::TooLarge);
    assert_eq!(rest.lines().count(), 1, "connection closed after the error");
    // Exactly at the limit is fine.
    let mut s = connect(&srv.path);
    let mut line = br#"{"v":1,"id":9,"req":{"op":"version"}}"#.to_vec();
    line.resize(4096, b' ');
    line.push(b'\n');
    let e = exchange(&mut s, &line);
    assert_eq!(e.id, 9);
    assert!(e.ok.is_some());
    srv.shutdown().unwrap();
}

#[test]
fn half_open_clients_time_out() {
    let srv = start_with(|c| c.idle_timeout = Duration::from_millis(500));
    let mut idle = connect(&srv.path);
    let t0 = Instant::now();
    let mut buf = [0u8; 16];
    assert_eq!(
        idle.read(&mut buf).unwrap(),
        0,
        "server closes an idle client"
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
    // A client that sends half a line and stalls is closed too.
    let mut stall = connect(&srv.path);
    stall.write_all(b"{\"v\":1,").unwrap();
    assert_eq!(stall.read(&mut buf).unwrap(), 0);
    version_works(&srv.path);
    srv.shutdown().unwrap();
}

#[test]
fn client_cap_answers_busy() {
    let srv = start_with(|c| c.max_clients = 4);
    let held: Vec<UnixStream> = (0..4).map(|_| connect(&srv.path)).collect();
    // Make sure all four are accepted before the fifth arrives.
    for mut h in held.iter().map(|h| h.try_clone().unwrap()) {
        let e = exchange(&mut h, b"{\"v\":1,\"id\":1,\"req\":{\"op\":\"version\"}}\n");
        assert!(e.ok.is_some());
    }
    let mut extra = connect(&srv.path);
    let mut line = String::new();
    BufReader::new(&mut extra).read_line(&mut line).unwrap();
    let env: ResponseEnvelope = serde_json::from_str(&line).unwrap();
    assert_eq!(code(&env), ErrCode::Busy);
    drop(held);
    // Slots free up once the held clients go away.
    let t0 = Instant::now();
    loop {
        // while the server still counts the held clients it answers busy
        // and closes at once, maybe before the request is written (EPIPE)
        let mut s = connect(&srv.path);
        let e = try_exchange(&mut s, b"{\"v\":1,\"id\":2,\"req\":{\"op\":\"version\"}}\n");
        if e.is_some_and(|e| e.ok.is_some()) {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "slots never freed");
        thread::sleep(Duration::from_millis(50));
    }
    srv.shutdown().unwrap();
}

#[test]
fn concurrent_abuse_then_normal_service() {
    let srv = start_with(|c| {
        c.max_request = 8192;
        c.idle_timeout = Duration::from_secs(1);
    });
    let path = srv.path.clone();
    let mut threads = Vec::new();
    for i in 0..24 {
        let p = path.clone();
        threads.push(thread::spawn(move || {
            let mut s = match UnixStream::connect(&p) {
                Ok(s) => s,
                Err(_) => return,
            };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
            let payload: Vec<u8> = match i % 6 {
                0 => b"garbage garbage\n".repeat(50),
                1 => b"{\"v\":1,\"id\":1,\"req\":{\"op\":\"add_serv".to_vec(),
                2 => vec![b'x'; 100_000],
                3 => Vec::new(),
                4 => (0..4096u32)
                    .map(|n| (n.wrapping_mul(2654435761) >> 24) as u8)
                    .collect(),
                _ => {
                    b"{\"v\":1,\"id\":1,\"req\":{\"op\":\"add_service\",\"service\":{\"key\":7}}}\n"
                        .repeat(20)
                }
            };
            let _ = s.write_all(&payload);
            if i % 6 == 3 {
                thread::sleep(Duration::from_millis(300));
                return;
            }
            if i % 2 == 0 {
                let _ = s.shutdown(std::net::Shutdown::Write);
            }
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
            // Every line the server sent is a valid error envelope.
            for line in sink.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let env: ResponseEnvelope = serde_json::from_slice(line).unwrap();
                assert!(env.err.is_some());
            }
        }));
    }
    // The panicking handler path, concurrently with the rest.
    let mut c = Client::connect(&path).unwrap();
    let e = c
        .call(Request::AddrAdd {
            port: 999,
            addr: "10.0.0.1".parse().unwrap(),
            prefix_len: 24,
        })
        .unwrap_err();
    assert!(e.to_string().contains("internal error"), "{e}");
    for t in threads {
        t.join().unwrap();
    }
    assert!(
        !srv.thread.as_ref().unwrap().is_finished(),
        "server thread alive"
    );
    version_works(&path);
    // A full mutation and listing still behave.
    let out = std::process::Command::new(concat!(env!("CARGO_BIN_EXE_dirigo"), "adm"))
        .args(["--socket", path.to_str().unwrap(), "-A", "-t", "1.1.1.1:80"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = std::process::Command::new(concat!(env!("CARGO_BIN_EXE_dirigo"), "adm"))
        .args(["--socket", path.to_str().unwrap(), "-S", "-n"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "-A -t 1.1.1.1:80 -s wlc\n"
    );
    srv.shutdown().unwrap();
}

#[test]
fn bind_mode_stale_socket_and_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/ctl.sock");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A stale socket file (its listener is gone) is replaced.
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let server = Server::bind(ServerConfig::new(&path), Arc::new(Mock::default())).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // A live server is not clobbered.
    let e = Server::bind(ServerConfig::new(&path), Arc::new(Mock::default()))
        .err()
        .unwrap();
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
    // A regular file in the way is not removed.
    let f = dir.path().join("file");
    std::fs::write(&f, b"x").unwrap();
    assert!(Server::bind(ServerConfig::new(&f), Arc::new(Mock::default())).is_err());
    assert!(f.exists());

    // Mode and group as configured (our own group: no privilege needed).
    use std::os::unix::fs::MetadataExt;
    let gid = std::fs::metadata(dir.path()).unwrap().gid();
    let gpath = dir.path().join("g/ctl.sock");
    let mut cfg = ServerConfig::new(&gpath);
    cfg.mode = 0o660;
    cfg.group = Some(gid);
    let g = Server::bind(cfg, Arc::new(Mock::default())).unwrap();
    let md = std::fs::metadata(&gpath).unwrap();
    assert_eq!((md.permissions().mode() & 0o777, md.gid()), (0o660, gid));
    let leftovers: Vec<_> = std::fs::read_dir(gpath.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary socket left behind");
    drop(g);

    let stop = server.stop_handle();
    let t = thread::spawn(move || server.run());
    // A connected, silent client must not delay shutdown much.
    let _idle = connect(&path);
    version_works(&path);
    let t0 = Instant::now();
    stop.stop();
    t.join().unwrap().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(!path.exists(), "socket removed on shutdown");
}
