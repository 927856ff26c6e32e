//! Tests of the keepalived converter: the language (tokens, blocks,
//! includes, error lines).

mod syntax;

use super::parse::{parse, tokenize, Node};
use super::{Diag, Level};
use std::sync::Arc;

/// The statement tree of `text`, read as `k.conf`.
fn tree(text: &str) -> Result<Vec<Node>, Diag> {
    let name: Arc<str> = "k.conf".into();
    parse(&tokenize(text, &name)?)
}
