//! What a telemetry command answers with, held to the limits of DPDK
//! 22.11's telemetry library (`lib/telemetry/rte_telemetry.h`,
//! `telemetry_data.{h,c}`, `telemetry_json.h`, `telemetry.c`):
//!
//! * a dict's names: `[A-Za-z0-9_/]` only (`rte_tel_data_add_dict_*`
//!   refuses others) and shorter than `RTE_TEL_MAX_STRING_LEN` (128);
//! * a string value: shorter than 128 bytes (silently cut by `strlcpy`).
//!   DPDK escapes `"`, `\`, `\n`, `\r`, `\t` only, drops other control
//!   characters and indexes a table with a signed `char`, so a byte
//!   ≥ 0x80 is read as a negative index: only printable ASCII is safe;
//! * a dict holds at most `RTE_TEL_MAX_DICT_ENTRIES` (256) entries, an
//!   array `RTE_TEL_MAX_ARRAY_ENTRIES` (512); an array holds strings or
//!   numbers (an array of dicts is refused in 22.11), a dict any value;
//! * the whole answer, `{"<command>":<value>}`, is written into one
//!   16 KiB buffer (`MAX_OUTPUT_LEN`); an entry that would not fit is
//!   silently left out.
//!
//! [`Dict`] makes the first three impossible to break (names and strings
//! are cleaned and cut on insertion, entries past the limit are refused)
//! and knows the exact length of its JSON, so a command can stop before
//! the fourth and say so.

use std::fmt::Write;

/// Longest name or string value, in bytes (`RTE_TEL_MAX_STRING_LEN` - 1).
pub const MAX_STRING_LEN: usize = dpdk_sys::RTE_TEL_MAX_STRING_LEN as usize - 1;
/// Entries of one dict (`RTE_TEL_MAX_DICT_ENTRIES`).
pub const MAX_DICT_ENTRIES: usize = dpdk_sys::RTE_TEL_MAX_DICT_ENTRIES as usize;
/// Entries of one array (`RTE_TEL_MAX_ARRAY_ENTRIES`).
pub const MAX_ARRAY_ENTRIES: usize = dpdk_sys::RTE_TEL_MAX_ARRAY_ENTRIES as usize;
/// The answer's buffer (`MAX_OUTPUT_LEN` in telemetry.c, also sent to
/// clients as `max_output_len`).
pub const MAX_OUTPUT_LEN: usize = 16 * 1024;
/// Longest command name (`MAX_CMD_LEN` - 1 in telemetry.c).
pub const MAX_CMD_LEN: usize = 55;

/// The room a command's value has in the answer: the buffer less
/// `{"<cmd>":` and `}`, the terminating NUL and a margin for the
/// library's strict "less than" checks.
pub fn output_budget(cmd: &str) -> usize {
    MAX_OUTPUT_LEN - (cmd.len() + 4) - 1 - 1 - 32
}

/// A value in a [`Dict`]: made only by the constructors below, so every
/// string in it is clean and every array within the limit.
#[derive(Clone, Debug, PartialEq)]
pub struct Value(pub(super) Inner);

/// What a [`Value`] holds.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Inner {
    /// A string (printable ASCII, at most [`MAX_STRING_LEN`] bytes).
    Str(String),
    /// An unsigned number.
    U64(u64),
    /// A signed number.
    Int(i32),
    /// An array of strings (each clean, at most [`MAX_ARRAY_ENTRIES`]).
    Strs(Vec<String>),
    /// An array of numbers (at most [`MAX_ARRAY_ENTRIES`]).
    U64s(Vec<u64>),
    /// A nested dict.
    Dict(Dict),
}

impl Value {
    /// A string value, cleaned and cut to what DPDK keeps ([`clean_str`]).
    pub fn str(s: &str) -> Value {
        Value(Inner::Str(clean_str(s)))
    }

    /// A signed number.
    pub fn int(n: i32) -> Value {
        Value(Inner::Int(n))
    }

    /// An array of strings: the first [`MAX_ARRAY_ENTRIES`], each cleaned.
    pub fn strs<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Value {
        Value(Inner::Strs(
            items
                .into_iter()
                .take(MAX_ARRAY_ENTRIES)
                .map(|s| clean_str(s.as_ref()))
                .collect(),
        ))
    }

    /// An array of numbers: the first [`MAX_ARRAY_ENTRIES`].
    pub fn u64s(items: impl IntoIterator<Item = u64>) -> Value {
        Value(Inner::U64s(
            items.into_iter().take(MAX_ARRAY_ENTRIES).collect(),
        ))
    }

    /// Length of the JSON DPDK writes for it.
    pub fn json_len(&self) -> usize {
        match &self.0 {
            Inner::Str(s) => str_json_len(s),
            Inner::U64(n) => digits(*n),
            Inner::Int(n) => digits(n.unsigned_abs() as u64) + usize::from(*n < 0),
            Inner::Strs(v) => list_len(v.iter().map(|s| str_json_len(s))),
            Inner::U64s(v) => list_len(v.iter().map(|n| digits(*n))),
            Inner::Dict(d) => d.json_len(),
        }
    }

    fn write_json(&self, out: &mut String) {
        match &self.0 {
            Inner::Str(s) => write_str(out, s),
            Inner::U64(n) => {
                let _ = write!(out, "{n}");
            }
            Inner::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Inner::Strs(v) => {
                out.push('[');
                for (i, s) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, s);
                }
                out.push(']');
            }
            Inner::U64s(v) => {
                out.push('[');
                for (i, n) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{n}");
                }
                out.push(']');
            }
            Inner::Dict(d) => d.write_json(out),
        }
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value(Inner::U64(n))
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value(Inner::U64(n.into()))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::str(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::str(&s)
    }
}

impl From<Dict> for Value {
    fn from(d: Dict) -> Value {
        Value(Inner::Dict(d))
    }
}

/// A dict that is full: it has [`MAX_DICT_ENTRIES`] entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a telemetry dict holds at most {MAX_DICT_ENTRIES} entries")]
pub struct Full;

/// A telemetry dict: names made valid and unique on insertion, at most
/// [`MAX_DICT_ENTRIES`] entries, in insertion order (DPDK keeps it).
#[derive(Clone, Debug, PartialEq)]
pub struct Dict {
    entries: Vec<(String, Value)>,
    /// Length of the JSON object, kept as entries are added.
    json_len: usize,
}

impl Default for Dict {
    fn default() -> Dict {
        Dict::new()
    }
}

impl Dict {
    /// An empty dict.
    pub fn new() -> Dict {
        Dict {
            entries: Vec::new(),
            json_len: 2,
        }
    }

    /// Add `value` under `name`. The name is made valid (other characters
    /// become `_`, cut to [`MAX_STRING_LEN`]) and unique (`_2`, `_3`, ...
    /// appended). Refused when the dict is full.
    pub fn insert(&mut self, name: &str, value: impl Into<Value>) -> Result<(), Full> {
        if self.is_full() {
            return Err(Full);
        }
        let value = value.into();
        let name = self.key_for(name);
        self.json_len = self.len_with_entry(&name, value.json_len());
        self.entries.push((name, value));
        Ok(())
    }

    /// The JSON length this dict would have with `value` added under
    /// `name` (to check a budget before inserting).
    pub fn len_with(&self, name: &str, value: &Value) -> usize {
        self.len_with_entry(&self.key_for(name), value.json_len())
    }

    fn len_with_entry(&self, key: &str, value_len: usize) -> usize {
        // `"key":value`, and a comma unless it is the first
        self.json_len + key.len() + 3 + value_len + usize::from(!self.entries.is_empty())
    }

    /// The name `name` is stored under if inserted now.
    pub fn key_for(&self, name: &str) -> String {
        let base = clean_name(name);
        if !self.has(&base) {
            return base;
        }
        (2..)
            .map(|n| {
                let suffix = format!("_{n}");
                let mut b = base.clone();
                b.truncate(MAX_STRING_LEN - suffix.len());
                b + &suffix
            })
            .find(|k| !self.has(k))
            .unwrap_or(base)
    }

    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// [`MAX_DICT_ENTRIES`] entries.
    pub fn is_full(&self) -> bool {
        self.entries.len() >= MAX_DICT_ENTRIES
    }

    /// The entries, in order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Length of the JSON object DPDK writes for it.
    pub fn json_len(&self) -> usize {
        self.json_len
    }

    /// The JSON text DPDK writes for it (what a client receives under
    /// the command's name).
    pub fn to_json(&self) -> String {
        let mut s = String::with_capacity(self.json_len);
        self.write_json(&mut s);
        s
    }

    fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "\"{k}\":");
            v.write_json(out);
        }
        out.push('}');
    }
}

/// A valid dict name for `s`: characters other than `[A-Za-z0-9_/]`
/// become `_`; cut to [`MAX_STRING_LEN`]; an empty name becomes `_`.
pub fn clean_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '/' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_STRING_LEN)
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// A string value DPDK passes on unharmed: anything but printable ASCII
/// becomes `?`; a longer string is cut to [`MAX_STRING_LEN`] bytes, the
/// last three `...` so the cut shows.
pub fn clean_str(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .take(MAX_STRING_LEN + 1)
        .collect();
    if out.len() > MAX_STRING_LEN {
        out.truncate(MAX_STRING_LEN - 3);
        out.push_str("...");
    }
    out
}

fn str_json_len(s: &str) -> usize {
    2 + s.len() + s.bytes().filter(|b| *b == b'"' || *b == b'\\').count()
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

fn list_len(items: impl Iterator<Item = usize>) -> usize {
    let (mut len, mut n) = (2, 0);
    for l in items {
        len += l;
        n += 1;
    }
    len + n.max(1) - 1
}
