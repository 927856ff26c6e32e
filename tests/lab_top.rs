//! `dirigoctl top` on a real dirigo in the netns lab (DR): with HTTP
//! traffic flowing through the VIP (a rate-limited download and a loop of
//! short connections), the live view under tmux at 80x24 shows the lab's
//! services, their real servers and non-zero rates, and quits on q; the
//! `--once` frame's packet rate agrees with `dirigoadm -L -n --stats`
//! read around it. Needs root, hugepages and tmux (skips outside CI,
//! fails in CI).

mod common;
mod lab_common;

use common::tmux::{self, Tmux};
use lab_common::checks::*;
use lab_common::{Lab, LabSpec, SERIAL, VIP};
use std::process::Command;
use std::time::Duration;

/// A number as top prints it (`950`, `9.5K`, `1.2M`); `None` for `-`.
fn unhuman(s: &str) -> Option<f64> {
    let (num, mul) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        'T' => (&s[..s.len() - 1], 1e12),
        _ => (s, 1.0),
    };
    num.parse::<f64>().ok().map(|v| v * mul)
}

/// The columns of the first line starting with `prefix`.
fn columns<'a>(screen: &'a str, prefix: &str) -> Option<Vec<&'a str>> {
    screen
        .lines()
        .find(|l| l.starts_with(prefix))
        .map(|l| l.split_whitespace().collect())
}

/// The TCP service's line: (CPS, InPPS), when both are non-zero rates.
fn tcp_rates(screen: &str) -> Option<(f64, f64)> {
    let c = columns(screen, &format!("TCP  {VIP}:80 rr"))?;
    // TCP, VIP:80, rr, Active, Inact, CPS, InPPS, OutPPS, InBPS, OutBPS
    let cps = unhuman(c.get(5)?)?;
    let inpps = unhuman(c.get(6)?)?;
    (cps > 0.0 && inpps > 0.0).then_some((cps, inpps))
}

/// The TCP service's InPkts counter (`dirigoadm -L -n --stats --exact`).
fn tcp_inpkts(lab: &Lab) -> u64 {
    let out = lab.adm(&["-L", "-n", "--stats", "--exact"]);
    let c = columns(&out, &format!("TCP  {VIP}:80")).unwrap_or_else(|| panic!("{out}"));
    c[3].parse().unwrap_or_else(|_| panic!("{out}"))
}

#[test]
fn lab_top() {
    if !common::privileged("lab top") || !tmux::available("lab top") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::start(&LabSpec {
        name: "lab_top",
        prefix: "dgy",
        mode: "dr",
        method: "dr",
        cores: &["-l", "0-1"],
        nrs: 3,
        env: &[],
    });
    // every real server resolved and answering
    let first = conns(&lab, 6, None);
    assert_eq!(first.len(), 6);
    // steady packets (a download at 1 MB/s: its ACKs come through dirigo
    // in DR) and new connections (about 15 a second), bounded in time
    let dl = spawn_download(&lab, 24 << 20, "top", Some("1M"));
    let url = format!("http://{VIP}/whoami");
    let script = format!(
        "i=0; while [ $i -lt 400 ]; do curl -s -o /dev/null -m 2 {url}; i=$((i+1)); sleep 0.05; done"
    );
    let mut short = lab.client_spawn(&["sh", "-c", &script]);
    let top = format!("{} --socket {} top", crate::common::DIRIGOCTL, lab.sock);
    let t = Tmux::start("dgy-top", 80, 24, &top, &[]);
    std::thread::sleep(Duration::from_secs(2));
    let screen = t.wait_screen("non-zero rates on the TCP service", 15, |s| {
        tcp_rates(s).is_some()
    });
    eprintln!("dirigoctl top at 80x24:\n{screen}");
    assert!(screen.lines().all(|l| l.chars().count() <= 80), "{screen}");
    assert!(screen.contains(&format!("UDP  {VIP}:5353 rr")), "{screen}");
    // the real servers of both services, and traffic on at least one
    let mut busy_rs = 0;
    for n in 1..=3 {
        let rip = lab_common::rip(n);
        assert!(screen.contains(&format!("  -> {rip}:80")), "{screen}");
        assert!(screen.contains(&format!("  -> {rip}:5353")), "{screen}");
        let c = columns(&screen, &format!("  -> {rip}:80")).unwrap();
        // ->, RIP:80, Route, 1, Active, Inact, CPS, InPPS, ...
        assert_eq!(&c[2..4], ["Route", "1"], "{screen}");
        if unhuman(c[7]).unwrap_or(0.0) > 0.0 {
            busy_rs += 1;
        }
    }
    assert!(busy_rs >= 1, "no real server with packets:\n{screen}");
    // the worker: its table and a receive rate
    let w = columns(&screen, "lcore ").unwrap_or_else(|| panic!("{screen}"));
    // lcore, N, Conns, Size, Fill, RxPPS, ...
    assert_eq!(w[3], "65536", "{screen}");
    assert!(unhuman(w[5]).unwrap_or(0.0) > 0.0, "{screen}");
    // Busy: the worker loop's measured share (a percentage, not "-")
    assert!(
        w.get(9).is_some_and(|b| b.ends_with('%')),
        "no busy ratio for the worker:\n{screen}"
    );
    assert!(
        screen.lines().nth(1).unwrap().starts_with("act "),
        "{screen}"
    );
    // q quits: the pane closes
    t.send("q");
    t.wait_exit(5);
    // --once over 2 s, inside two readings of the counters: it cannot
    // count more packets than they did, and with steady traffic not much
    // fewer
    let before = tcp_inpkts(&lab);
    let o = Command::new(crate::common::DIRIGOCTL)
        .args(["--socket", &lab.sock, "top", "--once", "-d", "2"])
        .output()
        .unwrap();
    let after = tcp_inpkts(&lab);
    let once = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "top --once: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("dirigoctl top --once -d 2:\n{once}");
    let (_, inpps) = tcp_rates(&once).unwrap_or_else(|| panic!("no rates:\n{once}"));
    let counted = (after - before) as f64;
    // top prints 2 significant digits: up to 5% off
    assert!(
        inpps * 2.0 <= counted * 1.06 + 1.0,
        "top: {inpps} pkt/s over 2 s, the counters grew {counted}"
    );
    assert!(
        inpps * 2.0 >= counted * 0.5,
        "top: {inpps} pkt/s over 2 s, the counters grew {counted}"
    );
    drop(t);
    let _ = short.kill();
    let _ = short.wait();
    let mut dl = dl;
    let _ = dl.kill();
    let _ = dl.wait();
    lab.finish();
}
