//! Tests of the keepalived converter: the language (tokens, blocks,
//! includes, error lines) and the conversion (checked by dirigo's own
//! config parser).

mod checkers;
mod fwmark;
mod groups;
mod services;
mod syntax;
mod tunnels;

use super::parse::{parse, tokenize, Node};
use super::{convert, emit, Diag, Level};
use crate::Config;
use std::sync::Arc;

/// The statement tree of `text`, read as `k.conf`.
fn tree(text: &str) -> Result<Vec<Node>, Diag> {
    let name: Arc<str> = "k.conf".into();
    parse(&tokenize(text, &name)?)
}

/// `text` (as `k.conf`, without includes) converted: the TOML and the
/// warnings as printed.
fn convert_text(text: &str) -> Result<(String, Vec<String>), Diag> {
    let mut warnings = Vec::new();
    let services = convert::services(&tree(text)?, &mut warnings)?;
    assert!(warnings.iter().all(|w| w.level == Level::Warning));
    Ok((
        emit::toml(&services, "k.conf"),
        warnings.iter().map(|w| w.to_string()).collect(),
    ))
}

/// The error converting `text`, as printed.
fn convert_err(text: &str) -> String {
    let e = convert_text(text).expect_err("an error");
    assert_eq!(e.level, Level::Error);
    e.to_string()
}

/// What a real config has besides the services: a port with an exception
/// path, so that checks are allowed.
const PREFIX: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/keepalived/dirigo-prefix.toml"
));

/// The converted TOML, after [`PREFIX`], through dirigo's own parser.
fn dirigo(toml: &str) -> Config {
    let text = format!("{PREFIX}\n{toml}");
    Config::parse(&text, "converted.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}
