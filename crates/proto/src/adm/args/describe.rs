//! dirigoadm's command line as a clap [`Command`], for its man page and
//! shell completions only: dirigoadm parses with ipvsadm's own rules
//! (`options::tokenize`), and this description is built from the same
//! table, so a new option appears in both.

use super::options::{is_command, Arg, TABLE};
use clap::builder::PossibleValuesParser;
use clap::{ArgAction, Command, ValueHint};
use dirigo_core::lb::sched::SchedKind;

/// The clap description of every option dirigoadm takes (ipvsadm's, from
/// the option table, and `--socket`).
pub fn command() -> Command {
    let mut cmd = Command::new("dirigoadm")
        .about("Administer a running dirigo with ipvsadm's command line")
        .disable_help_flag(true)
        .disable_version_flag(true)
        .next_line_help(false);
    for (i, t) in TABLE.iter().enumerate() {
        if TABLE[..i].iter().any(|e| e.long == t.long) {
            continue; // a second short name, added below
        }
        let mut a = clap::Arg::new(t.long)
            .long(t.long)
            .help(t.help)
            .help_heading(if is_command(t.o) {
                "Commands"
            } else {
                "Options"
            });
        if let Some(c) = t.short {
            a = a.short(c);
        }
        for alias in TABLE[i + 1..].iter().filter(|e| e.long == t.long) {
            if let Some(c) = alias.short {
                a = a.visible_short_alias(c);
            }
        }
        let words: Vec<&'static str> = t.value.split_whitespace().collect();
        a = match t.arg {
            Arg::No if words.is_empty() => a.action(ArgAction::SetTrue),
            Arg::No => a.num_args(words.len()).value_names(words),
            Arg::Req => a.num_args(1).value_name(t.value),
            Arg::Opt => a.num_args(0..=1).value_name(t.value),
        };
        a = match t.long {
            "tcp-service" | "udp-service" | "real-server" => a.value_hint(ValueHint::Hostname),
            "scheduler" => a
                .hide_possible_values(true)
                .value_parser(PossibleValuesParser::new(
                    SchedKind::ALL.iter().map(|k| k.name()),
                )),
            _ => a,
        };
        cmd = cmd.arg(a);
    }
    cmd.arg(
        clap::Arg::new("socket")
            .long("socket")
            .num_args(1)
            .value_name("PATH")
            .value_hint(ValueHint::FilePath)
            .help_heading("Options")
            .help(
                "dirigo's control socket (else $DIRIGO_SOCKET, else /run/dirigo/ctl.sock); \
                 dirigoadm's only option beyond ipvsadm's.",
            ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::options::{Arg, TABLE};
    use super::command;

    /// Every row of the table is in the description, under its names.
    #[test]
    fn every_option_is_described() {
        let cmd = command();
        cmd.clone().debug_assert();
        for t in TABLE {
            let a = cmd
                .get_arguments()
                .find(|a| a.get_long() == Some(t.long))
                .unwrap_or_else(|| panic!("--{} is not described", t.long));
            if let Some(c) = t.short {
                let shorts = a.get_short_and_visible_aliases().unwrap_or_default();
                assert!(shorts.contains(&c), "-{c} for --{}", t.long);
            }
            assert!(
                a.get_help().is_some_and(|h| !h.to_string().is_empty()),
                "--{} has no help",
                t.long
            );
            let takes = a.get_num_args().is_some_and(|n| n.max_values() > 0);
            assert_eq!(
                takes,
                t.arg != Arg::No || !t.value.is_empty(),
                "--{}",
                t.long
            );
        }
        assert!(cmd.get_arguments().any(|a| a.get_long() == Some("socket")));
    }

    /// The description parses what dirigoadm parses (its names and values).
    #[test]
    fn accepts_ipvsadm_command_lines() {
        let ok = |args: &[&str]| {
            command()
                .try_get_matches_from(std::iter::once("dirigoadm").chain(args.iter().copied()))
                .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        };
        ok(&["-A", "-t", "10.0.0.1:80", "-s", "wrr", "-p", "60"]);
        ok(&["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1", "-g", "-w", "3"]);
        ok(&["--set", "900", "120", "300"]);
        ok(&["-l", "-n", "--stats"]);
        ok(&["-L", "--socket", "/run/x.sock"]);
        assert!(command()
            .try_get_matches_from(["dirigoadm", "-s", "nope"])
            .is_err());
    }
}
