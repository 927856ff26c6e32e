//! Reading dirigo's metrics endpoint in tests: a plain HTTP GET, a strict
//! reader of the Prometheus text format (0.0.4) — every line must be a
//! HELP, a TYPE or a sample with well-formed labels and escapes, every
//! sample's family typed before it — and the metric names a Grafana
//! dashboard's PromQL queries.
#![allow(dead_code)]

pub mod hostile;

use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A sample's labels, in order.
pub type LabelList = Vec<(String, String)>;

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Its name (`x_bucket` for a histogram's bucket).
    pub name: String,
    /// Its labels, in order.
    pub labels: LabelList,
    /// Its value.
    pub value: f64,
}

/// A parsed exposition.
#[derive(Debug, Default)]
pub struct Exposition {
    /// Every sample, in order.
    pub samples: Vec<Sample>,
    /// Family name -> type.
    pub types: HashMap<String, String>,
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut c = s.chars();
    let ok_first = |ch: char| ch.is_ascii_alphabetic() || ch == '_' || (colon && ch == ':');
    matches!(c.next(), Some(f) if ok_first(f))
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || (colon && ch == ':'))
}

fn value(s: &str) -> Option<f64> {
    match s {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// `{k="v",...}` at the start of `s`: the labels and the rest.
fn labels(s: &str) -> Result<(LabelList, &str), String> {
    let mut rest = s.strip_prefix('{').ok_or("no {")?;
    let mut out = Vec::new();
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((out, r));
        }
        let eq = rest.find('=').ok_or("label without =")?;
        let key = &rest[..eq];
        if !is_name(key, false) {
            return Err(format!("bad label name {key:?}"));
        }
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or("label value not quoted")?;
        let mut v = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("unterminated label value".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => v.push('\\'),
                    Some((_, '"')) => v.push('"'),
                    Some((_, 'n')) => v.push('\n'),
                    other => return Err(format!("bad escape {other:?}")),
                },
                Some((_, '\n')) => return Err("raw newline in a label value".into()),
                Some((_, c)) => v.push(c),
            }
        };
        out.push((key.to_string(), v));
        rest = &rest[end + 1..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with('}') {
            return Err(format!("expected , or }} at {rest:?}"));
        }
    }
}

/// The family a sample belongs to, given the types seen so far.
fn family<'a>(name: &'a str, types: &HashMap<String, String>) -> Option<&'a str> {
    if types.contains_key(name) {
        return Some(name);
    }
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(f) = name.strip_suffix(suffix) {
            if types
                .get(f)
                .is_some_and(|t| t == "histogram" || t == "summary")
            {
                return Some(f);
            }
        }
    }
    None
}

/// Read `text` strictly; the first problem, with its line number.
pub fn parse(text: &str) -> Result<Exposition, String> {
    let mut e = Exposition::default();
    let mut helped = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let err = |m: String| format!("line {}: {m}: {line:?}", i + 1);
        if line.is_empty() {
            return Err(err("empty line".into()));
        }
        if let Some(r) = line.strip_prefix("# HELP ") {
            let name = r.split(' ').next().unwrap_or("");
            if !is_name(name, true) || !helped.insert(name.to_string()) {
                return Err(err("bad or repeated HELP".into()));
            }
            continue;
        }
        if let Some(r) = line.strip_prefix("# TYPE ") {
            let f: Vec<&str> = r.split(' ').collect();
            let ok_type = matches!(
                f.get(1).copied(),
                Some("counter" | "gauge" | "histogram" | "summary" | "untyped")
            );
            if f.len() != 2 || !is_name(f[0], true) || !ok_type {
                return Err(err("bad TYPE".into()));
            }
            if e.types.insert(f[0].into(), f[1].into()).is_some() {
                return Err(err("repeated TYPE".into()));
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let end = line
            .find(['{', ' '])
            .ok_or_else(|| err("no value".into()))?;
        let name = &line[..end];
        if !is_name(name, true) {
            return Err(err("bad metric name".into()));
        }
        let (labels, rest) = if line[end..].starts_with('{') {
            labels(&line[end..]).map_err(err)?
        } else {
            (Vec::new(), &line[end..])
        };
        let rest = rest
            .strip_prefix(' ')
            .ok_or_else(|| err("no space before the value".into()))?;
        let mut parts = rest.split(' ');
        let v = parts
            .next()
            .and_then(value)
            .ok_or_else(|| err("bad value".into()))?;
        if let Some(ts) = parts.next() {
            ts.parse::<i64>().map_err(|_| err("bad timestamp".into()))?;
        }
        if parts.next().is_some() {
            return Err(err("trailing text".into()));
        }
        let fam = family(name, &e.types).ok_or_else(|| err("sample before its TYPE".into()))?;
        if e.types[fam] == "counter" && !name.ends_with("_total") {
            return Err(err("a counter without _total".into()));
        }
        e.samples.push(Sample {
            name: name.into(),
            labels,
            value: v,
        });
    }
    Ok(e)
}

impl Exposition {
    /// Samples named `name` that carry every label of `with`.
    pub fn all(&self, name: &str, with: &[(&str, &str)]) -> Vec<&Sample> {
        self.samples
            .iter()
            .filter(|s| {
                s.name == name
                    && with
                        .iter()
                        .all(|(k, v)| s.labels.iter().any(|(a, b)| a == k && b == v))
            })
            .collect()
    }

    /// The one sample named `name` with `with`; panics unless exactly one.
    pub fn one(&self, name: &str, with: &[(&str, &str)]) -> f64 {
        let v = self.all(name, with);
        assert_eq!(v.len(), 1, "{name} {with:?}: {v:?}");
        v[0].value
    }

    /// Every sample name.
    pub fn names(&self) -> BTreeSet<&str> {
        self.samples.iter().map(|s| s.name.as_str()).collect()
    }
}

/// `GET /metrics` on `addr`: the status line and the body.
pub fn get(addr: SocketAddr, timeout: Duration) -> Result<(String, String), String> {
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: dirigo\r\nUser-Agent: test\r\n\r\n")
        .map_err(|e| format!("write: {e}"))?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).map_err(|e| format!("read: {e}"))?;
    let text = String::from_utf8(out).map_err(|e| e.to_string())?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no header end in {text:?}"))?;
    let status = head.lines().next().unwrap_or("").to_string();
    Ok((status, body.to_string()))
}

/// A scrape that must succeed: the body, parsed strictly.
pub fn scrape(addr: SocketAddr) -> (String, Exposition) {
    let (status, body) = get(addr, Duration::from_secs(5)).expect("scrape");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}\n{body}");
    let e = parse(&body).unwrap_or_else(|m| panic!("bad exposition: {m}\n{body}"));
    (body, e)
}

/// The metric names (`node_ipvs_*`, `dirigo_*`) in every PromQL `expr`
/// and templating `query` of a Grafana dashboard.
pub fn dashboard_metrics(dash: &serde_json::Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dash];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    if let (true, Some(q)) = (k == "expr" || k == "query", x.as_str()) {
                        for w in
                            q.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                        {
                            if w.starts_with("node_ipvs_") || w.starts_with("dirigo_") {
                                out.insert(w.to_string());
                            }
                        }
                    }
                    stack.push(x);
                }
            }
            serde_json::Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    out
}
