//! `check_blocks!`: scans source files, while the calling crate compiles,
//! for functions that hold a natural block but lack `#[natural]` — the one
//! mistake that otherwise neither runs nor fails. Blocks are recognised with
//! the same rules `#[natural]` applies (`crate::text`), so the two cannot
//! disagree about what a block is.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

use crate::lex::{Tok, Token as Lexed, lex};
use crate::text::{docstring_program, inline_program};

/// A function with a natural block and no `#[natural]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub line: u32,
    pub function: String,
    pub block_line: u32,
    pub docstring: bool,
}

/// What the attributes in front of an item say.
#[derive(Default)]
struct Attrs {
    natural: bool,
    doc: Vec<String>,
    doc_line: Option<u32>,
}

/// A function whose body is being scanned.
struct Function {
    name: String,
    line: u32,
    natural: bool,
    doc_block: Option<u32>,
    inline_block: Option<u32>,
    /// Delimiter depth outside its body's `{`.
    depth: usize,
}

/// Words that may stand between an item's attributes and its `fn`.
const QUALIFIERS: [&str; 11] = [
    "pub", "crate", "self", "super", "in", "const", "async", "unsafe", "extern", "default", "safe",
];

/// The index of the delimiter closing the one opened at `open` (or of
/// `open` itself when it opens nothing: unbalanced input must not panic
/// inside the compiler).
fn closing(toks: &[Lexed], open: usize) -> usize {
    if !toks
        .get(open)
        .is_some_and(|t| matches!(t.tok, Tok::Open(_)))
    {
        return open;
    }
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Open(_) => depth += 1,
            Tok::Close(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// Reads the attribute whose tokens are `inner` (inside `#[...]`).
fn read_attr(inner: &[Lexed], attrs: &mut Attrs) {
    let words: Vec<&str> = inner
        .iter()
        .map_while(|t| match &t.tok {
            Tok::Ident(w) => Some(w.as_str()),
            Tok::Punct(':') => Some("::"),
            _ => None,
        })
        .filter(|w| *w != "::")
        .collect();
    match (words.as_slice(), inner.get(1).map(|t| &t.tok), inner.get(2)) {
        (
            ["doc"],
            Some(Tok::Punct('=')),
            Some(Lexed {
                tok: Tok::Str(text),
                line,
            }),
        ) => {
            attrs.doc_line.get_or_insert(*line);
            attrs.doc.push(text.clone());
        }
        // `#[natural]`, `#[north_natural::natural]`, a renamed crate's path.
        ([.., "natural"], _, _) => attrs.natural = true,
        // `#[cfg_attr(test, natural)]` and the like: trust it.
        (["cfg_attr"], _, _) => {
            attrs.natural |= inner
                .iter()
                .any(|t| t.tok == Tok::Ident("natural".to_owned()));
        }
        _ => {}
    }
}

/// Whether the string at `i` is a statement of its own (`"..." ;`, in
/// parentheses or not), which is what makes a string an inline block.
fn is_statement(toks: &[Lexed], i: usize) -> bool {
    let (mut before, mut after) = (i, i);
    while before > 0
        && toks[before - 1].tok == Tok::Open('(')
        && toks
            .get(after + 1)
            .is_some_and(|t| t.tok == Tok::Close(')'))
    {
        before -= 1;
        after += 1;
    }
    let starts = before
        .checked_sub(1)
        .map(|k| &toks[k].tok)
        .is_some_and(|t| matches!(t, Tok::Open('{') | Tok::Close('}') | Tok::Punct(';')));
    let ends = toks
        .get(after + 1)
        .is_some_and(|t| matches!(t.tok, Tok::Close('}') | Tok::Punct(';')));
    starts && ends
}

/// The functions of one file that hold a natural block but no `#[natural]`.
pub(crate) fn scan(src: &str) -> Result<Vec<Finding>, String> {
    let toks = lex(src)?;
    let mut found = Vec::new();
    let mut attrs = Attrs::default();
    let mut depth = 0usize;
    let mut open: Vec<Function> = Vec::new();
    let mut signature: Option<Function> = None;
    let mut i = 0;
    while i < toks.len() {
        let line = toks[i].line;
        match &toks[i].tok {
            Tok::Doc(text) => {
                attrs.doc_line.get_or_insert(line);
                attrs.doc.push(text.clone());
            }
            Tok::Punct('#') if toks.get(i + 1).is_some_and(|t| t.tok == Tok::Open('[')) => {
                let end = closing(&toks, i + 1);
                read_attr(&toks[i + 2..end.min(toks.len())], &mut attrs);
                i = end;
            }
            // Inner attributes (`#![...]`) belong to the enclosing item.
            Tok::Punct('#')
                if toks.get(i + 1).is_some_and(|t| t.tok == Tok::Punct('!'))
                    && toks.get(i + 2).is_some_and(|t| t.tok == Tok::Open('[')) =>
            {
                i = closing(&toks, i + 2);
            }
            Tok::Ident(w) if w == "fn" => {
                let taken = std::mem::take(&mut attrs);
                // `fn(u32) -> u32` is a type, and `fn $name` a macro fragment.
                if let Some(Tok::Ident(name)) = toks.get(i + 1).map(|t| &t.tok) {
                    let doc = taken.doc.join("\n");
                    signature = Some(Function {
                        name: name.clone(),
                        line,
                        natural: taken.natural,
                        doc_block: docstring_program(&doc).and(taken.doc_line),
                        inline_block: None,
                        depth,
                    });
                    i += 1;
                }
            }
            Tok::Ident(w) if QUALIFIERS.contains(&w.as_str()) => {}
            // `pub(crate)` and `extern "C"` keep the attributes for the item.
            Tok::Open('(') | Tok::Close(')') | Tok::Lit => {
                depth = match toks[i].tok {
                    Tok::Open(_) => depth + 1,
                    Tok::Close(_) => depth.saturating_sub(1),
                    _ => depth,
                };
            }
            Tok::Str(value) => {
                if let Some(f) = open.last_mut()
                    && f.inline_block.is_none()
                    && is_statement(&toks, i)
                    && inline_program(value).is_some()
                {
                    f.inline_block = Some(line);
                }
            }
            Tok::Open(c) => {
                if *c == '{'
                    && let Some(f) = signature.take_if(|f| f.depth == depth)
                {
                    open.push(f);
                }
                depth += 1;
                attrs = Attrs::default();
            }
            Tok::Close(c) => {
                depth = depth.saturating_sub(1);
                if *c == '}'
                    && let Some(f) = open.pop_if(|f| f.depth == depth)
                    && !f.natural
                    && let Some(block_line) = f.doc_block.or(f.inline_block)
                {
                    found.push(Finding {
                        line: f.line,
                        function: f.name,
                        block_line,
                        docstring: f.doc_block.is_some(),
                    });
                }
                attrs = Attrs::default();
            }
            Tok::Punct(';') => {
                // A function without a body (a trait method's declaration).
                signature.take_if(|f| f.depth == depth);
                attrs = Attrs::default();
            }
            _ => attrs = Attrs::default(),
        }
        i += 1;
    }
    Ok(found)
}

/// `.rs` files under `path` (or `path` itself), skipping hidden and
/// `target` directories.
fn rust_files(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        let p = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if entry.file_type()?.is_dir() {
            if !name.starts_with('.') && name != "target" {
                rust_files(&p, out)?;
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
    Ok(())
}

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let mut roots: Vec<LitStr> = Punctuated::<LitStr, Token![,]>::parse_terminated
        .parse2(input)?
        .into_iter()
        .collect();
    if roots.is_empty() {
        roots.push(LitStr::new("src", Span::call_site()));
    }
    let Some(manifest) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        return Err(syn::Error::new(
            Span::call_site(),
            "check_blocks! resolves paths against CARGO_MANIFEST_DIR, which is not set: build with cargo",
        ));
    };
    let mut files = Vec::new();
    for root in &roots {
        let path = manifest.join(root.value());
        if !path.exists() {
            return Err(syn::Error::new(
                root.span(),
                format!(
                    "check_blocks!: `{}` does not exist (paths are relative to the directory of the crate's Cargo.toml)",
                    root.value()
                ),
            ));
        }
        rust_files(&path, &mut files).map_err(|e| {
            syn::Error::new(
                root.span(),
                format!("check_blocks!: cannot list `{}`: {e}", root.value()),
            )
        })?;
    }
    files.sort();
    files.dedup();

    let mut problems = Vec::new();
    let mut tracked = Vec::new();
    for file in &files {
        let shown = file
            .strip_prefix(&manifest)
            .unwrap_or(file)
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        // Including each file makes cargo rebuild the check when it changes.
        if let Some(abs) = file.to_str() {
            tracked.push(quote! { const _: &[u8] = ::core::include_bytes!(#abs); });
        }
        let scanned = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|src| scan(&src));
        match scanned {
            Ok(found) => problems.extend(found.into_iter().map(|f| {
                let Finding {
                    line,
                    function,
                    block_line,
                    docstring,
                } = f;
                quote! {
                    ::north_natural::BlockProblem::MissingAttribute {
                        file: #shown,
                        line: #line,
                        function: #function,
                        block_line: #block_line,
                        docstring: #docstring,
                    }
                }
            })),
            Err(message) => problems.push(quote! {
                ::north_natural::BlockProblem::Unscanned { file: #shown, message: #message }
            }),
        }
    }
    let count = files.len();
    Ok(quote! {
        {
            #(#tracked)*
            ::north_natural::BlockCheck::__new(#count, &[#(#problems),*])
        }
    })
}
