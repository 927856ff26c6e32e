//! Fuzz `dirigoadm`'s command line: the input is argv, one argument per
//! NUL-separated piece (the program name is added), through
//! `split_socket` and ipvsadm's parser; and the same bytes as `-R`
//! (ipvsadm-save) text. Never a panic; an error always has a message.
#![no_main]

use dirigo_proto::adm::{args, parse_restore_lines, split_socket};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut argv = vec!["dirigoadm".to_string()];
    argv.extend(text.split('\0').filter(|a| !a.is_empty()).map(String::from));
    match split_socket(&argv) {
        Ok((_, rest)) => match args::parse(&rest) {
            Ok(cmd) => {
                let _ = cmd.mutation();
            }
            Err(e) => assert!(!e.msg.is_empty(), "an error without a message"),
        },
        Err(e) => assert!(!e.msg.is_empty()),
    }
    if let Err(e) = parse_restore_lines(&text.replace('\0', " ")) {
        assert!(
            e.msg.starts_with("line "),
            "restore error without its line: {}",
            e.msg
        );
    }
});
