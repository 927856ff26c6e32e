//! The ipvsadm compatibility audit (issue 52): every option of ipvsadm
//! 1.31's man page, long and short form, in a command line that uses it,
//! either parses or is refused with its own one-line reason (never
//! "invalid option"); the refusals are exactly the options dirigoadm
//! does not have.

use crate::adm::args::refused::{self, REFUSED};
use crate::adm::args::{command, parse};

/// ipvsadm 1.31's man page (ipvsadm.8): each option's short and long
/// name and a command line that uses it (`{}` is where the option goes,
/// with its value if it takes one).
const IPVSADM_1_31: &[(Option<char>, &str, &str)] = &[
    // COMMANDS
    (Some('A'), "add-service", "{} -t 10.0.0.1:80"),
    (Some('E'), "edit-service", "{} -t 10.0.0.1:80 -s rr"),
    (Some('D'), "delete-service", "{} -t 10.0.0.1:80"),
    (Some('C'), "clear", "{}"),
    (Some('R'), "restore", "{}"),
    (Some('S'), "save", "{} -n"),
    (Some('a'), "add-server", "{} -t 10.0.0.1:80 -r 10.0.1.1"),
    (
        Some('e'),
        "edit-server",
        "{} -t 10.0.0.1:80 -r 10.0.1.1 -w 2",
    ),
    (Some('d'), "delete-server", "{} -t 10.0.0.1:80 -r 10.0.1.1"),
    (Some('L'), "list", "{}"),
    (Some('l'), "list", "{}"),
    (Some('Z'), "zero", "{}"),
    (None, "set", "{} 900 120 300"),
    (None, "start-daemon", "{} master"),
    (None, "stop-daemon", "{} master"),
    (Some('h'), "help", "{}"),
    // virtual-service
    (Some('t'), "tcp-service", "-A {} 10.0.0.1:80"),
    (Some('u'), "udp-service", "-A {} 10.0.0.1:53"),
    (None, "sctp-service", "-A {} 10.0.0.1:80"),
    // PARAMETERS
    (Some('s'), "scheduler", "-A -t 10.0.0.1:80 {} rr"),
    (Some('p'), "persistent", "-A -t 10.0.0.1:80 {} 60"),
    (
        Some('M'),
        "netmask",
        "-A -t 10.0.0.1:80 -p {} 255.255.255.0",
    ),
    (None, "pe", "-A -u 10.0.0.1:5060 -p {} sip"),
    (
        Some('b'),
        "sched-flags",
        "-A -t 10.0.0.1:80 -s sh {} sh-port",
    ),
    (Some('r'), "real-server", "-a -t 10.0.0.1:80 {} 10.0.1.1"),
    (Some('g'), "gatewaying", "-a -t 10.0.0.1:80 -r 10.0.1.1 {}"),
    (Some('i'), "ipip", "-a -t 10.0.0.1:80 -r 10.0.1.1 {}"),
    (None, "tun-type", "-a -t 10.0.0.1:80 -r 10.0.1.1 -i {} gre"),
    (
        None,
        "tun-port",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gue {} 6080",
    ),
    (
        None,
        "tun-nocsum",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gre {}",
    ),
    (
        None,
        "tun-csum",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gre {}",
    ),
    (
        None,
        "tun-remcsum",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gue --tun-port 6080 {}",
    ),
    (
        Some('m'),
        "masquerading",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 {}",
    ),
    (Some('w'), "weight", "-a -t 10.0.0.1:80 -r 10.0.1.1 {} 5"),
    (
        Some('x'),
        "u-threshold",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 {} 100",
    ),
    (
        Some('y'),
        "l-threshold",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 {} 50",
    ),
    (Some('c'), "connection", "-L {}"),
    (None, "timeout", "-L {}"),
    (None, "daemon", "-L {}"),
    (None, "stats", "-L {}"),
    (None, "rate", "-L {}"),
    (None, "thresholds", "-L {}"),
    (None, "persistent-conn", "-L {}"),
    (None, "tun-info", "-L {}"),
    (None, "sort", "-L {}"),
    (None, "nosort", "-L {}"),
    (Some('n'), "numeric", "-L {}"),
    (None, "exact", "-L {}"),
    (Some('f'), "fwmark-service", "-A {} 1 -s rr"),
    (Some('6'), "ipv6", "-A -f 1 {}"),
    (Some('o'), "ops", "-A -u 10.0.0.1:53 {}"),
    // PARAMETERS FOR SYNCHRONIZATION DAEMON
    (None, "syncid", "{} 3"),
    (None, "sync-maxlen", "{} 1400"),
    (None, "mcast-interface", "{} eth0"),
    (None, "mcast-group", "{} 224.0.0.82"),
    (None, "mcast-port", "{} 8849"),
    (None, "mcast-ttl", "{} 2"),
    // ipvsadm's usage (-h) has it too
    (Some('v'), "version", "{}"),
];

fn argv(line: &str) -> Vec<String> {
    std::iter::once("ipvsadm".to_string())
        .chain(line.split_whitespace().map(String::from))
        .collect()
}

#[test]
fn every_ipvsadm_option_is_accepted_or_refused_with_its_reason() {
    let (mut accepted, mut refusals) = (0, 0);
    for (short, long, line) in IPVSADM_1_31 {
        let forms = std::iter::once(format!("--{long}")).chain(short.map(|c| format!("-{c}")));
        for given in forms {
            let l = line.replace("{}", &given);
            match (parse(&argv(&l)), refused::by_long(long)) {
                (Ok(_), None) => accepted += 1,
                (Ok(c), Some(r)) => {
                    panic!("{l}: accepted ({c:?}) but listed as refused: {}", r.reason)
                }
                (Err(e), None) => panic!("{l}: refused without a reason of its own: {}", e.msg),
                (Err(e), Some(r)) => {
                    assert_eq!(e.exit, 2, "{l}");
                    assert_eq!(e.msg, r.message(&given), "{l}");
                    assert_eq!(e.msg.lines().count(), 1, "{l}: one line");
                    assert!(!e.msg.contains("invalid option"), "{l}: {}", e.msg);
                    refusals += 1;
                }
            }
        }
    }
    // 80 forms accepted (long and short, --list twice: beside -L and -l),
    // 10 refused (10 options, long form only)
    assert_eq!((accepted, refusals), (80, 10));
}

/// The refusals are options of ipvsadm's man page, with the short name it
/// gives them, and none is also one dirigoadm takes.
#[test]
fn the_refusals_are_ipvsadm_options_dirigoadm_does_not_take() {
    let cmd = command();
    for r in REFUSED {
        let m = IPVSADM_1_31.iter().find(|(_, l, _)| *l == r.long);
        let (short, _, _) = m.unwrap_or_else(|| panic!("--{} is not ipvsadm 1.31's", r.long));
        assert_eq!(*short, r.short, "--{}", r.long);
        assert!(
            !cmd.get_arguments().any(|a| a.get_long() == Some(r.long)),
            "--{} is refused and described",
            r.long
        );
        assert!(
            !r.reason.is_empty() && !r.reason.contains('\n'),
            "--{}",
            r.long
        );
    }
    // and every option dirigoadm describes (beyond its --socket and the
    // additions from DPVS and FullNAT, and FullNAT's --client-address) is
    // ipvsadm's
    let ours = [
        "socket",
        "add-laddr",
        "del-laddr",
        "get-laddr",
        "laddr",
        "synproxy",
        "fullnat",
        "client-address",
    ];
    for a in cmd.get_arguments() {
        let long = a.get_long().unwrap_or_default();
        assert!(
            ours.contains(&long) || IPVSADM_1_31.iter().any(|(_, l, _)| *l == long),
            "--{long} is neither ipvsadm's nor a known addition"
        );
    }
}

/// The man page's list is the table.
#[test]
fn the_man_page_lists_every_refusal() {
    let text = refused::man_text();
    for r in REFUSED {
        assert!(
            text.contains(&format!("- {}\n{}", r.names(), r.reason)),
            "{}",
            r.names()
        );
    }
}
