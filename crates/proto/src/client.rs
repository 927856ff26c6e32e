//! The client side of the control socket, used by dirigoadm and dirigoctl.

use crate::proto::{CtlError, Request, RequestEnvelope, Response, ResponseEnvelope, PROTO_VERSION};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the daemon listens when nothing else is said.
pub const DEFAULT_SOCKET: &str = "/run/dirigo/ctl.sock";

/// Environment variable naming the socket.
pub const SOCKET_ENV: &str = "DIRIGO_SOCKET";

/// Socket discovery: `--socket PATH`, else `$DIRIGO_SOCKET`, else
/// [`DEFAULT_SOCKET`].
pub fn socket_path(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    match std::env::var_os(SOCKET_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(DEFAULT_SOCKET),
    }
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Socket trouble (connect, read, write, timeout).
    #[error("control socket: {0}")]
    Io(#[from] io::Error),
    /// The server's answer was not a valid response line.
    #[error("bad response from daemon: {0}")]
    Protocol(String),
    /// The server answered with an error.
    #[error("{0}")]
    Server(CtlError),
}

/// A connection to the control socket. Calls are sequential.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl Client {
    /// Connect to `path` (30 s read/write timeouts).
    pub fn connect(path: impl AsRef<Path>) -> io::Result<Client> {
        Client::connect_timeout(path, Duration::from_secs(30))
    }

    /// Connect to `path` with `timeout` for each read and write (a client
    /// that polls, like `dirigoctl top`, gives up on a stuck daemon sooner).
    pub fn connect_timeout(path: impl AsRef<Path>, timeout: Duration) -> io::Result<Client> {
        let s = UnixStream::connect(path.as_ref())
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.as_ref().display())))?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        let writer = s.try_clone()?;
        Ok(Client {
            reader: BufReader::new(s),
            writer,
            next_id: 1,
        })
    }

    /// Send `req` and wait for its answer.
    pub fn call(&mut self, req: Request) -> Result<Response, ClientError> {
        let id = self.send(req)?;
        let resp = self.read_response()?;
        if resp.id != id && resp.id != 0 {
            return Err(ClientError::Protocol(format!(
                "response id {} does not match request id {id}",
                resp.id
            )));
        }
        resp.into_result().map_err(ClientError::Server)
    }

    /// Send `req` and return the raw response line (for `--json`).
    pub fn call_raw(&mut self, req: Request) -> Result<String, ClientError> {
        self.send(req)?;
        self.read_line()
    }

    /// Write `req` as one line with the next id; returns the id.
    fn send(&mut self, req: Request) -> Result<u64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let env = RequestEnvelope {
            v: PROTO_VERSION,
            id,
            req,
        };
        let mut line =
            serde_json::to_vec(&env).map_err(|e| ClientError::Protocol(e.to_string()))?;
        line.push(b'\n');
        self.writer.write_all(&line)?;
        Ok(id)
    }

    /// One response line, without its line end.
    fn read_line(&mut self) -> Result<String, ClientError> {
        let mut resp = String::new();
        if self.reader.read_line(&mut resp)? == 0 {
            return Err(ClientError::Protocol("connection closed".into()));
        }
        Ok(resp.trim_end().to_string())
    }

    fn read_response(&mut self) -> Result<ResponseEnvelope, ClientError> {
        let line = self.read_line()?;
        serde_json::from_str(&line).map_err(|e| ClientError::Protocol(e.to_string()))
    }
}
