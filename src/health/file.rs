//! The file check (keepalived FILE_CHECK with a `track_file`): the file
//! holds an integer, read at every check.
//!
//! * factor 0: a value other than 0 is down (0 is down with `reverse`);
//! * otherwise the value times the factor (negated with `reverse`) is
//!   added to the server's configured weight (the sum at least 0, at most
//!   65535); a product at or below -2^31 is down, as keepalived's fault.
//!
//! An unreadable file, or one that does not hold an integer in
//! -2^31..=2^31, fails the check.

/// keepalived's IPVS_WEIGHT_FAULT: a weight change this low is down.
const FAULT: i64 = i32::MIN as i64;

/// The limits of a value (keepalived's).
const VALUE: std::ops::RangeInclusive<i64> = -(1 << 31)..=(1 << 31);

/// Judge the file's text: `Ok((detail, weight change))` up, `Err(detail)`
/// down. The change is `None` with factor 0 (the weight is left alone).
pub fn judge(text: &str, factor: i64, reverse: bool) -> Result<(String, Option<i64>), String> {
    let t = text.trim();
    let v: i64 = match t.parse() {
        Ok(v) if VALUE.contains(&v) => v,
        _ if t.is_empty() => return Err("empty file".into()),
        _ => {
            let shown: String = t.chars().take(40).collect();
            return Err(format!("{shown:?} is not an integer in -2^31..=2^31"));
        }
    };
    if factor == 0 {
        return if (v != 0) != reverse {
            Err(format!("value {v}"))
        } else {
            Ok((format!("value {v}"), None))
        };
    }
    let change = v * factor * if reverse { -1 } else { 1 };
    if change <= FAULT {
        return Err(format!("value {v}: weight change {change}"));
    }
    Ok((format!("value {v}: weight {change:+}"), Some(change)))
}

/// Read and judge the file (its first 256 bytes; blocking: the prober
/// runs it on the runtime's blocking pool).
pub fn probe(path: &str, factor: i64, reverse: bool) -> Result<(String, Option<i64>), String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(256).read_to_string(&mut text))
        .map_err(|e| format!("{path}: {}", super::net::io_text(&e)))?;
    judge(&text, factor, reverse)
}
