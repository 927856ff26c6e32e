//! What can be checked of `[eal] args` without starting EAL: every option
//! is one DPDK 22.11's EAL knows (getopt's rules: `--name value`,
//! `--name=value`, an unambiguous prefix of a long name, `-lVALUE`), the
//! lcore options' syntax (`-l`, `-c`, `--lcores`) and that they give
//! dirigo at least two lcores (the first runs the control thread, every
//! other one a worker), the values EAL takes from a fixed set, and the
//! combinations EAL (or dirigo) refuses.

/// Whether an option takes a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Val {
    No,
    Req,
    /// only as `--name=value`
    Opt,
}

/// DPDK 22.11's long options (`eal_long_options`).
const LONG: &[(&str, Val)] = &[
    ("allow", Val::Req),
    ("base-virtaddr", Val::Req),
    ("block", Val::Req),
    ("create-uio-dev", Val::No),
    ("file-prefix", Val::Req),
    ("force-max-simd-bitwidth", Val::Req),
    ("help", Val::No),
    ("huge-dir", Val::Req),
    ("huge-unlink", Val::Opt),
    ("huge-worker-stack", Val::Opt),
    ("in-memory", Val::No),
    ("iova-mode", Val::Req),
    ("lcores", Val::Req),
    ("legacy-mem", Val::No),
    ("log-level", Val::Req),
    ("main-lcore", Val::Req),
    ("match-allocations", Val::No),
    ("mbuf-pool-ops-name", Val::Req),
    ("no-hpet", Val::No),
    ("no-huge", Val::No),
    ("no-pci", Val::No),
    ("no-shconf", Val::No),
    ("no-telemetry", Val::No),
    ("proc-type", Val::Req),
    ("single-file-segments", Val::No),
    ("socket-limit", Val::Req),
    ("socket-mem", Val::Req),
    ("syslog", Val::Req),
    ("telemetry", Val::No),
    ("trace", Val::Req),
    ("trace-bufsz", Val::Req),
    ("trace-dir", Val::Req),
    ("trace-mode", Val::Req),
    ("vdev", Val::Req),
    ("vfio-intr", Val::Req),
    ("vfio-vf-token", Val::Req),
    ("vmware-tsc-map", Val::No),
];

/// Short options (`eal_short_options`: "a:b:c:s:d:hl:S:m:n:r:v") and the
/// long name each stands for, if any.
const SHORT: &[(char, Val, &str)] = &[
    ('a', Val::Req, "allow"),
    ('b', Val::Req, "block"),
    ('c', Val::Req, "-c"),
    ('s', Val::Req, "-s"),
    ('d', Val::Req, "-d"),
    ('h', Val::No, "help"),
    ('l', Val::Req, "-l"),
    ('S', Val::Req, "-S"),
    ('m', Val::Req, "-m"),
    ('n', Val::Req, "-n"),
    ('r', Val::Req, "-r"),
    ('v', Val::No, "-v"),
];

/// `RTE_MAX_LCORE` of Debian's DPDK build.
const MAX_LCORE: u32 = 128;
/// Physical CPUs `--lcores` may name (`CPU_SETSIZE`).
const MAX_CPU: u32 = 1024;

/// One option as given: its canonical name (the long name, or `-c` for a
/// short option without one), its value, and where it is (the index of
/// the argument that names it).
struct Given {
    name: &'static str,
    value: Option<String>,
    at: usize,
}

/// A problem and the index of the argument it is about.
pub(super) type EalProblem = (Option<usize>, String);

/// Every problem found in `args` (EAL's arguments, without the program
/// name).
pub(super) fn check(args: &[String]) -> Vec<EalProblem> {
    let mut problems = Vec::new();
    let given = options(args, &mut problems);
    lcores(&given, &mut problems);
    values(&given, &mut problems);
    combinations(&given, &mut problems);
    problems
}

/// The long option `name` (exact, or an unambiguous prefix as getopt
/// takes it).
fn long(name: &str) -> Result<(&'static str, Val), String> {
    if let Some((n, v)) = LONG.iter().find(|(n, _)| *n == name) {
        return Ok((n, *v));
    }
    let matches: Vec<_> = LONG.iter().filter(|(n, _)| n.starts_with(name)).collect();
    match matches.as_slice() {
        [(n, v)] if !name.is_empty() => Ok((n, *v)),
        [] | [_] => Err(format!(
            "unknown EAL option '--{name}' (DPDK 22.11's EAL does not have it)"
        )),
        many => Err(format!(
            "EAL option '--{name}' is ambiguous: {}",
            many.iter()
                .map(|(n, _)| format!("--{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Split `args` into options with their values, as getopt_long would.
fn options(args: &[String], problems: &mut Vec<EalProblem>) -> Vec<Given> {
    let mut given = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let at = i;
        i += 1;
        if a == "--" {
            for j in i..args.len() {
                problems.push((
                    Some(j),
                    format!("'{}' follows '--': EAL stops reading there", args[j]),
                ));
            }
            break;
        }
        if let Some(rest) = a.strip_prefix("--") {
            given.extend(long_option(args, rest, at, &mut i, problems));
        } else if let Some(rest) = a.strip_prefix('-').filter(|r| !r.is_empty()) {
            short_options(args, rest, at, &mut i, &mut given, problems);
        } else {
            problems.push((
                Some(at),
                format!("'{a}' is not an EAL option (EAL would ignore it)"),
            ));
        }
    }
    given
}

/// `--NAME[=VALUE]` (`rest`, at `at`); a required value not given inline
/// is the next argument, `args[*i]`.
fn long_option(
    args: &[String],
    rest: &str,
    at: usize,
    i: &mut usize,
    problems: &mut Vec<EalProblem>,
) -> Option<Given> {
    let (name, inline) = match rest.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (rest, None),
    };
    let (name, kind) = match long(name) {
        Ok(x) => x,
        Err(e) => {
            problems.push((Some(at), e));
            return None;
        }
    };
    let value = match (kind, inline) {
        (Val::No, Some(_)) => {
            problems.push((Some(at), format!("EAL option '--{name}' takes no value")));
            return None;
        }
        (Val::Req, None) => match args.get(*i) {
            Some(v) => {
                *i += 1;
                Some(v.clone())
            }
            None => {
                problems.push((Some(at), format!("EAL option '--{name}' needs a value")));
                return None;
            }
        },
        (_, v) => v,
    };
    Some(Given { name, value, at })
}

/// `-abc` (`rest`, at `at`): flags, then at most one option with a value,
/// attached or the next argument, `args[*i]`.
fn short_options(
    args: &[String],
    rest: &str,
    at: usize,
    i: &mut usize,
    given: &mut Vec<Given>,
    problems: &mut Vec<EalProblem>,
) {
    let chars: Vec<char> = rest.chars().collect();
    for (j, &c) in chars.iter().enumerate() {
        let Some(&(_, kind, name)) = SHORT.iter().find(|(s, _, _)| *s == c) else {
            problems.push((Some(at), format!("unknown EAL option '-{c}'")));
            return;
        };
        if kind == Val::No {
            given.push(Given {
                name,
                value: None,
                at,
            });
            continue;
        }
        let attached: String = chars[j + 1..].iter().collect();
        let value = if !attached.is_empty() {
            Some(attached)
        } else if let Some(v) = args.get(*i) {
            *i += 1;
            Some(v.clone())
        } else {
            problems.push((Some(at), format!("EAL option '-{c}' needs a value")));
            return;
        };
        given.push(Given { name, value, at });
        return;
    }
}

fn find<'a>(given: &'a [Given], name: &str) -> Option<&'a Given> {
    given.iter().find(|g| g.name == name)
}

/// `N` or `N-M` (either order, as EAL takes it), each below `max`.
fn range(s: &str, max: u32, what: &str) -> Result<Vec<u32>, String> {
    let num = |t: &str| -> Result<u32, String> {
        let t = t.trim();
        let n: u32 = t
            .parse()
            .map_err(|_| format!("'{t}' is not {what} number"))?;
        if n >= max {
            return Err(format!("{what} {n} is not below {max}"));
        }
        Ok(n)
    };
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    Ok((a.min(b)..=a.max(b)).collect())
}

/// `-l`: `0,2-5`.
fn corelist(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        out.extend(range(part, MAX_LCORE, "an lcore")?);
    }
    Ok(out)
}

/// `-c`: a hexadecimal mask (`0x3`, `3`).
fn coremask(s: &str) -> Result<Vec<u32>, String> {
    let hex = s.trim();
    let hex = hex
        .strip_prefix("0x")
        .or_else(|| hex.strip_prefix("0X"))
        .unwrap_or(hex);
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("'{s}' is not a hexadecimal core mask"));
    }
    let mut out = Vec::new();
    for (pos, c) in hex.bytes().rev().enumerate() {
        let v = (c as char).to_digit(16).unwrap_or(0);
        for bit in 0..4 {
            if v & (1 << bit) != 0 {
                let lcore = (pos * 4 + bit) as u32;
                if lcore >= MAX_LCORE {
                    return Err(format!(
                        "core mask '{s}' names lcore {lcore}, not below {MAX_LCORE} (use --lcores to map high CPUs)"
                    ));
                }
                out.push(lcore);
            }
        }
    }
    Ok(out)
}

/// A `--lcores` group: `N`, `N-M` or `(list)`.
fn group(s: &str, max: u32, what: &str) -> Result<Vec<u32>, String> {
    let s = s.trim();
    let inner = match (s.strip_prefix('('), s.strip_suffix(')')) {
        (Some(_), Some(_)) => &s[1..s.len() - 1],
        (None, None) => s,
        _ => return Err(format!("unbalanced parentheses in '{s}'")),
    };
    if inner.contains(['(', ')']) {
        return Err(format!("nested parentheses in '{s}'"));
    }
    let mut out = Vec::new();
    for p in inner.split(',') {
        out.extend(range(p, max, what)?);
    }
    Ok(out)
}

/// `--lcores`: `lcores[@cpus][,lcores[@cpus]...]`, groups in parentheses.
fn lcore_map(s: &str) -> Result<Vec<u32>, String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("unbalanced parentheses in '{s}'"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced parentheses in '{s}'"));
    }
    items.push(&s[start..]);
    let mut out = Vec::new();
    for item in items {
        let (l, cpus) = match item.split_once('@') {
            Some((l, c)) => (l, Some(c)),
            None => (item, None),
        };
        let ids = group(l, MAX_LCORE, "an lcore")?;
        if let Some(c) = cpus {
            group(c, MAX_CPU, "a CPU")?;
        }
        out.extend(ids);
    }
    Ok(out)
}

/// The lcore options: one of them, valid, at least two lcores, the main
/// lcore among them.
fn lcores(given: &[Given], problems: &mut Vec<EalProblem>) {
    let opts: Vec<&Given> = given
        .iter()
        .filter(|g| matches!(g.name, "-l" | "-c" | "lcores"))
        .collect();
    let Some(first) = opts.first() else {
        return; // EAL takes every CPU: nothing to say before it starts
    };
    for extra in &opts[1..] {
        problems.push((
            Some(extra.at),
            format!(
                "give the lcores once: '{}' and '{}' both set them (EAL ignores one)",
                shown(first.name),
                shown(extra.name)
            ),
        ));
    }
    let v = first.value.as_deref().unwrap_or_default();
    let set = match first.name {
        "-l" => corelist(v),
        "-c" => coremask(v),
        _ => lcore_map(v),
    };
    let mut set = match set {
        Ok(s) => s,
        Err(e) => {
            problems.push((
                Some(first.at),
                format!("bad {} value '{v}': {e}", shown(first.name)),
            ));
            return;
        }
    };
    set.sort_unstable();
    set.dedup();
    if set.len() < 2 {
        problems.push((
            Some(first.at),
            format!(
                "{} '{v}' gives {} lcore(s): dirigo needs at least two, the first for the control thread and one per worker (e.g. \"-l\", \"0-1\")",
                shown(first.name),
                set.len()
            ),
        ));
    }
    if let Some(m) = find(given, "main-lcore") {
        let v = m.value.as_deref().unwrap_or_default();
        match v.parse::<u32>() {
            Ok(n) if set.contains(&n) => {}
            Ok(n) => problems.push((
                Some(m.at),
                format!("--main-lcore {n} is not one of the lcores {set:?}"),
            )),
            Err(_) => problems.push((
                Some(m.at),
                format!("--main-lcore '{v}' is not an lcore number"),
            )),
        }
    }
}

/// How an option is written.
fn shown(name: &str) -> String {
    if name.starts_with('-') {
        name.to_string()
    } else {
        format!("--{name}")
    }
}

/// Values from a fixed set, numbers, names.
fn values(given: &[Given], problems: &mut Vec<EalProblem>) {
    for g in given {
        let v = g.value.as_deref().unwrap_or_default();
        let bad = |want: &str| Some(format!("{} '{v}': {want}", shown(g.name)));
        let msg = match g.name {
            "proc-type" => match v {
                "primary" | "auto" => None,
                "secondary" => {
                    Some("--proc-type secondary: dirigo runs as DPDK's primary process".to_string())
                }
                _ => bad("want primary, secondary or auto"),
            },
            "iova-mode" if !matches!(v, "pa" | "va") => bad("want pa or va"),
            "vfio-intr" if !matches!(v, "legacy" | "msi" | "msix") => {
                bad("want legacy, msi or msix")
            }
            "huge-unlink" if !matches!(v, "" | "existing" | "always" | "never") => {
                bad("want existing, always or never")
            }
            "-n" | "-r" | "-m" if v.parse::<u64>().is_err() => bad("not a number"),
            "-d" if !std::path::Path::new(v).exists() => bad("no such driver file or directory"),
            "file-prefix" if v.is_empty() || v.contains('%') => bad("a non-empty name without '%'"),
            _ => None,
        };
        if let Some(m) = msg {
            problems.push((Some(g.at), m));
        }
    }
}

/// Options that exclude each other (EAL's `eal_check_common_options`,
/// and `--in-memory` with `--no-huge`, which fails on this DPDK).
fn combinations(given: &[Given], problems: &mut Vec<EalProblem>) {
    let huge_unlink_never =
        find(given, "huge-unlink").is_some_and(|g| g.value.as_deref() == Some("never"));
    let pairs: [(&str, &str, bool, &str); 11] = [
        (
            "in-memory",
            "no-huge",
            true,
            "use --no-huge (with -m MB) alone",
        ),
        ("-m", "socket-mem", true, "EAL refuses both"),
        ("socket-mem", "no-huge", true, "EAL refuses both"),
        ("huge-unlink", "no-huge", true, "EAL refuses both"),
        ("huge-worker-stack", "no-huge", true, "EAL refuses both"),
        (
            "single-file-segments",
            "huge-unlink",
            true,
            "EAL refuses both",
        ),
        (
            "in-memory",
            "huge-unlink",
            huge_unlink_never,
            "--huge-unlink=never contradicts --in-memory",
        ),
        ("legacy-mem", "in-memory", true, "EAL refuses both"),
        ("legacy-mem", "match-allocations", true, "EAL refuses both"),
        ("no-huge", "match-allocations", true, "EAL refuses both"),
        ("allow", "block", true, "EAL refuses both"),
    ];
    for (a, b, applies, why) in pairs {
        if let (Some(x), Some(y), true) = (find(given, a), find(given, b), applies) {
            let later = x.at.max(y.at);
            problems.push((
                Some(later),
                format!("{} and {} cannot go together: {why}", shown(a), shown(b)),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
