//! One check of one job: the probes (TCP, HTTP/HTTPS, UDP, ICMP echo,
//! exec), through kernel sockets opened by the calling thread (so in its
//! network namespace), each under the check's timeout.
//!
//! A [`Prober`] holds what the checks of one engine share: the TLS client
//! configuration and one ICMP socket per source address. [`run`] is a check
//! with a prober of its own.

use super::net::{connect, connect_error, io_text};
use super::state::Outcome;
use dirigo_config::check::{Job, Probe};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tokio::net::UdpSocket;

/// How much of an HTTP body is searched for `expect` (the rest is not read).
pub const BODY_LIMIT: usize = 64 * 1024;

/// The largest UDP answer read.
const UDP_ANSWER: usize = 64 * 1024;

/// ICMP type echo reply.
const ECHO_REPLY: u8 = 0;

/// The payload of an ICMP echo.
const PING_PAYLOAD: &[u8] = b"dirigo health check";

/// An ICMP socket's identity: IPv6 or not, and the source it is bound to.
type PingKey = (bool, Option<IpAddr>);

/// What the checks of one engine share; cheap to create, used from any
/// task of the runtime that runs them (the ICMP sockets' receivers are
/// tasks of that runtime).
pub struct Prober {
    tls: OnceLock<Result<Arc<ClientConfig>, String>>,
    /// One ICMP socket per source address (`None`: any), opened at the
    /// first ping from it.
    ping: Mutex<HashMap<PingKey, Arc<surge_ping::Client>>>,
    /// Echo sequence numbers, one counter for all: a reply is matched by
    /// (peer, sequence) on an unprivileged ICMP socket, where the kernel
    /// chooses the identifier, so two jobs probing one address must never
    /// wait on the same number.
    seq: AtomicU16,
    /// The echo identifier on a raw ICMP socket.
    ident: u16,
}

impl Default for Prober {
    fn default() -> Prober {
        Prober::new()
    }
}

/// One check of `job` with a prober of its own (see [`Prober::run`]).
pub async fn run(job: &Job) -> Outcome {
    Prober::new().run(job).await
}

impl Prober {
    /// A prober with nothing opened yet.
    pub fn new() -> Prober {
        Prober {
            tls: OnceLock::new(),
            ping: Mutex::new(HashMap::new()),
            seq: AtomicU16::new(0),
            ident: std::process::id() as u16,
        }
    }

    /// Run one check of `job` under `job.spec.timeout`: whether it passed,
    /// how long it took and what was seen. A check that runs out of time is
    /// abandoned (its socket closed, its process group killed) and fails
    /// with "timeout".
    pub async fn run(&self, job: &Job) -> Outcome {
        let start = Instant::now();
        let result = tokio::time::timeout(job.spec.timeout, self.probe(job)).await;
        let latency_us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let (ok, detail, weight) = match result {
            Ok(Ok((detail, weight))) => (true, detail, weight),
            Ok(Err(detail)) => (false, detail, None),
            Err(_) => (false, "timeout".to_string(), None),
        };
        Outcome {
            ok,
            latency_us,
            detail,
            weight,
        }
    }

    /// The probe itself: `Ok((detail, weight change))` when it passed,
    /// `Err(detail)` when not.
    async fn probe(&self, job: &Job) -> Result<(String, Option<i64>), String> {
        match &job.spec.probe {
            Probe::File {
                path,
                factor,
                reverse,
            } => {
                // off the checker's thread: a file on a hung mount must
                // not stall the other checks (the timeout abandons it)
                let (path, factor, reverse) = (path.clone(), *factor, *reverse);
                tokio::task::spawn_blocking(move || super::file::probe(&path, factor, reverse))
                    .await
                    .map_err(|e| format!("file check: {e}"))?
            }
            _ => self.probe_server(job).await.map(|d| (d, None)),
        }
    }

    /// A probe of the server: `Ok(detail)` when it passed, `Err(detail)`
    /// when not.
    async fn probe_server(&self, job: &Job) -> Result<String, String> {
        match &job.spec.probe {
            Probe::Tcp => {
                // closed with a reset when dropped (see `connect`)
                let _stream = connect(job).await?;
                Ok("connected".to_string())
            }
            Probe::Http {
                path,
                host,
                status,
                expect,
                tls,
            } => {
                let stream = connect(job).await?;
                let host_header = host.clone().unwrap_or_else(|| job.target.to_string());
                let want = Want {
                    path,
                    host: &host_header,
                    status,
                    expect: expect.as_deref(),
                };
                if *tls {
                    let config = self.tls_config()?;
                    let name = server_name(host.as_deref(), job.target.ip());
                    let stream = tokio_rustls::TlsConnector::from(config)
                        .connect(name, stream)
                        .await
                        .map_err(|e| format!("tls: {}", io_text(&e)))?;
                    http_get(TokioIo::new(stream), &want).await
                } else {
                    http_get(TokioIo::new(stream), &want).await
                }
            }
            Probe::Udp { payload, expect } => udp(job, payload, expect.as_deref()).await,
            Probe::Ping => self.ping(job).await,
            Probe::Exec { command } => exec(job, command).await,
            Probe::Smtp { helo } => super::smtp::probe(job, helo).await,
            Probe::Dns {
                qtype,
                name,
                expect,
            } => super::dns::probe(job.target, job.bind, *qtype, name, expect.as_deref()).await,
            Probe::File { .. } => Err("not a probe of the server".into()),
        }
    }

    /// The TLS client configuration, made at the first HTTPS check.
    fn tls_config(&self) -> Result<Arc<ClientConfig>, String> {
        self.tls.get_or_init(tls_config).clone()
    }

    /// One ICMP echo to the target's address.
    async fn ping(&self, job: &Job) -> Result<String, String> {
        let v6 = job.target.is_ipv6();
        let client = self.ping_client(v6, job.bind.map(|b| b.ip()))?;
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut pinger = client
            .pinger(job.target.ip(), surge_ping::PingIdentifier(self.ident))
            .await;
        pinger.timeout(job.spec.timeout);
        match pinger
            .ping(surge_ping::PingSequence(seq), PING_PAYLOAD)
            .await
        {
            Ok((surge_ping::IcmpPacket::V4(p), rtt)) if p.get_icmp_type().0 == ECHO_REPLY => {
                Ok(format!("echo reply in {} us", rtt.as_micros()))
            }
            // an ICMP error quoting our echo (destination unreachable, time
            // exceeded) comes back the same way
            Ok((surge_ping::IcmpPacket::V4(p), _)) => Err(format!(
                "icmp type {} code {}",
                p.get_icmp_type().0,
                p.get_icmp_code().0
            )),
            // ICMPv6 echo reply is type 129
            Ok((surge_ping::IcmpPacket::V6(p), rtt)) if p.get_icmpv6_type().0 == 129 => {
                Ok(format!("echo reply in {} us", rtt.as_micros()))
            }
            Ok((surge_ping::IcmpPacket::V6(p), _)) => Err(format!(
                "icmpv6 type {} code {}",
                p.get_icmpv6_type().0,
                p.get_icmpv6_code().0
            )),
            Err(surge_ping::SurgeError::Timeout { .. }) => Err("timeout".to_string()),
            Err(surge_ping::SurgeError::IOError(e)) => Err(format!("ping: {}", io_text(&e))),
            Err(e) => Err(format!("ping: {e}")),
        }
    }

    /// The ICMP socket for source address `from`, opened when missing (an
    /// unprivileged ICMP socket where `net.ipv4.ping_group_range` allows,
    /// else a raw one). A failure is not remembered: the next ping tries
    /// again.
    fn ping_client(
        &self,
        v6: bool,
        from: Option<IpAddr>,
    ) -> Result<Arc<surge_ping::Client>, String> {
        let mut clients = self.ping.lock().unwrap_or_else(|p| p.into_inner());
        let key = (v6, from);
        if let Some(c) = clients.get(&key) {
            return Ok(c.clone());
        }
        let kind = if v6 {
            surge_ping::ICMP::V6
        } else {
            surge_ping::ICMP::V4
        };
        let mut config = surge_ping::Config::builder().kind(kind);
        if let Some(ip) = from {
            config = config.bind(SocketAddr::new(ip, 0));
        }
        // Held in an Arc and never cloned itself: dropping any clone of a
        // surge_ping::Client marks all of them destroyed.
        let client = Arc::new(
            surge_ping::Client::new(&config.build())
                .map_err(|e| format!("ping: cannot open an ICMP socket: {}", io_text(&e)))?,
        );
        clients.insert(key, client.clone());
        Ok(client)
    }
}

/// What an HTTP check asks and accepts.
struct Want<'a> {
    path: &'a str,
    host: &'a str,
    status: &'a [(u16, u16)],
    expect: Option<&'a str>,
}

/// GET `want.path` over `io` (HTTP/1.1, `Connection: close`) and judge the
/// answer: its status in a range, and `expect` in the first
/// [`BODY_LIMIT`] bytes of its body.
async fn http_get<T>(io: T, want: &Want<'_>) -> Result<String, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let request = hyper::Request::get(want.path)
        .header(hyper::header::HOST, want.host)
        .header(hyper::header::CONNECTION, "close")
        .header(hyper::header::USER_AGENT, "dirigo-health")
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("invalid request: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("http: {e}"))?;
    let exchange = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("http: {e}"))?;
        let code = response.status().as_u16();
        let accepted = if want.status.is_empty() {
            (200..=299).contains(&code)
        } else {
            want.status
                .iter()
                .any(|&(lo, hi)| (lo..=hi).contains(&code))
        };
        if !accepted {
            return Err(format!("status {code}"));
        }
        let Some(expect) = want.expect else {
            return Ok(format!("status {code}"));
        };
        let mut body = response.into_body();
        let mut seen = Vec::new();
        while seen.len() < BODY_LIMIT {
            match body.frame().await {
                None => break,
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        seen.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => return Err(format!("status {code}, body: {e}")),
            }
        }
        seen.truncate(BODY_LIMIT);
        if contains(&seen, expect.as_bytes()) {
            Ok(format!("status {code}, body has {expect:?}"))
        } else {
            Err(format!("status {code}, body lacks {expect:?}"))
        }
    };
    // The connection is driven beside the exchange, in this task, so that
    // the timeout abandons both; when it ends first (the server closed),
    // the exchange still gets what was read.
    let mut conn = std::pin::pin!(conn);
    let mut exchange = std::pin::pin!(exchange);
    let mut conn_done = false;
    loop {
        tokio::select! {
            result = &mut exchange => return result,
            _ = &mut conn, if !conn_done => conn_done = true,
        }
    }
}

/// Whether `needle` occurs in `haystack` (an empty needle always does).
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// The TLS server name: `host` without a port when it is a DNS name (sent
/// as SNI), else the address (no SNI).
fn server_name(host: Option<&str>, ip: IpAddr) -> ServerName<'static> {
    let name = host.map(|h| match h.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => h,
    });
    name.and_then(|n| ServerName::try_from(n).ok())
        .map(|n| n.to_owned())
        .unwrap_or(ServerName::IpAddress(ip.into()))
}

/// HTTPS as keepalived's SSL_GET: any certificate is taken (the handshake's
/// signatures are still checked against it).
fn tls_config() -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("tls: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A certificate verifier that takes every certificate.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Send the payload from a socket of our own (bound if asked) and wait for
/// an answer (containing `expect`).
async fn udp(job: &Job, payload: &[u8], expect: Option<&str>) -> Result<String, String> {
    let local = job.bind.unwrap_or(match job.target {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    });
    let socket = UdpSocket::bind(local)
        .await
        .map_err(|e| format!("cannot bind {local}: {}", io_text(&e)))?;
    // Connected: only the target's answers are read, and a port
    // unreachable from it fails the check at once ("refused").
    socket
        .connect(job.target)
        .await
        .map_err(|e| format!("cannot connect: {}", io_text(&e)))?;
    socket
        .send(payload)
        .await
        .map_err(|e| format!("send: {}", connect_error(&e)))?;
    let mut answer = vec![0u8; UDP_ANSWER];
    let n = socket
        .recv(&mut answer)
        .await
        .map_err(|e| connect_error(&e))?;
    match expect {
        Some(e) if !contains(&answer[..n], e.as_bytes()) => {
            Err(format!("answer of {n} bytes lacks {e:?}"))
        }
        _ => Ok(format!("answer of {n} bytes")),
    }
}

/// `{rip}`, `{rport}`, `{vip}` and `{vport}` in `arg` replaced by the job's
/// values.
pub fn substitute(arg: &str, job: &Job) -> String {
    arg.replace("{rip}", &job.rs.ip().to_string())
        .replace("{rport}", &job.rs.port().to_string())
        .replace("{vip}", &job.vip.ip().to_string())
        .replace("{vport}", &job.vip.port().to_string())
}

/// Run the command (no shell) in a process group of its own, its output
/// discarded; passes when it exits 0. When the check is abandoned (timeout,
/// job removed) the whole group is killed.
async fn exec(job: &Job, command: &[String]) -> Result<String, String> {
    let args: Vec<String> = command.iter().map(|a| substitute(a, job)).collect();
    let Some((program, rest)) = args.split_first() else {
        return Err("no command".to_string());
    };
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => "not found".to_string(),
            _ => format!("cannot run: {}", io_text(&e)),
        })?;
    let mut group = KillGroup(child.id());
    let status = child.wait().await;
    group.0 = None;
    let status = status.map_err(|e| format!("wait: {}", io_text(&e)))?;
    match (status.code(), status.signal()) {
        (Some(0), _) => Ok("exit 0".to_string()),
        (Some(code), _) => Err(format!("exit {code}")),
        (None, Some(signal)) => Err(format!("signal {signal}")),
        (None, None) => Err(format!("{status}")),
    }
}

/// Kills a process group when dropped, unless disarmed (`.0 = None`) after
/// its leader was waited for.
struct KillGroup(Option<u32>);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
