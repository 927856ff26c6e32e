//! keepalived's language: tokens, blocks, includes, and the line of each
//! error.

use super::super::parse::{load, Tok};
use super::*;
use std::path::Path;

/// The words of each statement-line of `text`, `{` and `}` as themselves.
fn lines(text: &str) -> Vec<(u32, Vec<String>)> {
    let name: Arc<str> = "k.conf".into();
    let mut out: Vec<(u32, Vec<String>)> = Vec::new();
    let mut cur = Vec::new();
    for t in tokenize(text, &name).unwrap() {
        match t.tok {
            Tok::Eol => {
                if !cur.is_empty() {
                    out.push((t.loc.line, std::mem::take(&mut cur)));
                }
            }
            Tok::Open => cur.push("{".into()),
            Tok::Close => cur.push("}".into()),
            Tok::Word { text, .. } => cur.push(text),
        }
    }
    out
}

fn words(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn comments_run_to_the_end_of_the_line() {
    let got = lines(
        "# a comment\n\
         ! another\n\
         weight 1 # trailing\n\
         lb_algo rr! touching\n\
         \n\
         path /a\\#b\n",
    );
    assert_eq!(
        got,
        vec![
            (3, words(&["weight", "1"])),
            (4, words(&["lb_algo", "rr"])),
            (6, words(&["path", "/a#b"])),
        ]
    );
}

#[test]
fn quoted_strings_are_one_word_and_keep_comment_characters() {
    let got = lines("misc_path \"/bin/check --x # ! {y}\" tail\nempty \"\"\n");
    assert_eq!(
        got,
        vec![
            (1, words(&["misc_path", "/bin/check --x # ! {y}", "tail"])),
            (2, words(&["empty", ""])),
        ]
    );
    let name: Arc<str> = "k.conf".into();
    let toks = tokenize("a \"b\"", &name).unwrap();
    assert_eq!(
        toks[1].tok,
        Tok::Word {
            text: "b".into(),
            quoted: true
        }
    );
}

#[test]
fn braces_are_tokens_even_touching_words() {
    let got = lines("real_server 1.2.3.4 80{weight 2}\n");
    assert_eq!(
        got,
        vec![(
            1,
            words(&["real_server", "1.2.3.4", "80", "{", "weight", "2", "}"])
        )]
    );
}

#[test]
fn a_backslash_at_the_end_continues_the_line() {
    let got = lines("status_code 200 \\\n  301\nweight 1\n");
    assert_eq!(
        got,
        vec![
            (2, words(&["status_code", "200", "301"])),
            (3, words(&["weight", "1"]))
        ]
    );
    // the statement is one node, at its first line
    let t = tree("status_code 200 \\\n  301\n").unwrap();
    assert_eq!(t[0].args, words(&["200", "301"]));
    assert_eq!(t[0].loc.line, 1);
}

#[test]
fn an_unterminated_quote_is_an_error_at_its_line() {
    let e = tree("weight 1\nmisc_path \"/bin/x\n\"\n").unwrap_err();
    assert_eq!(e.to_string(), "k.conf:2: error: unterminated quote");
}

#[test]
fn nested_blocks_and_blocks_opening_on_the_next_line() {
    let t = tree(
        "virtual_server 10.0.0.1 80\n\
         {\n\
           real_server 172.16.0.1 80 {\n\
             HTTP_GET { url { path /h\n status_code 200 } }\n\
           }\n\
         }\n\
         global_defs { router_id x }\n",
    )
    .unwrap();
    assert_eq!(t.len(), 2);
    let vs = &t[0];
    assert_eq!((vs.key.as_str(), vs.loc.line), ("virtual_server", 1));
    assert_eq!(vs.args, words(&["10.0.0.1", "80"]));
    let rs = &vs.children()[0];
    assert_eq!((rs.key.as_str(), rs.loc.line), ("real_server", 3));
    let http = &rs.children()[0];
    assert_eq!(http.key, "HTTP_GET");
    let url = &http.children()[0];
    let kids: Vec<(&str, &[String], u32)> = url
        .children()
        .iter()
        .map(|n| (n.key.as_str(), &n.args[..], n.loc.line))
        .collect();
    assert_eq!(
        kids,
        vec![
            ("path", &words(&["/h"])[..], 4),
            ("status_code", &words(&["200"])[..], 5)
        ]
    );
    assert_eq!(t[1].key, "global_defs");
    assert_eq!(t[1].children()[0].args, words(&["x"]));
    // a statement without a block has none
    assert_eq!(url.children()[0].block, None);
}

#[test]
fn an_unclosed_brace_is_an_error_at_its_line() {
    let e = tree("virtual_server 10.0.0.1 80 {\n  real_server 1.1.1.1 80 {\n    weight 1\n}\n")
        .unwrap_err();
    assert_eq!(e.to_string(), "k.conf:1: error: this '{' is never closed");
    let e = tree("a {\n b {\n }\n c {\n").unwrap_err();
    assert_eq!(e.to_string(), "k.conf:4: error: this '{' is never closed");
}

#[test]
fn an_extra_closing_brace_is_an_error_at_its_line() {
    let e = tree("a {\n}\n}\nb 1\n").unwrap_err();
    assert_eq!(e.to_string(), "k.conf:3: error: '}' without a matching '{'");
}

#[test]
fn a_block_without_a_keyword_is_an_error() {
    let e = tree("weight 1\n\n}{\n").unwrap_err();
    assert_eq!(e.loc.line, 3);
    let e = tree("a { { } }\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "k.conf:1: error: '{' without a keyword before it"
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = "a {\n".repeat(100) + &"}\n".repeat(100);
    let e = tree(&deep).unwrap_err();
    assert!(e.msg.contains("nested too deep"), "{e}");
    let ok = "a {\n".repeat(10) + &"}\n".repeat(10);
    assert!(tree(&ok).is_ok());
}

/// Write `files` (name, text) under a new temporary folder.
fn files(list: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in list {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn loaded(path: &Path) -> Result<(Vec<Node>, Vec<Diag>), Diag> {
    let mut warnings = Vec::new();
    let t = parse(&load(path, &mut warnings)?)?;
    Ok((t, warnings))
}

#[test]
fn includes_follow_globs_relative_to_the_including_file_in_sorted_order() {
    let d = files(&[
        ("etc/keepalived.conf", "include conf.d/*.conf\nlast 1\n"),
        ("etc/conf.d/b.conf", "b 1\n"),
        ("etc/conf.d/a.conf", "a 1\ninclude ../more/x?.conf\n"),
        ("etc/conf.d/skip.txt", "skip 1\n"),
        ("etc/more/x1.conf", "x1 1\n"),
    ]);
    // the test runs elsewhere: patterns are the including file's, not the cwd's
    let (t, w) = loaded(&d.path().join("etc/keepalived.conf")).unwrap();
    let keys: Vec<&str> = t.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(keys, ["a", "x1", "b", "last"]);
    assert!(w.is_empty(), "{w:?}");
    // each node knows its own file and line
    assert!(
        t[1].loc.file.ends_with("etc/conf.d/../more/x1.conf"),
        "{}",
        t[1].loc
    );
    assert_eq!(t[1].loc.line, 1);
    assert!(t[3].loc.file.ends_with("etc/keepalived.conf"));
    assert_eq!(t[3].loc.line, 2);
}

#[test]
fn an_include_inside_a_block_adds_to_the_block() {
    let d = files(&[
        (
            "k.conf",
            "virtual_server 10.0.0.1 80 {\n  include \"servers/*.conf\"\n  lb_algo rr\n}\n",
        ),
        (
            "servers/1.conf",
            "real_server 172.16.0.1 80 {\n weight 2\n}\n",
        ),
    ]);
    let (t, _) = loaded(&d.path().join("k.conf")).unwrap();
    let kids: Vec<&str> = t[0].children().iter().map(|n| n.key.as_str()).collect();
    assert_eq!(kids, ["real_server", "lb_algo"]);
}

#[test]
fn a_glob_that_matches_nothing_is_a_warning_and_a_missing_file_an_error() {
    let d = files(&[("k.conf", "weight 1\ninclude none/*.conf\n")]);
    let (t, w) = loaded(&d.path().join("k.conf")).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(w.len(), 1);
    let w = w[0].to_string();
    assert!(
        w.contains("k.conf:2: warning: include: no file matches"),
        "{w}"
    );

    let d = files(&[("k.conf", "weight 1\n\ninclude missing.conf\n")]);
    let e = loaded(&d.path().join("k.conf")).unwrap_err().to_string();
    assert!(e.contains("k.conf:3: error: include: no file"), "{e}");
    assert!(e.contains("missing.conf"), "{e}");

    let d = files(&[("k.conf", "include\n")]);
    let e = loaded(&d.path().join("k.conf")).unwrap_err().to_string();
    assert!(
        e.ends_with("k.conf:1: error: include needs a file name or pattern"),
        "{e}"
    );
}

#[test]
fn an_include_cycle_is_refused_at_the_include_that_closes_it() {
    let d = files(&[
        ("a.conf", "weight 1\ninclude b.conf\n"),
        ("b.conf", "# b\n\ninclude *.conf\n"),
    ]);
    let e = loaded(&d.path().join("a.conf")).unwrap_err();
    assert_eq!(e.level, Level::Error);
    let s = e.to_string();
    // b.conf's line 3 includes a.conf again (and b.conf itself)
    assert!(e.loc.file.ends_with("b.conf") && e.loc.line == 3, "{s}");
    assert!(s.contains("include cycle: "), "{s}");
    assert!(s.contains("a.conf -> ") && s.contains("b.conf -> "), "{s}");

    let d = files(&[("self.conf", "include self.conf\n")]);
    let e = loaded(&d.path().join("self.conf")).unwrap_err().to_string();
    assert!(e.contains("self.conf:1: error: include cycle:"), "{e}");
}

#[test]
fn the_same_file_twice_is_no_cycle() {
    let d = files(&[
        ("k.conf", "include common.conf\ninclude common.conf\n"),
        ("common.conf", "c 1\n"),
    ]);
    let (t, _) = loaded(&d.path().join("k.conf")).unwrap();
    assert_eq!(t.len(), 2);
}

#[test]
fn an_unreadable_top_file_is_an_error_naming_it() {
    let e = loaded(Path::new("/nonexistent/keepalived.conf")).unwrap_err();
    assert_eq!(e.loc.line, 0);
    assert!(e
        .to_string()
        .starts_with("/nonexistent/keepalived.conf: error: cannot read"));
}

#[test]
fn errors_in_included_files_name_that_file_and_line() {
    let d = files(&[
        ("k.conf", "a 1\ninclude sub.conf\n"),
        ("sub.conf", "b {\n\n"),
    ]);
    let e = loaded(&d.path().join("k.conf")).unwrap_err();
    assert!(e.loc.file.ends_with("sub.conf"), "{e}");
    assert_eq!(e.loc.line, 1);
}
