//! A terminal program under test in tmux: a detached session of a given
//! size on a tmux server of its own (`tmux -L NAME`, no user config), its
//! screen read with `capture-pane`, keys typed with `send-keys`. Dropping
//! it ends that server (and whatever still runs in it).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether tmux can run here; in CI its absence is a failure (it is in
/// scripts/install-deps.sh), elsewhere a printed skip.
pub fn available(what: &str) -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what}: cannot run in CI: tmux is not installed (scripts/install-deps.sh)");
    }
    eprintln!("SKIP {what}: tmux is not installed");
    false
}

/// One session running one command.
pub struct Tmux {
    /// The tmux server's socket name (`-L`) and the session's name.
    pub name: String,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.name, "-f", "/dev/null"])
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run tmux")
    }

    /// Start `shell_cmd` (run by the shell) in a `w`x`h` session `name`
    /// with `env` added to its environment.
    pub fn start(name: &str, w: u16, h: u16, shell_cmd: &str, env: &[(&str, &str)]) -> Tmux {
        let t = Tmux {
            name: name.to_string(),
        };
        // a server left by an aborted run of the same test
        let _ = t.run(&["kill-server"]);
        let mut c = t.cmd();
        c.args(["new-session", "-d", "-s", name])
            .args(["-x", &w.to_string(), "-y", &h.to_string()])
            .arg(shell_cmd);
        // the first command starts the server: the session inherits this
        // environment
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().expect("tmux new-session");
        assert!(
            o.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        t
    }

    /// The screen now (one line per row, trailing blanks removed by tmux).
    pub fn capture(&self) -> String {
        let o = self.run(&["capture-pane", "-p", "-t", &self.name]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Type `keys` (tmux key names: `q`, `Escape`, `C-c`).
    pub fn send(&self, keys: &str) {
        let o = self.run(&["send-keys", "-t", &self.name, keys]);
        assert!(
            o.status.success(),
            "tmux send-keys {keys}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// Whether the session still exists (its program has not exited).
    pub fn alive(&self) -> bool {
        self.run(&["has-session", "-t", &self.name])
            .status
            .success()
    }

    /// Capture until `f` holds for the screen (then return it), or panic
    /// after `secs` with the last screen.
    pub fn wait_screen(&self, what: &str, secs: u64, f: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.capture();
            if f(&s) {
                return s;
            }
            assert!(
                Instant::now() < end,
                "timeout waiting for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Wait until the program exited (the pane closed), or panic after
    /// `secs`.
    pub fn wait_exit(&self, secs: u64) {
        let end = Instant::now() + Duration::from_secs(secs);
        while self.alive() {
            assert!(
                Instant::now() < end,
                "the program did not exit in {secs} s; the screen:\n{}",
                self.capture()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
