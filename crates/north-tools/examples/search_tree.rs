//! Generates the benchmark tree and runs `search_text` over it from the
//! command line, for `scripts/bench-search.sh`:
//!
//! ```text
//! search_tree generate DIR [FILES]     write the synthetic tree (default 50000 files)
//! search_tree search DIR QUERY [regex] print the number of matches
//! ```
#![allow(missing_docs)]

#[path = "../benches/support/tree.rs"]
mod tree;

use std::path::Path;
use std::process::ExitCode;

use north_tools::Sandbox;
use north_tools::tools::{SearchArgs, search};
use tokio_util::sync::CancellationToken;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["generate", dir] => tree::generate(Path::new(dir), 50_000).map_err(|e| e.to_string()),
        ["generate", dir, n] => match n.parse() {
            Ok(n) => tree::generate(Path::new(dir), n).map_err(|e| e.to_string()),
            Err(e) => Err(format!("bad file count {n:?}: {e}")),
        },
        ["search", dir, query, rest @ ..] => run_search(dir, query, rest.first() == Some(&"regex")),
        _ => Err(
            "usage: search_tree generate DIR [FILES] | search_tree search DIR QUERY [regex]".into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("search_tree: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_search(dir: &str, query: &str, regex: bool) -> Result<(), String> {
    let sandbox = Sandbox::new(Path::new(dir)).map_err(|e| e.to_string())?;
    let args = SearchArgs {
        query: query.to_owned(),
        path: None,
        regex,
        limit: Some(10_000),
    };
    let (hits, _) =
        search(&sandbox, &args, &CancellationToken::new()).map_err(|e| e.to_string())?;
    println!("{}", hits.len());
    Ok(())
}
