//! What the probes that talk to a server share: a TCP connection that
//! ends with a reset, and errors as the system's text.

use dirigo_config::check::Job;
use std::io;
use std::net::SocketAddr;
use tokio::net::{TcpSocket, TcpStream};

/// A TCP connection to the job's target, from its bind address if any.
/// It ends with a reset (zero linger) whoever closes it: a check that
/// closed first would leave a TIME_WAIT entry per check (60 s each), and a
/// via-VIP check, whose client port is fixed (dirigo pins it to the
/// server), could not bind it again until it expired.
pub async fn connect(job: &Job) -> Result<TcpStream, String> {
    let socket = match job.target {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(|e| format!("socket: {}", io_text(&e)))?;
    if let Some(bind) = job.bind {
        if bind.port() != 0 {
            let _ = socket.set_reuseaddr(true);
        }
        socket
            .bind(bind)
            .map_err(|e| format!("cannot bind {bind}: {}", io_text(&e)))?;
    }
    let stream = socket
        .connect(job.target)
        .await
        .map_err(|e| connect_error(&e))?;
    let _ = stream.set_zero_linger();
    Ok(stream)
}

/// "refused" for a refused connection, else the system's text.
pub fn connect_error(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::ConnectionRefused {
        "refused".to_string()
    } else {
        io_text(e)
    }
}

/// An `io::Error` as the system's text alone (`No route to host`, not
/// `No route to host (os error 113)`).
pub fn io_text(e: &io::Error) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map(str::to_string)
            .unwrap_or(text),
        None => text,
    }
}
