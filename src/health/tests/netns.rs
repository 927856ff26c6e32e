//! An engine started in a network namespace checks what listens there
//! (root).

use super::super::engine::{Engine, JobKey};
use super::super::spec::Probe;
use super::super::state::Outcome;
use super::{job, root};
use crate::kernel::link::Rtnl;
use crate::kernel::netns::Netns;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

/// Removes the namespace when dropped.
struct Remove(String);

impl Drop for Remove {
    fn drop(&mut self) {
        if let Err(e) = Netns::remove(&self.0) {
            eprintln!("cannot remove netns {}: {e}", self.0);
        }
    }
}

/// The first report of job `key`, waiting up to two seconds.
fn first_report(e: &Engine, key: &JobKey) -> Outcome {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(r) = e.drain().into_iter().find(|r| r.key == *key) {
            return r.outcome;
        }
        assert!(Instant::now() < until, "no report");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn an_engine_in_a_namespace_reaches_what_listens_there() {
    if !root("an_engine_in_a_namespace_reaches_what_listens_there") {
        return;
    }
    let name = format!("dghe-{}", std::process::id());
    let ns = Netns::ensure(&name).unwrap();
    let _remove = Remove(name.clone());
    // lo up, and a listener on 127.0.0.1 there (the socket stays in the
    // namespace it was made in, whichever thread uses it)
    let listener = ns
        .run(|| {
            let mut rtnl = Rtnl::open().unwrap();
            let lo = rtnl.index_of("lo").unwrap().unwrap();
            rtnl.set_up(lo, true).unwrap();
            std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap()
        })
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let target = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    // the same port here: held, not listening, so refused
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind(target.into()).unwrap();

    let inside = ns
        .run(|| std::fs::read_link("/proc/thread-self/ns/net"))
        .unwrap()
        .unwrap();
    assert_ne!(
        inside,
        std::fs::read_link("/proc/thread-self/ns/net").unwrap()
    );
    let tcp = job(Probe::Tcp, target, 50, 1000, 1);
    // a command run by the engine is in its namespace too
    let exec = job(
        Probe::Exec {
            command: vec![
                "sh".into(),
                "-c".into(),
                r#"test "$(readlink /proc/self/ns/net)" = "$0""#.into(),
                inside.to_string_lossy().into_owned(),
            ],
        },
        target,
        50,
        1000,
        2,
    );

    let there = Engine::start(Some(&ns)).unwrap();
    there.set_jobs(vec![tcp.clone(), exec.clone()]);
    let o = first_report(&there, &tcp.key);
    assert!(o.ok && o.detail == "connected", "in {name}: {o:?}");
    let o = first_report(&there, &exec.key);
    assert!(o.ok, "the command ran outside {name}: {o:?}");
    there.stop();

    let here = Engine::start(None).unwrap();
    here.set_jobs(vec![tcp.clone(), exec.clone()]);
    let o = first_report(&here, &tcp.key);
    assert!(!o.ok && o.detail == "refused", "outside {name}: {o:?}");
    let o = first_report(&here, &exec.key);
    assert!(!o.ok && o.detail == "exit 1", "outside {name}: {o:?}");
    here.stop();
    drop(listener);

    // ICMP echo there: answered, then (echoes ignored there) not
    let ping = job(Probe::Ping, target, 50, 300, 3);
    let there = Engine::start(Some(&ns)).unwrap();
    there.set_jobs(vec![ping.clone()]);
    let o = first_report(&there, &ping.key);
    assert!(o.ok, "{o:?}");
    const IGNORE: &str = "/proc/sys/net/ipv4/icmp_echo_ignore_all";
    let ours = std::fs::read_to_string(IGNORE).unwrap();
    ns.run(|| std::fs::write(IGNORE, "1")).unwrap().unwrap();
    assert_eq!(
        std::fs::read_to_string(IGNORE).unwrap(),
        ours,
        "changed here, not there"
    );
    there.drain();
    std::thread::sleep(Duration::from_millis(100));
    let o = first_report(&there, &ping.key);
    assert!(!o.ok && o.detail == "timeout", "{o:?}");
    there.stop();
}
