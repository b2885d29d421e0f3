//! Markdown as the user sees it: tables (wide and narrow), headings without
//! their `#`, highlighted code in three languages (colours included), links,
//! quotes and task lists.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use north_tui::markdown::render;
use ratatui::style::Color;
use ratatui::text::Line;

fn plain(lines: &[Line<'_>]) -> String {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each span with its foreground colour, for the lines of a code block.
fn coloured(lines: &[Line<'_>]) -> String {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| match s.style.fg {
                    Some(Color::Rgb(r, g, b)) => format!("[#{r:02x}{g:02x}{b:02x}]{}", s.content),
                    _ => s.content.to_string(),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const TABLE: &str = "\
| Tool | Approval | What it does |
|---|---|---|
| `read_file` | none | Reads a file or a line range, in parts when a line is very long |
| `shell_run` | shell | Runs a command in the project's shell and returns its output |
";

#[test]
fn tables_are_laid_out_in_columns() {
    insta::assert_snapshot!("table_wide", plain(&render(TABLE, 100)));
}

#[test]
fn narrow_tables_wrap_within_their_columns() {
    let text = plain(&render(TABLE, 40));
    assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
    insta::assert_snapshot!("table_narrow", text);
}

#[test]
fn a_table_still_streaming_renders_the_rows_so_far() {
    let partial = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |";
    let text = plain(&render(partial, 40));
    assert!(text.contains("│ 1 │ 2 │"), "{text}");
}

#[test]
fn headings_quotes_links_and_task_lists() {
    let md = "# Plan\n\n## Steps\n\n- [x] read the code\n- [ ] write the fix\n\n> Quoted advice\n> on two lines.\n\nSee [the docs](https://example.org/docs) or https://example.org.\n";
    insta::assert_snapshot!("blocks", plain(&render(md, 60)));
}

#[test]
fn code_is_highlighted_in_rust_python_and_json() {
    for (lang, code) in [
        (
            "rust",
            "fn main() {\n    let x: u32 = 42; // answer\n    println!(\"{x}\");\n}",
        ),
        (
            "python",
            "def greet(name):\n    return f\"hi {name}\"  # comment",
        ),
        ("json", "{\"key\": [1, true, null]}"),
    ] {
        let lines = render(&format!("```{lang}\n{code}\n```\n"), 80);
        let shown = coloured(&lines);
        assert!(shown.contains("[#"), "{lang} is coloured: {shown}");
        insta::assert_snapshot!(format!("code_{lang}"), shown);
    }
    // An unknown language is plain code, not an error.
    let lines = render("```nosuchlang\nx = 1\n```\n", 40);
    assert!(plain(&lines).contains("x = 1"));
}

#[test]
fn a_table_row_with_an_emoji_and_vs16_is_as_wide_as_the_others() {
    use unicode_width::UnicodeWidthStr;
    let table = "| State | Note |\n|---|---|\n| ⚠️ risky | check it |\n| ok | fine |\n";
    let lines = render(table, 60);
    let widths: Vec<usize> = lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| UnicodeWidthStr::width(s.content.as_ref()))
                .sum::<usize>()
        })
        .filter(|w| *w > 0)
        .collect();
    assert!(
        widths.windows(2).all(|w| w[0] == w[1]),
        "{widths:?}\n{}",
        plain(&lines)
    );
}
