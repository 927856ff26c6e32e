//! Fuzz the keepalived.conf converter (`dirigoctl keepalived-convert`):
//! tokenize, parse, convert, emit. Never a panic; what it emits must be
//! TOML that reads back, and its services must be `[[service]]` tables.
#![no_main]

use dirigo_config::keepalived::{convert, emit, parse};
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file: Arc<str> = Arc::from("keepalived.conf");
    let Ok(tokens) = parse::tokenize(text, &file) else {
        return;
    };
    let Ok(tree) = parse::parse(&tokens) else {
        return;
    };
    let mut warnings = Vec::new();
    let Ok(services) = convert::services(&tree, &mut warnings) else {
        return;
    };
    let toml_text = emit::toml(&services, "keepalived.conf");
    let v: toml::Table = toml::from_str(&toml_text)
        .unwrap_or_else(|e| panic!("emitted TOML does not parse: {e}\n{toml_text}"));
    let n = v
        .get("service")
        .and_then(|s| s.as_array())
        .map_or(0, |a| a.len());
    assert_eq!(
        n,
        services.len(),
        "services emitted vs converted\n{toml_text}"
    );
});
