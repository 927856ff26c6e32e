//! `dirigo --check`: every shipped configuration is valid, and each broken
//! one under tests/fixtures/check/ is refused with every problem it has,
//! each as `FILE:LINE: message`. A fixture says what it expects in
//! comments: `# expect LINE: part of the message`, in file order.

use std::path::{Path, PathBuf};
use std::process::Command;

fn check(file: &Path) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_dirigo"))
        .arg("--check")
        .arg("--config")
        .arg(file)
        .output()
        .expect("run dirigo --check");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every `.toml` below `dir`.
fn tomls(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(tomls(&p));
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_shipped_configuration_is_valid() {
    let files = tomls(&root().join("conf"));
    assert!(files.len() >= 2, "{files:?}");
    for f in &files {
        let (code, out, err) = check(f);
        assert_eq!(code, 0, "{}: {err}", f.display());
        assert!(out.contains("is valid"), "{out}");
        assert!(err.is_empty(), "{err}");
    }
}

/// `(line, text)` of each `# expect LINE: text` comment.
fn expectations(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# expect "))
        .map(|l| {
            let (n, t) = l.split_once(": ").expect("# expect LINE: text");
            (n.parse().expect("a line number"), t.to_string())
        })
        .collect()
}

#[test]
fn broken_configurations_are_refused_with_each_line() {
    let files = tomls(&root().join("tests/fixtures/check"));
    assert!(files.len() >= 6, "{files:?}");
    for f in files {
        let want = expectations(&std::fs::read_to_string(&f).unwrap());
        assert!(!want.is_empty(), "{}: no # expect lines", f.display());
        let (code, out, err) = check(&f);
        let name = f.display().to_string();
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(!err.contains("panicked"), "{err}");
        let got: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with(&format!("{name}:")))
            .collect();
        assert_eq!(got.len(), want.len(), "{name}: want {want:?}, got:\n{err}");
        for (g, (line, text)) in got.iter().zip(&want) {
            let prefix = format!("{name}:{line}: ");
            assert!(
                g.starts_with(&prefix) && g.contains(text.as_str()),
                "{name}: want line {line} saying {text:?}, got {g:?}\n{err}"
            );
        }
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("dirigo: ") && last.contains(&format!("{} problem", want.len())),
            "{last}"
        );
    }
}

/// The daemon refuses the same file the same way (each line prefixed,
/// exit 2), before it starts anything.
#[test]
fn the_daemon_says_the_same() {
    let f = root().join("tests/fixtures/check/references.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_dirigo"))
        .arg("--config")
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let want = expectations(&std::fs::read_to_string(&f).unwrap());
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), want.len(), "{err}");
    for (l, (n, text)) in lines.iter().zip(&want) {
        let prefix = format!("dirigo: invalid config {}:{n}: ", f.display());
        assert!(l.starts_with(&prefix) && l.contains(text.as_str()), "{l}");
    }
}

/// The package's conffile is all comments, so dirigo starts nothing until
/// it is edited; the example in those comments, uncommented, is valid.
#[test]
fn the_packaged_conffile_starts_nothing_and_its_example_is_valid() {
    let shipped = root().join("debian/dirigo.toml");
    let (code, _, err) = check(&shipped);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(":1: no [eal] section"), "{err}");
    let text = std::fs::read_to_string(&shipped).unwrap();
    let start = text.find("# [eal]\n").expect("a commented [eal]");
    let example: String = text[start..]
        .lines()
        .map(|l| {
            let l = l.strip_prefix('#').unwrap_or(l);
            l.strip_prefix(' ').unwrap_or(l).to_string() + "\n"
        })
        .collect();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let f = dir.join("packaged-example.toml");
    std::fs::write(&f, example).unwrap();
    let (code, out, err) = check(&f);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("is valid"), "{out}");
}
