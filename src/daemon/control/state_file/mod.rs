//! The state file (`[control] state_file`): the service table saved after
//! every accepted change and loaded at start, so nothing configured with
//! dirigoadm is lost on a restart.
//!
//! One rule format: the file holds exactly what `dirigoadm -S` prints
//! ([`format::save`] over the configured table), preceded by a comment and
//! a `--set` line for the timeouts, and it is read back with `-R`'s parser
//! ([`parse_rules`]); `dirigoadm -R < FILE` restores it too. The rules
//! replace the configuration's services: the file is the whole saved
//! table, as `ipvsadm -S` output is.
//!
//! Writes are atomic: a temporary file in the same directory, fsync,
//! rename over the old file, fsync of the directory. A crash at any moment
//! leaves the old rules or the new, never a torn file. A failed write is
//! logged and counted, never fatal: the change stays applied in memory and
//! the next change writes the whole table again.

use super::apply::{apply, ServiceTable};
use crate::lb::group::parse_member;
use crate::lb::mark::{check_rules, MarkRule};
use crate::lb::spec::Timeouts;
use dirigo_config::Problem;
use dirigo_proto::adm::{error_message, format, parse_rules};
use dirigo_proto::view::{DestInfo, ServiceInfo, ServiceList};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The comment the daemon's state file starts with.
pub const HEADER: &str =
    "# dirigo state file: the service table as `dirigoadm -S` prints it, and the timeouts.\n\
# Written by dirigo after every change and loaded at start in place of the config's services\n\
# (docs/OPERATIONS.md, \"The state file\"). Edit only while dirigo is stopped.\n";

/// A state file dirigo refuses: where and why (`FILE:LINE: message`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problem.located(path))]
pub struct StateError {
    /// The state file's path.
    pub path: String,
    /// The line (when one is at fault) and the message.
    pub problem: Problem,
}

/// A loaded state file.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    /// The saved table (it replaces the configuration's services).
    pub services: ServiceTable,
    /// The timeouts: the configuration's, with the file's `--set` applied.
    pub timeouts: Timeouts,
    /// The saved mark rules, when the file has a [`MARKS`] section (they
    /// replace the configuration's `[[mark]]`s); None: the config's.
    pub marks: Option<Vec<MarkRule>>,
}

/// The line that starts the mark rules' section. The section's lines are
/// comments to `-R` (and to ipvsadm): the file stays an ipvsadm-restore
/// file, and dirigo reads its own rules from them.
pub const MARKS: &str = "#marks (dirigo's mark rules, dirigoctl mark)";

/// The prefix of one saved mark rule's line.
const MARK: &str = "#mark ";

/// The rules `dirigoadm -S` prints for `services` (configured weights:
/// the table as the operator set it, not health checks' verdicts).
pub fn rules(services: &ServiceTable) -> String {
    let list = ServiceList {
        conn_tab_size: 0,
        services: services
            .iter()
            .map(|(spec, dests)| ServiceInfo {
                spec: spec.clone(),
                stats: Default::default(),
                rate: Default::default(),
                dests: dests
                    .iter()
                    .map(|d| DestInfo {
                        spec: d.clone(),
                        active: 0,
                        inactive: 0,
                        persist: 0,
                        stats: Default::default(),
                        rate: Default::default(),
                    })
                    .collect(),
            })
            .collect(),
    };
    format::save(&list)
}

/// The state file's whole text: [`HEADER`], `--set TCP TCPFIN UDP`, then
/// the [`rules`], then (when `marks` is given) the [`MARKS`] section, one
/// `#mark RULE` line per rule.
pub fn render(services: &ServiceTable, timeouts: &Timeouts, marks: Option<&[MarkRule]>) -> String {
    let mut text = format!(
        "{HEADER}--set {} {} {}\n{}",
        timeouts.tcp,
        timeouts.tcpfin,
        timeouts.udp,
        rules(services)
    );
    if let Some(marks) = marks {
        text.push_str(MARKS);
        text.push('\n');
        for r in marks {
            text.push_str(&format!("{MARK}{r}\n"));
        }
    }
    text
}

/// Parse state-file text: every rule applied in order to an empty table
/// (and `--set` to `timeouts`). A refused line is `(line, message)`.
pub fn parse(text: &str, timeouts: Timeouts) -> Result<Saved, (usize, String)> {
    let mut saved = Saved {
        services: Vec::new(),
        timeouts,
        marks: None,
    };
    for (n, line) in text.lines().enumerate() {
        if line.trim_end() == MARKS {
            saved.marks.get_or_insert_with(Vec::new);
        } else if let Some(r) = line.strip_prefix(MARK) {
            let rule: MarkRule = r.parse().map_err(|e| (n + 1, e))?;
            let Some(marks) = saved.marks.as_mut() else {
                return Err((n + 1, format!("a mark rule before the line {MARKS:?}")));
            };
            marks.push(rule);
            check_rules(marks).map_err(|e| (n + 1, e))?;
        }
    }
    for (n, cmd) in parse_rules(text)? {
        if let Some(c) = cmd.mutation() {
            apply(&mut saved.services, &mut saved.timeouts, c)
                .map_err(|e| (n, error_message(&cmd, &e)))?;
        }
    }
    // a service group's members, after every service is there
    for (n, line) in text.lines().enumerate() {
        if let Some(m) = line.strip_prefix(format::MEMBER) {
            member(&mut saved.services, m).map_err(|e| (n + 1, e))?;
        }
    }
    Ok(saved)
}

/// Add the member of one `#member SERVICE MEMBER` line (`-S`'s form,
/// [`format::MEMBER`]) to its service in `services`.
fn member(services: &mut ServiceTable, line: &str) -> Result<(), String> {
    let (spec, _) = services
        .iter_mut()
        .filter(|(s, _)| line.starts_with(&format!("{} ", format::service_rule(&s.key))))
        .max_by_key(|(s, _)| format::service_rule(&s.key).len())
        .ok_or_else(|| format!("a group member of no service above: {line:?}"))?;
    let text = &line[format::service_rule(&spec.key).len() + 1..];
    let keys = parse_member(text, spec.key.proto, spec.key.vip.is_ipv6())?;
    spec.members.extend(keys);
    Ok(())
}

/// Load the state file at `path` over the configuration's `timeouts`.
/// `Ok(None)`: there is none yet (start with the configuration's
/// services). Any other problem refuses the start.
pub fn load(path: &str, timeouts: Timeouts) -> Result<Option<Saved>, StateError> {
    let refuse = |line, msg| StateError {
        path: path.into(),
        problem: Problem { line, msg },
    };
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refuse(None, format!("cannot read the state file: {e}"))),
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        refuse(Some(line), "not UTF-8 text".into())
    })?;
    parse(&text, timeouts)
        .map(Some)
        .map_err(|(line, msg)| refuse(Some(line), msg))
}

/// Replace the file at `path` by `data` atomically: write a temporary file
/// in the same directory (created when missing), fsync it, rename it over
/// `path`, fsync the directory. On failure `path` is left as it was.
pub fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    let ctx = |what: String| move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file's path"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(ctx(format!("create {}", dir.display())))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()
    })()
    .map_err(ctx(format!("write {}", tmp.display())));
    if let Err(e) = written.and_then(|_| {
        fs::rename(&tmp, path).map_err(ctx(format!(
            "rename {} to {}",
            tmp.display(),
            path.display()
        )))
    }) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(ctx(format!("fsync {}", dir.display())))
}

/// The daemon's state file: where it is, what was last saved, how many
/// writes failed. Owned by the control state (behind its mutex), so writes
/// are serialised with the changes they save.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    saved: Option<String>,
    failed: Arc<AtomicU64>,
}

impl StateFile {
    /// A state file at `path`, nothing saved yet.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        StateFile {
            path: path.into(),
            saved: None,
            failed: Arc::default(),
        }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes that failed since start.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// That count, to read without the control state's lock (`dirigoctl
    /// drops`, the metrics).
    pub fn failed_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.failed)
    }

    /// Take `services` and `timeouts` as saved without writing (at start:
    /// the table just loaded, or the configuration's, which is not written
    /// until something changes it).
    pub fn mark_saved(
        &mut self,
        services: &ServiceTable,
        timeouts: &Timeouts,
        marks: Option<&[MarkRule]>,
    ) {
        self.saved = Some(render(services, timeouts, marks));
    }

    /// Save `services` and `timeouts` unless they are what was last saved
    /// (a health check's refresh changes nothing here). A failure is
    /// logged and counted; the next save writes the whole table again.
    pub fn save(
        &mut self,
        services: &ServiceTable,
        timeouts: &Timeouts,
        marks: Option<&[MarkRule]>,
    ) -> io::Result<()> {
        let text = render(services, timeouts, marks);
        if self.saved.as_deref() == Some(text.as_str()) {
            return Ok(());
        }
        match write_atomic(&self.path, text.as_bytes()) {
            Ok(()) => {
                self.saved = Some(text);
                Ok(())
            }
            Err(e) => {
                let n = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
                eprintln!(
                    "dirigo: warning: state file {}: cannot save the change ({} failed write(s) so far; \
                     the change is applied, the file keeps the previous rules): {e}",
                    self.path.display(),
                    n
                );
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests;
