//! The crate's layout rules (scripts/check-layout.py): plain module
//! folders (no `#[path]`), `unsafe` denied at the root and allowed only in
//! `pmd`, and no import circle between modules.

use std::process::Command;

#[test]
fn layout_rules_hold() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/check-layout.py"))
        .output()
        .expect("run python3 scripts/check-layout.py");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "layout rules broken:\n{text}");
    assert!(text.contains("layout ok"), "{text}");
}
