//! The control socket server: a thread per client (capped), newline-delimited
//! JSON, bounded line size, idle timeouts, clean shutdown.

use dirigo_proto::proto::{
    parse_request_line, CtlError, ErrCode, Request, Response, ResponseEnvelope, MAX_REQUEST,
};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// What the daemon implements: answer one request.
pub trait Handler: Send + Sync + 'static {
    /// Handle `req`. Called concurrently from client threads.
    fn handle(&self, req: Request) -> Result<Response, CtlError>;
}

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Socket path.
    pub path: PathBuf,
    /// Socket file mode (default 0o600).
    pub mode: u32,
    /// Group id to give the socket (then grant the group via `mode`).
    pub group: Option<u32>,
    /// Most clients served at once; more are answered `busy` and closed.
    pub max_clients: usize,
    /// Longest request line in bytes.
    pub max_request: usize,
    /// A client that sends nothing for this long is disconnected.
    pub idle_timeout: Duration,
}

impl ServerConfig {
    /// Defaults for `path`: mode 0600, 64 clients, 1 MiB lines, 60 s idle.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ServerConfig {
            path: path.into(),
            mode: 0o600,
            group: None,
            max_clients: 64,
            max_request: MAX_REQUEST,
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// Stops a running [`Server`] from any thread.
#[derive(Clone, Debug)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// Ask the server to stop; `run` returns soon after.
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether stop was asked.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the server counts (read by the metrics endpoint).
#[derive(Debug, Default)]
pub struct ServerCounters {
    /// Requests answered (every line, well-formed or not, and clients
    /// turned away).
    pub requests: AtomicU64,
    /// Of those, answered with an error (malformed, refused, too large,
    /// busy).
    pub errors: AtomicU64,
}

impl ServerCounters {
    fn count(&self, ok: bool) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if !ok {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A bound control server.
pub struct Server {
    listener: UnixListener,
    cfg: ServerConfig,
    handler: Arc<dyn Handler>,
    stop: Arc<AtomicBool>,
    counters: Arc<ServerCounters>,
}

/// How often blocked threads look at the stop flag.
const POLL: Duration = Duration::from_millis(50);

impl Server {
    /// Bind the socket: create the parent directory, replace a stale socket
    /// (refuse if a live server answers on it), set mode and group.
    pub fn bind(cfg: ServerConfig, handler: Arc<dyn Handler>) -> io::Result<Server> {
        if let Some(dir) = cfg.path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)?;
            }
        }
        remove_stale(&cfg.path)?;
        // Bind under a temporary name, fix mode and group, then rename into
        // place: the socket never appears at its public path with the
        // umask's permissions.
        let tmp = tmp_path(&cfg.path);
        let _ = std::fs::remove_file(&tmp);
        let listener = UnixListener::bind(&tmp)?;
        let placed = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(cfg.mode))
            .and_then(|_| match cfg.group {
                Some(gid) => std::os::unix::fs::chown(&tmp, None, Some(gid)),
                None => Ok(()),
            })
            .and_then(|_| std::fs::rename(&tmp, &cfg.path));
        if let Err(e) = placed {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        listener.set_nonblocking(true)?;
        Ok(Server {
            listener,
            cfg,
            handler,
            stop: Arc::new(AtomicBool::new(false)),
            counters: Arc::default(),
        })
    }

    /// The server's request and error counts.
    pub fn counters(&self) -> Arc<ServerCounters> {
        Arc::clone(&self.counters)
    }

    /// A handle that stops [`Server::run`].
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(self.stop.clone())
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.cfg.path
    }

    /// Serve until stopped. Waits for client threads to finish (they notice
    /// the stop flag within ~50 ms), then removes the socket file.
    pub fn run(self) -> io::Result<()> {
        let active = Arc::new(AtomicUsize::new(0));
        let mut workers: Vec<thread::JoinHandle<()>> = Vec::new();
        let result = loop {
            if self.stop.load(Ordering::SeqCst) {
                break Ok(());
            }
            workers.retain(|h| !h.is_finished());
            match self.listener.accept() {
                Ok((stream, _)) => self.spawn_client(stream, &active, &mut workers),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_client(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_transient(&e) => crate::clock::nap(POLL),
                Err(e) => break Err(e),
            }
        };
        self.stop.store(true, Ordering::SeqCst);
        for h in workers {
            let _ = h.join();
        }
        let _ = std::fs::remove_file(&self.cfg.path);
        result
    }

    /// Wait until a client connects (or at most [`POLL`], to look at the
    /// stop flag): a request is answered as soon as it arrives, not after
    /// a nap between accepts.
    fn wait_client(&self) {
        use nix::poll::{poll, PollFd, PollFlags};
        use std::os::fd::AsFd;
        let mut fds = [PollFd::new(self.listener.as_fd(), PollFlags::POLLIN)];
        let ms = POLL.as_millis() as u16;
        if poll(&mut fds, ms).is_err() {
            crate::clock::nap(POLL / 2); // EINTR and the like: as before
        }
    }

    fn spawn_client(
        &self,
        stream: UnixStream,
        active: &Arc<AtomicUsize>,
        workers: &mut Vec<thread::JoinHandle<()>>,
    ) {
        let _ = stream.set_nonblocking(false);
        let write_timeout = self.cfg.idle_timeout.clamp(POLL, Duration::from_secs(10));
        let _ = stream.set_write_timeout(Some(write_timeout));
        if active.load(Ordering::SeqCst) >= self.cfg.max_clients {
            self.counters.count(false);
            let mut s = stream;
            let err = CtlError::new(ErrCode::Busy, "too many control clients");
            let _ = write_response(&mut s, &ResponseEnvelope::new(0, Err(err)));
            return;
        }
        active.fetch_add(1, Ordering::SeqCst);
        let guard = ActiveGuard(active.clone());
        let handler = self.handler.clone();
        let stop = self.stop.clone();
        let cfg = self.cfg.clone();
        let counters = self.counters.clone();
        let spawned = thread::Builder::new()
            .name("ctl-client".into())
            .spawn(move || {
                let _guard = guard;
                serve_client(stream, &*handler, &stop, &cfg, &counters);
            });
        if let Ok(h) = spawned {
            workers.push(h);
        }
    }
}

/// Decrements the active client count when a client thread ends.
struct ActiveGuard(Arc<AtomicUsize>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE)
            | Some(libc::ENFILE)
            | Some(libc::ENOBUFS)
            | Some(libc::ENOMEM)
            | Some(libc::ECONNABORTED)
    )
}

fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "ctl.sock".into());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

fn remove_stale(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.file_type().is_socket() => {
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("{}: a control server is already running", path.display()),
                ));
            }
            std::fs::remove_file(path)
        }
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{}: exists and is not a socket", path.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn write_response(s: &mut UnixStream, env: &ResponseEnvelope) -> io::Result<()> {
    let mut line = serde_json::to_vec(env).unwrap_or_else(|_| {
        br#"{"v":1,"id":0,"err":{"code":"internal","msg":"response serialization failed"}}"#
            .to_vec()
    });
    line.push(b'\n');
    s.write_all(&line)
}

/// Serve one client until EOF, error, oversize line, idle timeout or stop.
fn serve_client(
    mut stream: UnixStream,
    handler: &dyn Handler,
    stop: &AtomicBool,
    cfg: &ServerConfig,
    counters: &ServerCounters,
) {
    if stream.set_read_timeout(Some(POLL)).is_err() {
        return;
    }
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    let mut last = Instant::now();
    loop {
        // Answer every complete line already buffered.
        while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            let body = trim_line(&line[..line.len() - 1]);
            if body.is_empty() {
                continue;
            }
            let env = answer(handler, body);
            counters.count(env.err.is_none());
            if write_response(&mut stream, &env).is_err() {
                return;
            }
        }
        if buf.len() > cfg.max_request {
            let err = CtlError::new(
                ErrCode::TooLarge,
                format!("request longer than {} bytes", cfg.max_request),
            );
            counters.count(false);
            let _ = write_response(&mut stream, &ResponseEnvelope::new(0, Err(err)));
            let _ = stream.shutdown(std::net::Shutdown::Both);
            return;
        }
        if stop.load(Ordering::SeqCst) || last.elapsed() >= cfg.idle_timeout {
            return;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                last = Instant::now();
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return,
        }
    }
}

fn trim_line(b: &[u8]) -> &[u8] {
    let mut s = b;
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// Parse one line and run the handler on it; never panics.
pub fn answer(handler: &dyn Handler, line: &[u8]) -> ResponseEnvelope {
    match parse_request_line(line) {
        Err((id, e)) => ResponseEnvelope::new(id, Err(e)),
        Ok(env) => {
            let op = env.req.op_name();
            let res =
                catch_unwind(AssertUnwindSafe(|| handler.handle(env.req))).unwrap_or_else(|_| {
                    Err(CtlError::new(
                        ErrCode::Internal,
                        format!("internal error while handling {op}"),
                    ))
                });
            ResponseEnvelope::new(env.id, res)
        }
    }
}
