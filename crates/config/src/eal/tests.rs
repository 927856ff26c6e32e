//! Tests of the EAL argument checks: what passes, and each problem at its argument.

use super::check;

fn problems(args: &[&str]) -> Vec<(Option<usize>, String)> {
    check(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
}

/// The one problem of `args`: its argument index and a word it says.
fn one(args: &[&str], at: usize, says: &str) {
    let p = problems(args);
    assert_eq!(p.len(), 1, "{args:?}: {p:?}");
    assert_eq!(p[0].0, Some(at), "{args:?}: {p:?}");
    assert!(
        p[0].1.contains(says),
        "{args:?}: {:?} should say {says:?}",
        p[0].1
    );
}

#[test]
fn the_shipped_and_test_arguments_pass() {
    for args in [
        &[
            "-l",
            "0-1",
            "--in-memory",
            "--file-prefix",
            "dirigo-lab",
            "--no-pci",
            "--vdev=net_tap0,iface=dg-wan",
        ][..],
        &[
            "-l",
            "0,2-5",
            "-n",
            "4",
            "--file-prefix",
            "dirigo",
            "-a",
            "0000:01:00.0",
        ],
        &[
            "--lcores",
            "0@0,1@1,2@0",
            "--no-telemetry",
            "--log-level=pmd.net.tap:debug",
        ],
        &["--lcores=(0-1)@0,2@(1,3)", "--main-lcore", "2"],
        &["-c", "0x3", "--no-huge", "-m", "512", "--iova-mode", "va"],
        &["-l0-1", "--in-mem", "--huge-unlink=always"],
        &[],
    ] {
        assert_eq!(problems(args), vec![], "{args:?}");
    }
}

#[test]
fn unknown_and_malformed_options() {
    one(
        &["-l", "0-1", "--no-such-thing"],
        2,
        "unknown EAL option '--no-such-thing'",
    );
    one(&["-l", "0-1", "-q"], 2, "unknown EAL option '-q'");
    one(
        &["-l", "0-1", "--no-h"],
        2,
        "ambiguous: --no-hpet, --no-huge",
    );
    one(&["-l", "0-1", "--no-pci=yes"], 2, "takes no value");
    one(&["-l", "0-1", "--file-prefix"], 2, "needs a value");
    one(&["-l", "0-1", "in-memory"], 2, "not an EAL option");
    one(&["-l", "0-1", "--", "--no-pci"], 3, "follows '--'");
}

#[test]
fn lcore_syntax_and_count() {
    one(&["-l", "0-x"], 0, "bad -l value '0-x'");
    one(&["-l", "0,200"], 0, "not below 128");
    one(
        &["-l", "3"],
        0,
        "gives 1 lcore(s): dirigo needs at least two",
    );
    one(&["-l", "1,1"], 0, "gives 1 lcore(s)");
    one(&["-c", "0x1"], 0, "gives 1 lcore(s)");
    one(&["-c", "0xg"], 0, "not a hexadecimal core mask");
    one(&["--lcores", "(0-1"], 0, "unbalanced");
    one(&["--lcores", "0@(1,2"], 0, "unbalanced");
    one(&["--lcores", "0@2000,1"], 0, "not below 1024");
    one(&["--lcores=5@0"], 0, "gives 1 lcore(s)");
    one(&["-l", "0-1", "-c", "3"], 2, "give the lcores once");
    one(
        &["-l", "0-1", "--main-lcore", "4"],
        2,
        "not one of the lcores",
    );
    // two lcores by reversed range, as EAL takes it
    assert_eq!(problems(&["-l", "1-0"]), vec![]);
}

#[test]
fn values_and_combinations() {
    one(
        &["-l", "0-1", "--in-memory", "--no-huge"],
        3,
        "--in-memory and --no-huge",
    );
    one(
        &["-l", "0-1", "--no-huge", "--in-memory"],
        3,
        "--in-memory and --no-huge",
    );
    one(
        &["-l", "0-1", "-m", "512", "--socket-mem", "512"],
        4,
        "EAL refuses both",
    );
    one(
        &["-l", "0-1", "-a", "0000:01:00.0", "-b", "0000:02:00.0"],
        4,
        "--allow and --block",
    );
    one(
        &["-l", "0-1", "--in-memory", "--huge-unlink=never"],
        3,
        "contradicts",
    );
    one(
        &["-l", "0-1", "--proc-type", "secondary"],
        2,
        "primary process",
    );
    one(&["-l", "0-1", "--iova-mode", "xx"], 2, "want pa or va");
    one(&["-l", "0-1", "-n", "four"], 2, "not a number");
    one(&["-l", "0-1", "--file-prefix", "a%d"], 2, "without '%'");
    one(
        &["-l", "0-1", "-vdev=net_null0"],
        2,
        "-d 'ev=net_null0': no such driver",
    );
    // every problem, not the first only
    let p = problems(&["-l", "0", "--bogus", "--no-huge", "--in-memory"]);
    assert_eq!(p.len(), 3, "{p:?}");
}
