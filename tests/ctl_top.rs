//! `dirigoctl top`, the real binary, against the control server with a
//! mock handler: `--once` frames and its errors; the live view under tmux
//! at 80x24 losing its daemon ("disconnected, retrying"), finding it
//! again, quitting on q and Ctrl-C, and the terminal given back in cooked
//! mode. Needs tmux for the live part (in CI it must be there).

mod common;
mod ctl_common;

use common::tmux::{self, Tmux};
use common::Out;
use dirigo::ctl::server::{Server, ServerConfig, StopHandle};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

fn ctl(sock: &Path, args: &[&str]) -> Out {
    let mut c = Command::new(crate::common::DIRIGOCTL);
    c.arg("--socket")
        .arg(sock)
        .args(args)
        .env_remove("NO_COLOR");
    common::run_with_input(&mut c, "")
}

/// The mock control server at `path` with one TCP service of two real
/// servers (so the listing has lines to show).
struct MockAt {
    stop: StopHandle,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl MockAt {
    fn start(path: &Path) -> MockAt {
        let mock = Arc::new(ctl_common::Mock::default());
        let server = Server::bind(ServerConfig::new(path), mock).unwrap();
        let stop = server.stop_handle();
        let thread = Some(std::thread::spawn(move || server.run()));
        let m = MockAt { stop, thread };
        // the service, through the real client binary
        let adm = |args: &str| {
            let mut c = Command::new(crate::common::DIRIGOADM);
            c.arg("--socket").arg(path).args(args.split_whitespace());
            let o = common::run_with_input(&mut c, "");
            assert_eq!(o.code, 0, "dirigoadm {args}: {}", o.stderr);
        };
        adm("-A -t 10.0.0.100:80 -s rr");
        adm("-a -t 10.0.0.100:80 -r 172.16.0.11:80 -g -w 2");
        adm("-a -t 10.0.0.100:80 -r 172.16.0.12:80 -g -w 3");
        m
    }

    fn stop(mut self) {
        self.stop.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MockAt {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn sock_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("ctl.sock")
}

#[test]
fn once_prints_one_plain_frame() {
    let dir = tempfile::tempdir().unwrap();
    let sock = sock_in(&dir);
    let _m = MockAt::start(&sock);
    let o = ctl(&sock, &["top", "--once", "-d", "0.2"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(
        lines[0].starts_with("dirigoctl top  ") && lines[0].contains("every 0.2s"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains('\u{1b}'), "escape sequences in --once");
    // the mock's counters do not move: counts shown, rates zero
    let svc = lines
        .iter()
        .find(|l| l.starts_with("TCP  10.0.0.100:80 rr"))
        .unwrap_or_else(|| panic!("no service line:\n{}", o.stdout));
    let cols: Vec<&str> = svc.split_whitespace().collect();
    // active = the weights (the mock's rule), inactive 1 each
    assert_eq!(cols[3..], ["5", "2", "0", "0", "0", "0", "0"], "{svc}");
    assert!(o.stdout.contains("  -> 172.16.0.11:80"), "{}", o.stdout);
    assert!(o.stdout.contains("  -> 172.16.0.12:80"), "{}", o.stdout);
    let w = lines.iter().find(|l| l.starts_with("lcore 1")).unwrap();
    assert_eq!(
        w.split_whitespace().collect::<Vec<_>>()[2..5],
        ["2", "4096", "0.0%"]
    );
    let d = lines.iter().find(|l| l.starts_with("no_service")).unwrap();
    assert_eq!(
        d.split_whitespace().collect::<Vec<_>>(),
        ["no_service", "42", "0"]
    );
    // -n 3: three frames
    let o = ctl(&sock, &["top", "-b", "-n", "3", "-d", "0.1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout.matches("dirigoctl top  ").count(),
        3,
        "{}",
        o.stdout
    );
}

#[test]
fn once_and_bad_arguments_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let sock = sock_in(&dir);
    // no daemon
    let o = ctl(&sock, &["top", "--once"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .starts_with("dirigoctl: cannot connect to dirigo: "),
        "{}",
        o.stderr
    );
    assert_eq!(o.stdout, "");
    // the live view wants a terminal (stdout is a pipe here)
    let _m = MockAt::start(&sock);
    let o = ctl(&sock, &["top"]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("needs a terminal"), "{}", o.stderr);
    let o = ctl(&sock, &["--json", "top", "--once"]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("no JSON output"), "{}", o.stderr);
    for (args, want) in [
        (&["top", "-d", "0"][..], "bad delay '0'"),
        (&["top", "-d", "soon"], "bad delay 'soon'"),
        (&["top", "-b", "-n", "0"], "0 is not in 1.."),
        (&["top", "-n", "2"], "--once"),
    ] {
        let o = ctl(&sock, args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(want), "{args:?}: {}", o.stderr);
    }
}

#[test]
fn live_view_survives_the_daemon_and_gives_the_terminal_back() {
    if !tmux::available("dirigoctl top under tmux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = sock_in(&dir);
    let m = MockAt::start(&sock);
    let stty = dir.path().join("stty.txt");
    // after top: the terminal's modes as the shell finds them
    let cmd = format!(
        "{bin} --socket {sock} top -d 0.2; stty -a > {out}.tmp; mv {out}.tmp {out}; sleep 30",
        bin = crate::common::DIRIGOCTL,
        sock = sock.display(),
        out = stty.display(),
    );
    let name = format!("dgy-ctl-{}", std::process::id());
    let t = Tmux::start(&name, 80, 24, &cmd, &[("NO_COLOR", "1")]);
    let s = t.wait_screen("the service", 10, |s| s.contains("TCP  10.0.0.100:80 rr"));
    eprintln!("{s}");
    assert!(s.contains("  -> 172.16.0.12:80"), "{s}");
    assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");
    // the daemon goes away, then comes back
    m.stop();
    let _ = std::fs::remove_file(&sock);
    let s = t.wait_screen("the disconnected line", 10, |s| {
        s.contains("disconnected, retrying")
    });
    eprintln!("{s}");
    let _m = MockAt::start(&sock);
    t.wait_screen("the reconnection", 10, |s| {
        s.lines().nth(1).is_some_and(|l| l.starts_with("act "))
    });
    // q quits; the shell then finds its terminal in cooked mode
    t.send("q");
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while !stty.exists() {
        assert!(
            std::time::Instant::now() < end,
            "top did not exit on q:\n{}",
            t.capture()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let modes = std::fs::read_to_string(&stty).unwrap();
    let words: Vec<&str> = modes
        .split(|c: char| c.is_whitespace() || c == ';')
        .collect();
    for m in ["icanon", "echo", "isig", "icrnl", "opost"] {
        assert!(words.contains(&m), "terminal left without {m}: {modes}");
    }
    drop(t);
    // Ctrl-C quits too (raw mode turns it into a key)
    let t = Tmux::start(
        &name,
        80,
        24,
        &format!(
            "{} --socket {} top",
            crate::common::DIRIGOCTL,
            sock.display()
        ),
        &[],
    );
    t.wait_screen("the service", 10, |s| s.contains("TCP  10.0.0.100:80 rr"));
    t.send("C-c");
    t.wait_exit(5);
}
