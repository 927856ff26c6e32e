//! Records the git commit the programs are built from as
//! `DIRIGO_GIT_COMMIT` (for `--version`): `git rev-parse --short=12 HEAD`,
//! or `$DIRIGO_GIT_COMMIT` when set (a build from a source tarball), or
//! "unknown" outside a git checkout.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    // the fuzz build's `--cfg fuzzing` (fuzz/, scripts/fuzz.sh)
    println!("cargo:rustc-check-cfg=cfg(fuzzing)");
    println!("cargo:rerun-if-env-changed=DIRIGO_GIT_COMMIT");
    let commit = std::env::var("DIRIGO_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DIRIGO_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves: HEAD itself (a checkout), the branch it
    // names (a commit) and packed-refs (a gc). `--git-path` answers for
    // worktrees too.
    let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(r);
    }
    for w in watch {
        if let Some(p) = git(&["rev-parse", "--git-path", &w]) {
            if std::path::Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    // without a git checkout: nothing to watch but this file
    println!("cargo:rerun-if-changed=build.rs");
}
