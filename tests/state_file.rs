//! The state file (`[control] state_file`) against the real binaries:
//! random dirigoadm changes (services, real servers, weights, thresholds,
//! schedulers and their flags, persistence, modes, SYN proxy, timeouts),
//! dirigo killed with SIGKILL at random points,
//! restarted: `dirigoadm -S` is the last acknowledged table each time (or
//! the change in flight when the kill came, never anything else); a
//! corrupt state file refuses the start with its line number.
//!
//! `DIRIGO_STATE_SEED=N` replays a run (the seed is printed);
//! `DIRIGO_STATE_CHANGES=N` makes N changes instead of 200 (a longer soak).

mod common;

use dirigo::daemon::control::state_file;
use dirigo::daemon::control::{apply, ServiceTable};
use dirigo::lb::spec::Timeouts;
use dirigo_proto::adm::args;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// SIGKILLs (and restarts).
const REPETITIONS: usize = 20;
/// Random changes in all (`DIRIGO_STATE_CHANGES` for more).
const CHANGES: usize = 200;

/// The table and timeouts dirigo should have.
#[derive(Clone, Debug, PartialEq)]
struct Model {
    services: ServiceTable,
    timeouts: Timeouts,
}

impl Model {
    /// `argv` applied, as the daemon applies it (`None`: it refuses it).
    fn after(&self, argv: &[String]) -> Option<Model> {
        let mut full = vec!["dirigoadm".to_string()];
        full.extend(argv.iter().cloned());
        let cmd = args::parse(&full).unwrap_or_else(|e| panic!("{argv:?}: {}", e.msg));
        let mut m = self.clone();
        apply(&mut m.services, &mut m.timeouts, cmd.mutation().unwrap()).ok()?;
        Some(m)
    }

    fn save(&self) -> String {
        state_file::rules(&self.services)
    }
}

struct Setup {
    dir: std::path::PathBuf,
    toml: String,
    sock: String,
    state: std::path::PathBuf,
}

fn setup(name: &str) -> Setup {
    let dir = common::scratch(name);
    let sock = dir.join("ctl.sock").display().to_string();
    // the state file's directory does not exist yet: dirigo makes it
    let state = dir.join("lib/dirigo/rules");
    let toml = common::DaemonConfig::new(&format!("dg-{name}"), &sock)
        .vdev("net_null0,no-rx=1")
        .vdev("net_null1,no-rx=1")
        .tables(4096, 4095)
        .dataplane("synproxy", true)
        .wan_lan("net_null0", "net_null1")
        .service("tcp", "10.0.0.100:80", "rr", &[("172.16.0.50:80", "nat")])
        .toml()
        .replacen(
            &format!("socket = \"{sock}\"\n"),
            &format!(
                "socket = \"{sock}\"\nstate_file = \"{}\"\n",
                state.display()
            ),
            1,
        );
    Setup {
        dir,
        toml,
        sock,
        state,
    }
}

fn adm_cmd(sock: &str, argv: &[String]) -> Command {
    let mut c = Command::new(crate::common::DIRIGOADM);
    c.arg("--socket")
        .arg(sock)
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn adm_ok(sock: &str, args: &str) -> String {
    let argv: Vec<String> = args.split_whitespace().map(String::from).collect();
    let o = adm_cmd(sock, &argv).output().unwrap();
    assert!(
        o.status.success(),
        "dirigoadm {args}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The model of a running dirigo: its `-S` rules and timeouts.
fn observed(sock: &str) -> (String, Timeouts) {
    let rules = adm_ok(sock, "-S -n");
    let t = adm_ok(sock, "-L --timeout");
    let v: Vec<u32> = t
        .trim()
        .rsplit(':')
        .next()
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    (
        rules,
        Timeouts {
            tcp: v[0],
            tcpfin: v[1],
            udp: v[2],
        },
    )
}

const SCHEDS: &[&str] = &[
    "rr", "wrr", "lc", "wlc", "sed", "nq", "sh", "dh", "mh", "fo",
];

fn pick<'a, T>(rng: &mut StdRng, v: &'a [T]) -> &'a T {
    &v[rng.random_range(0..v.len())]
}

/// `-s SCHED [-b FLAGS] [-p T [-M MASK]] [--synproxy]`, at random
/// (`--synproxy` only on TCP).
fn service_opts(rng: &mut StdRng, tcp: bool) -> Vec<String> {
    let s = *pick(rng, SCHEDS);
    let mut v = vec!["-s".to_string(), s.to_string()];
    if (s == "sh" || s == "mh") && rng.random_bool(0.5) {
        let f = pick(rng, &["fallback", "port", "fallback,port"]);
        let flags: Vec<String> = f.split(',').map(|x| format!("{s}-{x}")).collect();
        v.extend(["-b".to_string(), flags.join(",")]);
    }
    if rng.random_bool(0.3) {
        v.extend(["-p".to_string(), rng.random_range(1..3600u32).to_string()]);
        if rng.random_bool(0.5) {
            v.extend(["-M".to_string(), "255.255.255.0".to_string()]);
        }
    }
    if tcp && rng.random_bool(0.15) {
        v.push("--synproxy".to_string());
    }
    v
}

/// `-g|-i|-m -w W [-x U -y L]`, at random (mostly `-m` for a SYN proxy
/// service, which refuses the others).
fn dest_opts(rng: &mut StdRng, synproxy: bool) -> Vec<String> {
    let method = match synproxy && rng.random_bool(0.95) {
        true => "-m",
        false => pick(rng, &["-g", "-i", "-m"]),
    };
    let mut v = vec![method.to_string()];
    let w: u32 = if rng.random_bool(0.05) {
        65535
    } else {
        rng.random_range(0..=20)
    };
    v.extend(["-w".to_string(), w.to_string()]);
    if rng.random_bool(0.2) {
        let u: u32 = rng.random_range(1..1000);
        v.extend([
            "-x".to_string(),
            u.to_string(),
            "-y".to_string(),
            rng.random_range(0..=u).to_string(),
        ]);
    }
    v
}

/// One random change, mostly valid against `m` (some refused on purpose:
/// a real server added twice, one that is not there edited or deleted).
fn change(rng: &mut StdRng, m: &Model) -> Vec<String> {
    let mut roll = rng.random_range(0..100);
    if m.services.is_empty() || roll < 12 {
        // mostly a service that is not there yet
        let taken = rng.random_bool(0.05);
        let mut keys = Vec::new();
        for proto in ["-t", "-u"] {
            for vip in 100..104 {
                for port in [80u16, 443, 53] {
                    let have = m.services.iter().any(|(s, _)| {
                        (s.key.proto == dirigo::lb::spec::Proto::Tcp) == (proto == "-t")
                            && matches!(s.key.vip, std::net::IpAddr::V4(v) if v.octets()[3] == vip)
                            && s.key.port == port
                    });
                    if have == taken {
                        keys.push((proto, format!("10.0.0.{vip}:{port}")));
                    }
                }
            }
        }
        let (proto, vip) = match keys.is_empty() {
            true => ("-t", "10.0.0.100:80".to_string()),
            false => pick(rng, &keys).clone(),
        };
        let mut v = vec!["-A".to_string(), proto.to_string(), vip];
        v.extend(service_opts(rng, proto == "-t"));
        return v;
    }
    let (spec, dests) = pick(rng, &m.services);
    if dests.is_empty() && (57..=93).contains(&roll) {
        // nothing to edit or delete: add one (mostly)
        roll = if rng.random_bool(0.9) { 27 } else { roll };
    }
    let sw = match spec.key.proto {
        dirigo::lb::spec::Proto::Tcp => "-t",
        dirigo::lb::spec::Proto::Udp => "-u",
    };
    let (sw, vip, port) = (
        sw.to_string(),
        format!("{}:{}", spec.key.vip, spec.key.port),
        spec.key.port,
    );
    // a real server of the service (`existing`, when it has one) or one
    // it does not have (when there is one left)
    let rip = |rng: &mut StdRng, existing: bool| {
        let have = |a: u8| {
            dests
                .iter()
                .any(|d| matches!(d.key.addr, std::net::IpAddr::V4(v) if v.octets()[3] == a))
        };
        let pool: Vec<u8> = (10..18).filter(|&a| have(a) == existing).collect();
        let a = match pool.is_empty() {
            true => rng.random_range(10..18),
            false => *pick(rng, &pool),
        };
        format!("172.16.0.{a}:{port}")
    };
    let mut v: Vec<String>;
    match roll {
        12..=21 => {
            let tcp = sw == "-t";
            v = vec!["-E".into(), sw, vip];
            v.extend(service_opts(rng, tcp));
        }
        22..=26 => v = vec!["-D".into(), sw, vip],
        27..=56 => {
            let existing = rng.random_bool(0.05);
            v = vec!["-a".into(), sw, vip, "-r".into(), rip(rng, existing)];
            v.extend(dest_opts(rng, spec.synproxy));
        }
        57..=81 => {
            let existing = rng.random_bool(0.9);
            let r = rip(rng, existing);
            v = vec!["-e".into(), sw, vip, "-r".into(), r];
            v.extend(dest_opts(rng, spec.synproxy));
        }
        82..=93 => {
            let existing = rng.random_bool(0.9);
            let r = rip(rng, existing);
            v = vec!["-d".into(), sw, vip, "-r".into(), r];
        }
        94..=97 => {
            v = vec!["--set".into()];
            for _ in 0..3 {
                v.push(rng.random_range(0..2000u32).to_string());
            }
        }
        _ => v = vec!["-C".into()],
    }
    v
}

/// The state file as dirigo left it must always load.
fn assert_loads(state: &Path) {
    if let Err(e) = state_file::load(&state.display().to_string(), Timeouts::default()) {
        panic!(
            "the state file is torn or corrupt after SIGKILL: {e}\n{}",
            std::fs::read_to_string(state).unwrap_or_default()
        );
    }
}

#[test]
fn sigkill_at_random_points_keeps_the_last_acknowledged_table() {
    if !common::privileged("state_file sigkill") {
        return;
    }
    let seed: u64 = std::env::var("DIRIGO_STATE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("state_file: seed {seed} (DIRIGO_STATE_SEED={seed} replays it)");
    let mut rng = StdRng::seed_from_u64(seed);
    let s = setup("statekill");
    let t0 = Instant::now();

    let mut d = common::Daemon::start(&s.dir, &s.toml);
    // no state file yet: the config's service
    assert!(!s.state.exists());
    let (rules, timeouts) = observed(&s.sock);
    assert_eq!(
        rules,
        "-A -t 10.0.0.100:80 -s rr\n-a -t 10.0.0.100:80 -r 172.16.0.50:80 -m -w 1\n"
    );
    let mut acked = Model {
        services: state_file::parse(&rules, timeouts).unwrap().services,
        timeouts,
    };
    assert_eq!(acked.save(), rules);
    // the config's service goes: the state file, not the config, must
    // bring back what is left after a restart
    let del: Vec<String> = ["-D", "-t", "10.0.0.100:80"].map(String::from).to_vec();
    assert!(adm_cmd(&s.sock, &del).status().unwrap().success());
    acked = acked.after(&del).unwrap();

    // the changes, and the REPETITIONS of them (at random) during which
    // dirigo is killed
    let changes: usize = std::env::var("DIRIGO_STATE_CHANGES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(CHANGES)
        .max(REPETITIONS);
    let mut kills = rand::seq::index::sample(&mut rng, changes, REPETITIONS).into_vec();
    kills.sort_unstable();
    let (mut done, mut refused, mut in_flight_lost, mut in_flight_kept) = (0, 0, 0, 0);
    let mut mean_us = 5000.0f64;
    let mut starting = Duration::ZERO;
    for i in 0..changes {
        let argv = change(&mut rng, &acked);
        let next = acked.after(&argv);
        let start = Instant::now();
        let child = adm_cmd(&s.sock, &argv).spawn().unwrap();
        let Some(rep) = kills.iter().position(|&k| k == i) else {
            let o = child.wait_with_output().unwrap();
            let el = start.elapsed().as_micros() as f64;
            mean_us = mean_us * 0.9 + el * 0.1;
            match (o.status.success(), next) {
                (true, Some(n)) => {
                    acked = n;
                    done += 1;
                }
                (true, None) => {
                    panic!("change {i}: dirigoadm {argv:?} succeeded, the model refuses it")
                }
                (false, _) => refused += 1,
            }
            continue;
        };
        // the kill: anywhere from before the request to after the answer
        let us = rng.random_range(0..(mean_us * 1.5) as u64 + 1);
        std::thread::sleep(Duration::from_micros(us));
        d.kill9();
        let o = child.wait_with_output().unwrap();
        let mut in_flight = None;
        if o.status.success() {
            acked = next.unwrap_or_else(|| {
                panic!("change {i}: dirigoadm {argv:?} succeeded, the model refuses it")
            });
            done += 1;
        } else {
            // in flight: the old table or, when it was valid, the new
            in_flight = next;
        }
        assert_loads(&s.state);
        let ts = Instant::now();
        d = common::Daemon::start(&s.dir, &s.toml);
        starting += ts.elapsed();
        let (rules, timeouts) = observed(&s.sock);
        let got = |m: &Model| m.save() == rules && m.timeouts == timeouts;
        if got(&acked) {
            if in_flight.is_some() {
                in_flight_lost += 1;
            }
        } else if let Some(n) = in_flight.filter(|n| got(n)) {
            in_flight_kept += 1;
            acked = n;
        } else {
            panic!(
                "kill {rep} at change {i} (seed {seed}): after SIGKILL and restart dirigoadm -S is\n\
                 {rules}{timeouts:?}\nand the last acknowledged table is\n{}{:?}",
                acked.save(),
                acked.timeouts
            );
        }
    }
    assert_eq!(observed(&s.sock), (acked.save(), acked.timeouts));
    // dirigoctl reload puts the config's services back, and that is saved
    // too (and survives a clean stop)
    let ctl = |args: &[&str]| {
        let o = Command::new(crate::common::DIRIGOCTL)
            .arg("--socket")
            .arg(&s.sock)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "dirigoctl {args:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // a write that fails: the change is applied and answered, the file
    // keeps the previous rules, the failure is logged and counted; the
    // next change writes again
    let drops_failed = |ctl: &dyn Fn(&[&str]) -> String| {
        ctl(&["drops"])
            .lines()
            .find(|l| l.starts_with("state_file_write_failed"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .expect("state_file_write_failed in dirigoctl drops")
    };
    assert_eq!(drops_failed(&ctl), 0);
    let before = std::fs::read_to_string(&s.state).unwrap();
    let blocker = s.state.with_file_name(".rules.tmp");
    let _ = std::fs::remove_file(&blocker);
    std::fs::create_dir(&blocker).unwrap();
    adm_ok(&s.sock, "-A -u 10.0.0.200:53 -s rr");
    assert!(adm_ok(&s.sock, "-S -n").contains("-A -u 10.0.0.200:53 -s rr"));
    assert_eq!(std::fs::read_to_string(&s.state).unwrap(), before);
    // (at least one: a commit of the control loop's own meanwhile, a
    // health refresh, tries the unsaved table again and fails again)
    assert!(drops_failed(&ctl) >= 1);
    assert!(d.has_line("cannot save the change"), "{}", d.output());
    std::fs::remove_dir(&blocker).unwrap();
    adm_ok(&s.sock, "-D -u 10.0.0.200:53");
    let failed = drops_failed(&ctl);
    adm_ok(&s.sock, "-A -u 10.0.0.201:53 -s rr");
    assert!(std::fs::read_to_string(&s.state)
        .unwrap()
        .ends_with("-A -u 10.0.0.201:53 -s rr\n"));
    assert_eq!(drops_failed(&ctl), failed, "writes succeed again");
    ctl(&["reload"]);
    let toml_rules = "-A -t 10.0.0.100:80 -s rr\n-a -t 10.0.0.100:80 -r 172.16.0.50:80 -m -w 1\n";
    assert!(std::fs::read_to_string(&s.state)
        .unwrap()
        .ends_with(&format!("--set 900 120 300\n{toml_rules}")));
    let drops = ctl(&["drops"]);
    assert!(
        drops.lines().any(|l| l.contains("state_file_write_failed")),
        "{drops}"
    );
    d.stop();
    let d = common::Daemon::start(&s.dir, &s.toml);
    assert_eq!(adm_ok(&s.sock, "-S -n"), toml_rules);
    d.stop();
    eprintln!(
        "state_file: {REPETITIONS} SIGKILLs among {changes} changes: {done} acknowledged, {refused} refused, \
         the change in flight lost {in_flight_lost} / kept {in_flight_kept} times; {:.1} s \
         ({:.1} s of it restarting; a change took {:.1} ms)",
        t0.elapsed().as_secs_f64(),
        starting.as_secs_f64(),
        mean_us / 1000.0
    );
    assert!(done > REPETITIONS, "too few changes were made: {done}");
}

#[test]
fn a_corrupt_state_file_refuses_the_start_with_its_line() {
    let s = setup("statebad");
    std::fs::create_dir_all(s.state.parent().unwrap()).unwrap();
    std::fs::write(
        &s.state,
        "# saved\n-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 172.16.0.11:80 -g -w 1\n-a -t 10.0.0.1:80 -r 172.16.0.\n",
    )
    .unwrap();
    let cfg = s.dir.join("dirigo.toml");
    std::fs::write(&cfg, &s.toml).unwrap();
    let want = format!("{}:4: ", s.state.display());
    let dirigo = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dirigo"))
            .args(args)
            .arg("--config")
            .arg(&cfg)
            .output()
            .unwrap()
    };
    // --check: the same FILE:LINE form, exit 2
    let o = dirigo(&["--check"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.lines().next().unwrap().starts_with(&want), "{err}");
    // the daemon: one line, non-zero, before EAL (no hugepages needed)
    let o = dirigo(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("dirigo: {want}")), "{err}");
    assert!(!err.contains("EAL"), "{err}");
    // and the file is left as it was (never silently dropped or rewritten)
    assert!(std::fs::read_to_string(&s.state)
        .unwrap()
        .ends_with("-r 172.16.0.\n"));
    // --check of a good state file says what it holds
    std::fs::write(&s.state, "-A -u 10.0.0.1:53 -s rr\n").unwrap();
    let o = dirigo(&["--check"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("1 service(s), loaded at start"), "{out}");
}
