//! Where in the file a problem is: `file:line: message`, like `nginx -t`.
//!
//! Schema problems (syntax, unknown keys, wrong types, missing keys) come
//! from the TOML parser with a byte span. Several are collected: after
//! each, the top-level table or `[[array]]` element that holds it is
//! blanked out (newlines kept, so lines do not move) and the file is read
//! again, until it deserializes. The validators' problems name a key path
//! ([`At`]: `service[2].real_server[0].address`), found again in the
//! document with `toml_edit`'s spans.

use serde::de::DeserializeOwned;
use std::fmt;
use std::ops::Range;
use toml_edit::{ImDocument, Item, Table, Value};

/// One problem: the line it is on (when it can be told) and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line.
    pub line: Option<usize>,
    /// What is wrong, one line.
    pub msg: String,
}

impl Problem {
    /// `path:line: msg` (or `path: msg` without a line).
    pub fn located(&self, path: &str) -> String {
        match self.line {
            Some(l) => format!("{path}:{l}: {}", self.msg),
            None => format!("{path}: {}", self.msg),
        }
    }
}

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A key path from the top of the file: `At::key("port").i(1).k("mtu")`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct At(Vec<Seg>);

impl At {
    /// A top-level key or section.
    pub(super) fn key(k: &str) -> At {
        At(vec![Seg::Key(k.into())])
    }
    /// A key below this one.
    pub(super) fn k(&self, k: &str) -> At {
        let mut a = self.clone();
        a.0.push(Seg::Key(k.into()));
        a
    }
    /// An element of this array.
    pub(super) fn i(&self, i: usize) -> At {
        let mut a = self.clone();
        a.0.push(Seg::Index(i));
        a
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, s) in self.0.iter().enumerate() {
            match s {
                Seg::Key(k) if n == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// The validators' problems, each at a key path.
#[derive(Debug, Default)]
pub(super) struct Issues(Vec<(At, String)>);

impl Issues {
    /// One more problem at `at`.
    pub(super) fn add(&mut self, at: At, msg: impl Into<String>) {
        self.0.push((at, msg.into()));
    }
    /// Whether none was found.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Each problem with its line in `text` (which parsed).
    /// In the order of the file (those without a line first).
    pub(super) fn locate(self, text: &str) -> Vec<Problem> {
        let doc = ImDocument::parse(text).ok();
        let mut out: Vec<Problem> = self
            .0
            .into_iter()
            .map(|(at, msg)| Problem {
                line: doc
                    .as_ref()
                    .and_then(|d| offset(d.as_table(), &at.0))
                    .map(|o| line_of(text, o)),
                msg,
            })
            .collect();
        out.sort_by_key(|p| p.line);
        out
    }
}

/// The 1-based line of byte `offset`.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Where the deepest part of `path` that exists starts: the key's line,
/// a table's header, an array element.
fn offset(root: &Table, path: &[Seg]) -> Option<usize> {
    let mut best = None;
    let mut cur = Node::Table(root);
    for seg in path {
        let next = match (cur, seg) {
            (Node::Table(t), Seg::Key(k)) => t.get_key_value(k).map(|(key, item)| {
                let header = match item {
                    Item::Table(t) => t.span(),
                    _ => None,
                };
                (header.or_else(|| key.span()), Node::of(item))
            }),
            (Node::Inline(t), Seg::Key(k)) => {
                t.get_key_value(k).map(|(key, v)| (key.span(), Node::of(v)))
            }
            (Node::Aot(a), Seg::Index(i)) => a.get(*i).map(|t| (t.span(), Node::Table(t))),
            (Node::Array(a), Seg::Index(i)) => a.get(*i).map(|v| (v.span(), Node::of_value(v))),
            _ => None,
        };
        let Some((span, node)) = next else { break };
        if let Some(s) = span {
            best = Some(s.start);
        }
        cur = node;
    }
    best
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Table(&'a Table),
    Inline(&'a toml_edit::InlineTable),
    Aot(&'a toml_edit::ArrayOfTables),
    Array(&'a toml_edit::Array),
    Leaf,
}

impl<'a> Node<'a> {
    fn of(item: &'a Item) -> Node<'a> {
        match item {
            Item::Table(t) => Node::Table(t),
            Item::ArrayOfTables(a) => Node::Aot(a),
            Item::Value(v) => Node::of_value(v),
            Item::None => Node::Leaf,
        }
    }
    fn of_value(v: &'a Value) -> Node<'a> {
        match v {
            Value::InlineTable(t) => Node::Inline(t),
            Value::Array(a) => Node::Array(a),
            _ => Node::Leaf,
        }
    }
}

/// The bytes an item and everything below it cover.
fn extent(item: &Item) -> Option<Range<usize>> {
    let mut r: Option<Range<usize>> = None;
    let mut add = |s: Option<Range<usize>>| {
        if let Some(s) = s {
            r = Some(match r.take() {
                Some(o) => o.start.min(s.start)..o.end.max(s.end),
                None => s,
            });
        }
    };
    match item {
        Item::Table(t) => {
            add(t.span());
            for (k, v) in t.iter() {
                add(t.key(k).and_then(|k| k.span()));
                add(extent(v));
            }
        }
        Item::ArrayOfTables(a) => {
            for t in a.iter() {
                add(extent(&Item::Table(t.clone())));
            }
        }
        Item::Value(v) => add(v.span()),
        Item::None => {}
    }
    r
}

/// The top-level parts of the document a problem can be confined to:
/// each top-level key with its table, and each `[[array]]` element.
fn regions(root: &Table) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    for (k, item) in root.iter() {
        let key_span = root.key(k).and_then(|k| k.span());
        match item {
            Item::ArrayOfTables(a) => {
                for t in a.iter() {
                    if let Some(r) = extent(&Item::Table(t.clone())) {
                        out.push((k.to_string(), r));
                    }
                }
            }
            _ => {
                let mut r = extent(item);
                if let (Some(e), Some(ks)) = (&r, &key_span) {
                    r = Some(e.start.min(ks.start)..e.end.max(ks.end));
                }
                if let Some(r) = r.or(key_span) {
                    out.push((k.to_string(), r));
                }
            }
        }
    }
    out
}

/// Deserialize `text`, or say every schema problem found with its line.
pub(super) fn deserialize<T: DeserializeOwned>(text: &str) -> Result<T, Vec<Problem>> {
    let doc = ImDocument::parse(text).map_err(|e| {
        vec![Problem {
            line: e.span().map(|s| line_of(text, s.start)),
            msg: said(e.message(), text, e.span()),
        }]
    })?;
    let mut regions = regions(doc.as_table());
    let mut text = text.to_string();
    let mut problems = Vec::new();
    let mut blanked: Vec<String> = Vec::new();
    loop {
        let e = match toml::from_str::<T>(&text) {
            Ok(v) if problems.is_empty() => return Ok(v),
            Ok(_) => return Err(problems),
            Err(e) => e,
        };
        let msg = said(e.message(), &text, e.span());
        // a required section blanked out for an earlier problem
        if blanked
            .iter()
            .any(|k| msg == format!("missing field `{k}`"))
        {
            return Err(problems);
        }
        let span = e.span();
        problems.push(Problem {
            line: span.as_ref().map(|s| line_of(&text, s.start)),
            msg,
        });
        let Some(s) = span else {
            return Err(problems);
        };
        let Some(i) = regions
            .iter()
            .position(|(_, r)| r.start <= s.start && s.start < r.end.max(r.start + 1))
        else {
            return Err(problems);
        };
        let (key, r) = regions.remove(i);
        blank(&mut text, r);
        blanked.push(key);
    }
}

/// Spaces over `r`, newlines kept.
fn blank(text: &mut String, r: Range<usize>) {
    let bytes: Vec<u8> = text
        .bytes()
        .enumerate()
        .map(|(i, b)| {
            if r.contains(&i) && b != b'\n' {
                b' '
            } else {
                b
            }
        })
        .collect();
    // only ASCII spaces replace whole characters' bytes inside `r`, whose
    // ends are token boundaries: still UTF-8
    *text = String::from_utf8(bytes).unwrap_or_default();
}

/// The parser's message on one line; for the errors it has no words for
/// (a control character in a comment, found by fuzzing), the character
/// where it stopped.
fn said(m: &str, text: &str, span: Option<Range<usize>>) -> String {
    let m = one_line(m);
    if !m.is_empty() {
        return m;
    }
    match span.and_then(|s| text.get(s.start..)?.chars().next()) {
        Some(c) => format!("invalid TOML: unexpected character {:?}", c),
        None => "invalid TOML: unexpected end of file".into(),
    }
}

/// A message on one line.
fn one_line(m: &str) -> String {
    m.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}
