//! dirigoadm's one option beyond ipvsadm's: `--socket PATH`.

use super::error::AdmError;
use std::path::PathBuf;

/// Take `--socket PATH` / `--socket=PATH` out of `args` (dirigoadm's only
/// option beyond ipvsadm's). The first element (program name) is kept.
pub fn split_socket(args: &[String]) -> Result<(Option<PathBuf>, Vec<String>), AdmError> {
    let mut out = Vec::with_capacity(args.len());
    let mut sock = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--socket" {
            let v = it
                .next()
                .ok_or_else(|| AdmError::usage("option `--socket' requires an argument"))?;
            sock = Some(PathBuf::from(v));
        } else if let Some(v) = a.strip_prefix("--socket=") {
            sock = Some(PathBuf::from(v));
        } else {
            out.push(a.clone());
        }
    }
    Ok((sock, out))
}
