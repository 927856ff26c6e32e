//! keepalived's configuration language, as its parser (lib/parser.c) reads
//! it: a statement is the words of one line; `{` after a statement (on its
//! line or the next) opens its block and `}` closes it, also when they
//! touch a word (`80{`); `"..."` is one word without its quotes (`"` also
//! ends an unquoted word); `#` and `!` outside quotes start a comment to
//! the end of the line (`\#`, `\!` are the characters); a `\` at the end
//! of a line continues the statement on the next. A line that starts with
//! `include` (or keepalived's `includer`, `includem`, `includeb`,
//! `includew`, `includea`) is replaced by the files its glob pattern
//! matches, relative to the including file's folder, in sorted order; a
//! file that includes itself, directly or through others, is refused.

use super::diag::{Diag, Loc};
use std::iter::Peekable;
use std::path::{Path, PathBuf};
use std::str::Chars;
use std::sync::Arc;

/// One token of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// A word; `quoted` when it was written `"..."`.
    Word {
        /// The text, without quotes.
        text: String,
        /// Written in quotes.
        quoted: bool,
    },
    /// `{`
    Open,
    /// `}`
    Close,
    /// The end of a line (a statement ends there).
    Eol,
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What.
    pub tok: Tok,
    /// Where.
    pub loc: Loc,
}

/// A statement: its keyword, the words after it and its block, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The first word (`virtual_server`, `weight`).
    pub key: String,
    /// The other words of the statement.
    pub args: Vec<String>,
    /// The statements of its `{ }` block.
    pub block: Option<Vec<Node>>,
    /// Where the keyword is.
    pub loc: Loc,
}

impl Node {
    /// The statements of its block (none without a block).
    pub fn children(&self) -> &[Node] {
        self.block.as_deref().unwrap_or(&[])
    }
}

/// How deep blocks may nest (keepalived's own grammar needs 5).
const MAX_DEPTH: usize = 64;

/// Split the text of `file` into tokens.
pub fn tokenize(text: &str, file: &Arc<str>) -> Result<Vec<Token>, Diag> {
    let mut lx = Lexer {
        file,
        out: Vec::new(),
        word: String::new(),
        line: 1,
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                lx.flush();
                lx.push(Tok::Eol);
                lx.line += 1;
            }
            ' ' | '\t' | '\r' | '\x0b' | '\x0c' => lx.flush(),
            '#' | '!' => {
                lx.flush();
                while chars.next_if(|&c| c != '\n').is_some() {}
            }
            '\\' => lx.backslash(&mut chars),
            '"' => lx.quoted(&mut chars)?,
            '{' | '}' => {
                lx.flush();
                lx.push(if c == '{' { Tok::Open } else { Tok::Close });
            }
            c => lx.word.push(c),
        }
    }
    lx.flush();
    lx.push(Tok::Eol);
    Ok(lx.out)
}

/// The tokenizer's state: the tokens so far, the word being read, the line.
struct Lexer<'f> {
    file: &'f Arc<str>,
    out: Vec<Token>,
    word: String,
    line: u32,
}

impl Lexer<'_> {
    /// Where the current line is.
    fn loc(&self) -> Loc {
        Loc {
            file: self.file.clone(),
            line: self.line,
        }
    }

    /// A token on the current line.
    fn push(&mut self, tok: Tok) {
        let loc = self.loc();
        self.out.push(Token { tok, loc });
    }

    /// The word being read, if any, as a token.
    fn flush(&mut self) {
        if !self.word.is_empty() {
            let text = std::mem::take(&mut self.word);
            self.push(Tok::Word {
                text,
                quoted: false,
            });
        }
    }

    /// After `\`: a continuation line, an escaped comment sign, or itself.
    fn backslash(&mut self, chars: &mut Peekable<Chars<'_>>) {
        match chars.peek() {
            Some('\n') => {
                // continuation: the statement goes on on the next line
                chars.next();
                self.flush();
                self.line += 1;
            }
            Some(&e @ ('#' | '!')) => {
                chars.next();
                self.word.push(e);
            }
            _ => self.word.push('\\'),
        }
    }

    /// After `"`: a quoted word, to the closing quote on the same line.
    fn quoted(&mut self, chars: &mut Peekable<Chars<'_>>) -> Result<(), Diag> {
        self.flush();
        let mut s = String::new();
        loop {
            match chars.next_if(|&c| c != '\n') {
                Some('"') => break,
                Some(c) => s.push(c),
                None => return Err(Diag::error(&self.loc(), "unterminated quote")),
            }
        }
        self.push(Tok::Word {
            text: s,
            quoted: true,
        });
        Ok(())
    }
}

/// Whether `w` is one of keepalived's include keywords.
fn is_include(w: &str) -> bool {
    matches!(
        w,
        "include" | "includer" | "includem" | "includeb" | "includew" | "includea"
    )
}

/// Reads files and splices their includes in.
struct Loader<'w> {
    /// The files being read, outermost first: (canonical path, name).
    stack: Vec<(PathBuf, Arc<str>)>,
    warnings: &'w mut Vec<Diag>,
}

impl Loader<'_> {
    /// The tokens of `path` (named `name` in messages), its includes
    /// spliced in; `from` is the include line that asked for it.
    fn file(
        &mut self,
        path: &Path,
        name: Arc<str>,
        from: Option<&Loc>,
    ) -> Result<Vec<Token>, Diag> {
        let whole = Loc {
            file: name.clone(),
            line: 0,
        };
        let at = from.unwrap_or(&whole);
        let canon = std::fs::canonicalize(path)
            .map_err(|e| Diag::error(at, format!("cannot read {name}: {e}")))?;
        if let Some(i) = self.stack.iter().position(|(p, _)| *p == canon) {
            let chain: Vec<&str> = self.stack[i..]
                .iter()
                .map(|(_, n)| &**n)
                .chain([&*name])
                .collect();
            return Err(Diag::error(
                at,
                format!("include cycle: {}", chain.join(" -> ")),
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Diag::error(at, format!("cannot read {name}: {e}")))?;
        let tokens = tokenize(&text, &name)?;
        self.stack.push((canon, name));
        let out = self.splice(tokens, path.parent().unwrap_or(Path::new("")));
        self.stack.pop();
        out
    }

    /// `tokens` with each include line replaced by the included files'
    /// tokens; relative patterns are taken from `dir`.
    fn splice(&mut self, tokens: Vec<Token>, dir: &Path) -> Result<Vec<Token>, Diag> {
        let mut out = Vec::with_capacity(tokens.len());
        let mut it = tokens.into_iter().peekable();
        let mut line_start = true;
        while let Some(t) = it.next() {
            let include = matches!(&t.tok, Tok::Word { text, quoted: false } if line_start && is_include(text));
            line_start = t.tok == Tok::Eol;
            if !include {
                out.push(t);
                continue;
            }
            let mut words = Vec::new();
            while let Some(w) = it.next_if(|w| w.tok != Tok::Eol) {
                match w.tok {
                    Tok::Word { text, .. } => words.push(text),
                    _ => return Err(Diag::error(&w.loc, "a brace on an include line")),
                }
            }
            if words.is_empty() {
                return Err(Diag::error(&t.loc, "include needs a file name or pattern"));
            }
            let pattern = words.join(" ");
            for (path, name) in self.matches(&pattern, dir, &t.loc)? {
                out.extend(self.file(&path, name, Some(&t.loc))?);
            }
        }
        Ok(out)
    }

    /// The files `pattern` names (a glob: `*`, `?`, `[...]`), sorted; a
    /// pattern that matches nothing is a warning, a plain file name that
    /// does not exist an error.
    fn matches(
        &mut self,
        pattern: &str,
        dir: &Path,
        at: &Loc,
    ) -> Result<Vec<(PathBuf, Arc<str>)>, Diag> {
        let full = dir.join(pattern);
        let full_s = full.to_string_lossy().to_string();
        if !pattern.contains(['*', '?', '[']) {
            if !full.is_file() {
                return Err(Diag::error(at, format!("include: no file {full_s}")));
            }
            return Ok(vec![(full, full_s.into())]);
        }
        let paths = glob::glob(&full_s)
            .map_err(|e| Diag::error(at, format!("include: bad pattern {pattern:?}: {e}")))?;
        let mut out = Vec::new();
        for p in paths {
            let p = p.map_err(|e| Diag::error(at, format!("include {pattern}: {e}")))?;
            if p.is_file() {
                let name = p.to_string_lossy().to_string();
                out.push((p, name.into()));
            }
        }
        out.sort();
        if out.is_empty() {
            self.warnings.push(Diag::warning(
                at,
                format!("include: no file matches {full_s}"),
            ));
        }
        Ok(out)
    }
}

/// The tokens of the file at `path` with its includes; include warnings
/// (a pattern matching nothing) go to `warnings`.
pub fn load(path: &Path, warnings: &mut Vec<Diag>) -> Result<Vec<Token>, Diag> {
    let name: Arc<str> = path.display().to_string().into();
    Loader {
        stack: Vec::new(),
        warnings,
    }
    .file(path, name, None)
}

/// The statement tree of `tokens`.
pub fn parse(tokens: &[Token]) -> Result<Vec<Node>, Diag> {
    let mut p = Parser { tokens, pos: 0 };
    p.block(None, 0)
}

struct Parser<'t> {
    tokens: &'t [Token],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    /// Statements until the `}` that closes the block opened at `open`
    /// (or the end of the input at the top, `open` = `None`).
    fn block(&mut self, open: Option<&Loc>, depth: usize) -> Result<Vec<Node>, Diag> {
        let mut nodes = Vec::new();
        loop {
            let Some(t) = self.peek().cloned() else {
                return match open {
                    Some(at) => Err(Diag::error(at, "this '{' is never closed")),
                    None => Ok(nodes),
                };
            };
            self.pos += 1;
            match t.tok {
                Tok::Eol => {}
                Tok::Close => {
                    return match open {
                        Some(_) => Ok(nodes),
                        None => Err(Diag::error(&t.loc, "'}' without a matching '{'")),
                    }
                }
                Tok::Open => return Err(Diag::error(&t.loc, "'{' without a keyword before it")),
                Tok::Word { text, .. } => nodes.push(self.statement(text, t.loc, depth)?),
            }
        }
    }

    /// The rest of the statement whose keyword `key` was just read.
    fn statement(&mut self, key: String, loc: Loc, depth: usize) -> Result<Node, Diag> {
        let mut args = Vec::new();
        while let Some(Token {
            tok: Tok::Word { text, .. },
            ..
        }) = self.peek()
        {
            args.push(text.clone());
            self.pos += 1;
        }
        // a block may open on the statement's line or on a later one
        let mut next = self.pos;
        while self.tokens.get(next).is_some_and(|t| t.tok == Tok::Eol) {
            next += 1;
        }
        let mut block = None;
        if let Some(open) = self.tokens.get(next).filter(|t| t.tok == Tok::Open) {
            if depth + 1 > MAX_DEPTH {
                return Err(Diag::error(&open.loc, "blocks nested too deep"));
            }
            self.pos = next + 1;
            block = Some(self.block(Some(&open.loc), depth + 1)?);
        }
        Ok(Node {
            key,
            args,
            block,
            loc,
        })
    }
}
