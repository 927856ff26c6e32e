//! systemd's readiness protocol (`sd_notify`, `Type=notify`): `READY=1`
//! once the control socket serves, `STOPPING=1` when a signal stops the
//! daemon. Without `$NOTIFY_SOCKET` (not started by systemd) nothing is
//! sent; a failure to send is printed once and otherwise ignored.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Send `state` ("READY=1", ...) to systemd, if it is listening.
pub fn notify(state: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let bytes = path.as_bytes();
    let addr = match bytes.strip_prefix(b"@") {
        Some(name) => SocketAddr::from_abstract_name(name),
        None => SocketAddr::from_pathname(&path),
    };
    let sent = addr.and_then(|a| UnixDatagram::unbound()?.send_to_addr(state.as_bytes(), &a));
    if let Err(e) = sent {
        eprintln!(
            "dirigo: cannot notify systemd ({}) of {state}: {e}",
            path.to_string_lossy()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::notify;
    use std::os::unix::net::UnixDatagram;

    /// What systemd would receive, on a socket of our own. (The variable
    /// is set for this process: the only test here that reads it.)
    #[test]
    fn sends_the_state_to_notify_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let rx = UnixDatagram::bind(&path).unwrap();
        std::env::set_var("NOTIFY_SOCKET", &path);
        notify("READY=1");
        std::env::remove_var("NOTIFY_SOCKET");
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1");
        // without the variable: nothing, no error
        notify("STOPPING=1");
    }
}
