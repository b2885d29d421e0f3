//! A deterministic synthetic source tree for search benchmarks.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

/// The word planted in about one file in fifty.
pub const NEEDLE: &str = "needle_handler";

const WORDS: &[&str] = &[
    "let", "fn", "value", "result", "config", "self", "match", "return", "struct", "impl",
    "Option", "Some", "None", "error", "context", "buffer", "index", "parse", "render", "state",
    "event",
];

/// Writes `files` files of about 2 KB each under `root` in nested
/// directories (100 per directory), plus a `.gitignore` that hides one
/// generated directory, the way build output is usually hidden.
pub fn generate(root: &Path, files: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    std::fs::write(root.join(".gitignore"), "target/\n")?;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..files {
        let dir = root.join(format!("src/m{:03}/d{:02}", i / 1000, (i / 100) % 10));
        std::fs::create_dir_all(&dir)?;
        let mut body = Vec::with_capacity(2200);
        let mut line = 1;
        while body.len() < 2000 {
            let words = 4 + (next() % 8) as usize;
            let text: Vec<&str> = (0..words)
                .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
                .collect();
            writeln!(body, "    {} // {line}", text.join(" "))?;
            line += 1;
        }
        if i % 50 == 7 {
            writeln!(body, "fn {NEEDLE}(event: Event) -> Result<()> {{ Ok(()) }}")?;
        }
        std::fs::write(dir.join(format!("f{i:05}.rs")), body)?;
    }
    let target = root.join("target/debug");
    std::fs::create_dir_all(&target)?;
    for i in 0..200 {
        std::fs::write(
            target.join(format!("gen{i}.rs")),
            format!("fn {NEEDLE}() {{}}\n"),
        )?;
    }
    Ok(())
}
