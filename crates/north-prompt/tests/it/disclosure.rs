//! Progressive disclosure: summaries and their suffixes, injected tools, the
//! `open_sections` / `read_section` handlers, and the caller loop with a
//! session-held visibility store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_prompt::{
    DisclosureError, MarkdownSection, OPEN_SECTIONS_TOOL, Prompt, PromptTemplate,
    READ_SECTION_TOOL, RenderOptions, SectionPath, SectionVisibility, VisibilityOverrides,
    dispatch_disclosure_tool, handle_open_sections, handle_read_section,
};
use north_protocol::ToolSpec;
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

#[derive(Serialize, JsonSchema, Default)]
struct ContextParams {
    repo: String,
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: format!("The {name} tool."),
        input_schema: json!({"type": "object", "properties": {}}),
        approval: Default::default(),
    }
}

/// `context` (no tools, with a nested summarized child) and `shell` (with
/// a tool), both summarized, around a plain section.
fn template() -> PromptTemplate {
    PromptTemplate::builder("tests", "disclosure")
        .section(MarkdownSection::plain(
            "Role",
            "role",
            "You are a careful engineer.",
        ))
        .section(
            MarkdownSection::<ContextParams>::new(
                "Context",
                "context",
                "The repository is $repo. It has three crates.",
            )
            .summary("Repository context for $repo.")
            .visibility(SectionVisibility::Summary)
            .child(MarkdownSection::plain(
                "Layout",
                "layout",
                "crates/ holds the code.",
            ))
            .child(
                MarkdownSection::plain("History", "history", "Started in 2024; many commits.")
                    .summary("Project history.")
                    .visibility(SectionVisibility::Summary),
            ),
        )
        .section(
            MarkdownSection::plain("Shell", "shell", "Run commands with `bash`.")
                .summary("Shell access is available.")
                .visibility(SectionVisibility::Summary)
                .tool(tool("bash")),
        )
        .build()
        .unwrap()
}

fn prompt() -> Prompt {
    Prompt::new(template()).bind(ContextParams {
        repo: "north".into(),
    })
}

fn tool_names<O>(rendered: &north_prompt::RenderedPrompt<O>) -> Vec<String> {
    rendered.tools().iter().map(|t| t.name.clone()).collect()
}

#[test]
fn summaries_end_with_the_suffix_for_their_tool() {
    let rendered = prompt().render().unwrap();
    insta::assert_snapshot!("summaries_both_suffixes", rendered.text());
    assert!(rendered.text().contains(
        "---\n[This section is summarized. Call `read_section` with key \"context\" to view full content including subsections: layout, history.]"
    ));
    assert!(rendered.text().contains(
        "---\n[This section is summarized. To view full content, call `open_sections` with key \"shell\".]"
    ));
}

#[test]
fn both_disclosure_tools_are_injected_and_summarized_tools_hidden() {
    let rendered = prompt().render().unwrap();
    assert_eq!(
        tool_names(&rendered),
        [OPEN_SECTIONS_TOOL, READ_SECTION_TOOL]
    );
    let keys: Vec<_> = rendered
        .summarized_sections()
        .iter()
        .map(|s| (s.key(), s.has_tools()))
        .collect();
    assert_eq!(
        keys,
        [
            ("context", false),
            ("context.history", false),
            ("shell", true)
        ]
    );
    let open = &rendered.tools()[0];
    assert_eq!(
        open.input_schema,
        json!({
            "type": "object",
            "properties": {
                "section_keys": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Keys of the summarized sections to expand (dot notation for nested sections: `parent.child`)."
                },
                "reason": {"type": "string", "description": "Why the full content is needed."}
            },
            "required": ["reason", "section_keys"],
            "additionalProperties": false
        })
    );
    let descriptions = rendered.tool_param_descriptions();
    assert_eq!(
        descriptions[READ_SECTION_TOOL].keys().collect::<Vec<_>>(),
        ["section_key"]
    );
}

#[test]
fn only_open_sections_when_every_summarized_section_has_tools() {
    let template = PromptTemplate::builder("tests", "open-only")
        .section(
            MarkdownSection::plain("Shell", "shell", "Run commands.")
                .summary("Shell available.")
                .visibility(SectionVisibility::Summary)
                .tool(tool("bash")),
        )
        .build()
        .unwrap();
    let rendered = Prompt::new(template).render().unwrap();
    assert_eq!(tool_names(&rendered), [OPEN_SECTIONS_TOOL]);
}

#[test]
fn only_read_section_when_no_summarized_section_has_tools() {
    let template = PromptTemplate::builder("tests", "read-only")
        .section(MarkdownSection::plain("Tools", "tools", "").tool(tool("grep")))
        .section(
            MarkdownSection::plain("Notes", "notes", "Long notes.")
                .summary("Notes available.")
                .visibility(SectionVisibility::Summary),
        )
        .build()
        .unwrap();
    let rendered = Prompt::new(template).render().unwrap();
    assert_eq!(tool_names(&rendered), ["grep", READ_SECTION_TOOL]);
}

#[test]
fn a_tool_in_a_child_makes_the_summarized_parent_use_open_sections() {
    let template = PromptTemplate::builder("tests", "child-tool")
        .section(
            MarkdownSection::plain("Parent", "parent", "Body.")
                .summary("Parent summary.")
                .visibility(SectionVisibility::Summary)
                .child(MarkdownSection::plain("Child", "child", "Child body.").tool(tool("deep"))),
        )
        .build()
        .unwrap();
    let rendered = Prompt::new(template).render().unwrap();
    assert_eq!(tool_names(&rendered), [OPEN_SECTIONS_TOOL]);
    assert!(
        rendered
            .text()
            .contains("Call `open_sections` with key \"parent\" to view full content including subsections: child.")
    );
}

#[test]
fn no_disclosure_tools_without_summaries() {
    let overrides = {
        let mut v = VisibilityOverrides::new();
        v.set(["context"], SectionVisibility::Full);
        v.set(["context", "history"], SectionVisibility::Full);
        v.set(["shell"], SectionVisibility::Full);
        v
    };
    let rendered = prompt()
        .render_with(&RenderOptions::new().visibility(&overrides))
        .unwrap();
    assert_eq!(tool_names(&rendered), ["bash"]);
    assert!(rendered.summarized_sections().is_empty());
}

#[test]
fn read_section_returns_full_markdown_and_changes_nothing() {
    let prompt = prompt();
    let rendered = prompt.render().unwrap();
    let markdown = handle_read_section(&rendered, &json!({"section_key": "context"})).unwrap();
    insta::assert_snapshot!("read_section_context", markdown);

    let nested =
        handle_read_section(&rendered, &json!({"section_key": "context.history"})).unwrap();
    assert_eq!(nested, "### 2.2. History\n\nStarted in 2024; many commits.");

    // Still summarized on the next render.
    assert_eq!(prompt.render().unwrap().text(), rendered.text());
}

#[test]
fn open_sections_requests_expansion_of_the_sections_and_their_summarized_ancestors() {
    let rendered = prompt().render().unwrap();
    let err = handle_open_sections(
        &rendered,
        &json!({"section_keys": ["shell", "context.history"], "reason": "need the tools"}),
    )
    .unwrap_err();
    let DisclosureError::ExpansionRequired(request) = err else {
        panic!("expected an expansion request, got {err:?}");
    };
    assert_eq!(request.reason, "need the tools");
    assert_eq!(request.section_keys, ["shell", "context.history"]);
    let paths: Vec<_> = request
        .requested_overrides
        .iter()
        .map(|(p, v)| (p.dotted(), *v))
        .collect();
    assert_eq!(
        paths,
        [
            ("context".to_owned(), SectionVisibility::Full),
            ("context.history".to_owned(), SectionVisibility::Full),
            ("shell".to_owned(), SectionVisibility::Full),
        ]
    );
}

#[test]
fn bad_disclosure_calls_are_tool_errors() {
    let rendered = prompt().render().unwrap();
    let cases = [
        (
            OPEN_SECTIONS_TOOL,
            json!({"section_keys": [], "reason": "x"}),
        ),
        (
            OPEN_SECTIONS_TOOL,
            json!({"section_keys": ["shell"], "reason": " "}),
        ),
        (OPEN_SECTIONS_TOOL, json!({"section_keys": ["shell"]})),
        (READ_SECTION_TOOL, json!({"section_key": 3})),
        (
            READ_SECTION_TOOL,
            json!({"section_key": "context", "extra": 1}),
        ),
    ];
    for (tool, args) in cases {
        let err = dispatch_disclosure_tool(&rendered, tool, &args)
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(err, DisclosureError::InvalidArguments { .. }),
            "{tool} {args}: {err:?}"
        );
        let outcome = err.to_tool_outcome().unwrap();
        assert!(!outcome.ok);
    }

    let err = handle_read_section(&rendered, &json!({"section_key": "role"})).unwrap_err();
    assert_eq!(
        err,
        DisclosureError::UnknownSection {
            tool: READ_SECTION_TOOL,
            key: "role".into(),
            available: vec!["context".into(), "context.history".into(), "shell".into()],
        }
    );
    assert!(dispatch_disclosure_tool(&rendered, "bash", &json!({})).is_none());
}

/// The spec's caller pattern: evaluate, and on `VisibilityExpansionRequired`
/// apply the overrides to the session's store and evaluate again.
#[test]
fn caller_loop_expands_sections_through_a_session_store() {
    struct Session {
        visibility: VisibilityOverrides,
    }
    let prompt = prompt();
    let mut session = Session {
        visibility: VisibilityOverrides::new(),
    };
    // A scripted model: first asks to open `shell`, then uses its tool.
    let mut script = vec![
        (
            "open_sections",
            json!({"section_keys": ["shell"], "reason": "run tests"}),
        ),
        ("bash", json!({"command": "cargo test"})),
    ]
    .into_iter();

    let mut turns = 0;
    let final_tools = loop {
        turns += 1;
        assert!(turns < 5, "the loop must converge");
        let rendered = prompt
            .render_with(&RenderOptions::new().visibility(&session.visibility))
            .unwrap();
        let (tool, args) = script.next().unwrap();
        match dispatch_disclosure_tool(&rendered, tool, &args) {
            Some(Err(DisclosureError::ExpansionRequired(request))) => {
                for (path, visibility) in &request.requested_overrides {
                    session.visibility.set(path.clone(), *visibility);
                }
                continue;
            }
            Some(other) => panic!("unexpected disclosure result {other:?}"),
            None => {
                assert!(rendered.tools().iter().any(|t| t.name == tool));
                break tool_names(&rendered);
            }
        }
    };
    assert_eq!(turns, 2);
    assert_eq!(final_tools, ["bash", READ_SECTION_TOOL]);
    assert_eq!(
        session.visibility.get(&SectionPath::new(["shell"])),
        Some(SectionVisibility::Full)
    );
    let rendered = prompt
        .render_with(&RenderOptions::new().visibility(&session.visibility))
        .unwrap();
    assert!(
        rendered
            .text()
            .contains("## 3. Shell\n\nRun commands with `bash`.")
    );

    // `apply` does the same in one call.
    let mut store = VisibilityOverrides::new();
    let first = prompt.render().unwrap();
    if let Err(DisclosureError::ExpansionRequired(request)) = handle_open_sections(
        &first,
        &json!({"section_keys": ["context"], "reason": "read it all"}),
    ) {
        store.apply(&request);
    }
    assert_eq!(
        store.get(&SectionPath::new(["context"])),
        Some(SectionVisibility::Full)
    );
}

#[test]
fn resolve_dotted_matches_keys_containing_dots() {
    let template = PromptTemplate::builder("tests", "dots")
        .section(
            MarkdownSection::plain("V", "v1.2", "")
                .child(MarkdownSection::plain("Notes", "notes", "")),
        )
        .build()
        .unwrap();
    assert_eq!(
        template.resolve_dotted("v1.2.notes"),
        Some(SectionPath::new(["v1.2", "notes"]))
    );
    assert_eq!(template.resolve_dotted("v1"), None);
    assert_eq!(
        template.section_paths(),
        [
            SectionPath::new(["v1.2"]),
            SectionPath::new(["v1.2", "notes"])
        ]
    );
    assert_eq!(
        template
            .section(&SectionPath::new(["v1.2", "notes"]))
            .map(|s| s.title()),
        Some("Notes")
    );
}

#[test]
fn visibility_overrides_persist_as_json() {
    let mut store = VisibilityOverrides::new();
    store.set(["context", "history"], SectionVisibility::Full);
    store.set(["shell"], SectionVisibility::Summary);
    let json = serde_json::to_value(&store).unwrap();
    assert_eq!(
        json,
        json!([
            {"path": ["context", "history"], "visibility": "full"},
            {"path": ["shell"], "visibility": "summary"}
        ])
    );
    let back: VisibilityOverrides = serde_json::from_value(json).unwrap();
    assert_eq!(back, store);
}
