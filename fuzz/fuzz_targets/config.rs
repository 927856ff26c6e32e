//! Fuzz the configuration parser and its validation (`Config::parse`, the
//! path `dirigo --check` and every reload take): never a panic, and every
//! problem reported points at a line of the text.
#![no_main]

use dirigo_config::{Config, ConfigError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::parse(text, "fuzz.toml") {
        Ok(_) => {}
        Err(e @ ConfigError::Invalid { .. }) => {
            let ConfigError::Invalid { problems, .. } = &e else {
                unreachable!()
            };
            assert!(!problems.is_empty(), "invalid without a problem");
            let lines = text.lines().count().max(1);
            for p in problems {
                assert!(!p.msg.is_empty());
                if let Some(l) = p.line {
                    assert!(
                        l >= 1 && l <= lines + 1,
                        "problem at line {l} of {lines}: {}",
                        p.msg
                    );
                }
                let _ = p.located("fuzz.toml");
            }
            assert_eq!(e.lines().len(), problems.len());
        }
        Err(e) => panic!("parse reported {e} (not a problem of the text)"),
    }
});
