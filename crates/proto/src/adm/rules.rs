//! The rule format (ipvsadm-save text) read back: `-R` and the daemon's
//! state file.

use super::args;
use super::command::Command;
use super::error::AdmError;
use crate::proto::BatchCmd;

/// Split a `-R` input line into words (whitespace separated, `"..."` and
/// `'...'` quoting, `#` starts a comment). Empty result = skip the line.
pub fn split_line(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c == '#' && !in_word => break,
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Parse ipvsadm-save text into `(line number, command)` pairs; a refused
/// line is `Err((line number, message))`. Every non-empty line must be a
/// mutating command. The one reader of the rule format: `-R` and the
/// daemon's state file both use it.
pub fn parse_rules(text: &str) -> Result<Vec<(usize, Command)>, (usize, String)> {
    let mut cmds = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut words = split_line(line);
        if words.is_empty() {
            continue;
        }
        words.insert(0, "dirigoadm".into());
        let cmd = args::parse(&words).map_err(|e| (n + 1, e.msg))?;
        if cmd.mutation().is_none() {
            return Err((n + 1, format!("not a rule: {}", line.trim())));
        }
        cmds.push((n + 1, cmd));
    }
    Ok(cmds)
}

/// Parse ipvsadm-save text (as `-R` reads it) into `(line number,
/// command)` pairs. Every non-empty line must be a mutating command.
pub fn parse_restore_lines(text: &str) -> Result<Vec<(usize, Command)>, AdmError> {
    parse_rules(text).map_err(|(n, msg)| AdmError::usage(format!("line {n}: {msg}")))
}

/// Parse ipvsadm-save text (as `-R` reads it) into one batch.
pub fn parse_restore(text: &str) -> Result<Vec<BatchCmd>, AdmError> {
    Ok(parse_restore_lines(text)?
        .iter()
        .filter_map(|(_, c)| c.mutation().cloned())
        .collect())
}
