//! Writes the man pages and shell completions of dirigo, dirigoadm and
//! dirigoctl from their clap definitions (`dirigo::cli::pages`):
//!
//! ```text
//! cargo run --example dirigo-docs -- OUTDIR
//!   OUTDIR/man/dirigo.8 dirigoadm.8 dirigoctl.1
//!   OUTDIR/completions/bash/NAME  zsh/_NAME  fish/NAME.fish
//! ```
//!
//! `scripts/package.sh` runs it before `cargo deb`.

use clap_complete::Shell;
use clap_mangen::Man;
use dirigo::cli::{pages, Page};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Text for roff: backslashes and dashes escaped, no line starting with a
/// control character.
fn esc(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// A section heading and its text as roff (see `Page::sections`).
fn section(out: &mut String, heading: &str, text: &str) {
    out.push_str(&format!(".SH \"{heading}\"\n"));
    for para in text.split("\n\n") {
        let lines: Vec<&str> = para.lines().collect();
        if lines.is_empty() {
            continue;
        }
        if lines.iter().all(|l| l.starts_with("  ")) {
            out.push_str(".PP\n.nf\n.RS 4\n");
            for l in &lines {
                out.push_str(&esc(l.trim_start()));
                out.push('\n');
            }
            out.push_str(".RE\n.fi\n");
        } else if let Some(term) = lines[0].strip_prefix("- ") {
            out.push_str(&format!(".TP\n\\fB{}\\fR\n", esc(term)));
            for l in &lines[1..] {
                out.push_str(&esc(l));
                out.push('\n');
            }
        } else {
            out.push_str(".PP\n");
            for l in &lines {
                out.push_str(&esc(l));
                out.push('\n');
            }
        }
    }
}

/// Each subcommand (and theirs) with its usage line and help.
fn commands(out: &mut String, cmd: &mut clap::Command) {
    cmd.build();
    out.push_str(".SH COMMANDS\n");
    fn walk(out: &mut String, cmd: &mut clap::Command) {
        for sub in cmd.get_subcommands_mut() {
            if sub.get_name() == "help" {
                continue;
            }
            let usage = sub.render_usage().to_string();
            let usage = usage.trim_start_matches("Usage: ").trim();
            out.push_str(&format!(".TP\n\\fB{}\\fR\n", esc(usage)));
            if let Some(about) = sub.get_long_about().or(sub.get_about()) {
                for l in about.to_string().lines() {
                    if l.trim().is_empty() {
                        out.push_str(".IP\n");
                    } else {
                        out.push_str(&esc(l));
                        out.push('\n');
                    }
                }
            }
            for a in sub.get_arguments() {
                if a.is_global_set() || a.get_id() == "help" || a.get_id() == "version" {
                    continue;
                }
                let name = match (a.get_short(), a.get_long()) {
                    (Some(c), Some(l)) => format!("-{c}, --{l}"),
                    (None, Some(l)) => format!("--{l}"),
                    (Some(c), None) => format!("-{c}"),
                    _ => a
                        .get_value_names()
                        .map(|v| v.join(" "))
                        .unwrap_or_else(|| a.get_id().to_string().to_uppercase()),
                };
                let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                out.push_str(&format!(
                    ".RS\n.TP\n\\fI{}\\fR\n{}\n.RE\n",
                    esc(&name),
                    esc(&help)
                ));
            }
            if sub.has_subcommands() {
                walk(out, sub);
            }
        }
    }
    walk(out, cmd);
}

fn man_page(page: &Page) -> std::io::Result<Vec<u8>> {
    let man = Man::new(page.command.clone())
        .section(page.section)
        .source(format!("dirigo {}", dirigo::version::VERSION))
        .manual("dirigo");
    let mut w: Vec<u8> = Vec::new();
    man.render_title(&mut w)?;
    man.render_name_section(&mut w)?;
    match &page.synopsis {
        Some(lines) => {
            let mut s = String::from(".SH SYNOPSIS\n.nf\n");
            for l in lines {
                s.push_str(&esc(l));
                s.push('\n');
            }
            s.push_str(".fi\n");
            w.write_all(s.as_bytes())?;
        }
        None => man.render_synopsis_section(&mut w)?,
    }
    man.render_description_section(&mut w)?;
    man.render_options_section(&mut w)?;
    let mut extra = String::new();
    if page.subcommands {
        commands(&mut extra, &mut page.command.clone());
    }
    for (heading, text) in &page.sections {
        section(&mut extra, heading, text);
    }
    w.write_all(extra.as_bytes())?;
    man.render_version_section(&mut w)?;
    Ok(w)
}

fn write(path: &Path, bytes: &[u8]) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn main() {
    let Some(out) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: dirigo-docs OUTDIR");
        std::process::exit(2);
    };
    for page in pages() {
        let man = man_page(&page).expect("render a man page");
        let file = out
            .join("man")
            .join(format!("{}.{}", page.name, page.section));
        write(&file, &man);
        for (shell, dir, file) in [
            (Shell::Bash, "bash", page.name.to_string()),
            (Shell::Zsh, "zsh", format!("_{}", page.name)),
            (Shell::Fish, "fish", format!("{}.fish", page.name)),
        ] {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut page.command.clone(), page.name, &mut buf);
            write(&out.join("completions").join(dir).join(file), &buf);
        }
    }
    println!(
        "dirigo-docs: man pages and completions in {}",
        out.display()
    );
}
