//! The handoff file on disk: written whole or not at all (a temporary
//! file renamed over it), and the wall clock its times are in.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Now, Unix time in ns.
pub fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Replace `path` by `data` (its parts, in order): a temporary file in the same directory
/// (created when missing, mode 0600: it names every client), renamed over
/// `path`. Not fsynced: the next dirigo reads it from the page cache, and
/// a power cut that tears it makes a file the checksum refuses, never
/// one misread (an fsync of 80 MB would lengthen the gap by seconds).
pub(super) fn write_unsynced(path: &Path, data: &[&[u8]]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let ctx = |what: String| {
        move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{what}: {e}"))
    };
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file's path")
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(ctx(format!("create {}", dir.display())))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| data.iter().try_for_each(|d| f.write_all(d)))
        .map_err(ctx(format!("write {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(ctx(format!(
        "rename {} to {}",
        tmp.display(),
        path.display()
    )))
}
