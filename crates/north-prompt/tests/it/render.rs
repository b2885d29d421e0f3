//! Rendering through the public API: numbering, enabled predicates, params
//! lookup, overrides, descriptors and cloning (custom sections and the
//! derive: `custom_sections.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use north_prompt::{
    HostFilesystem, MarkdownSection, ParamValue, Prompt, PromptOverrides, PromptParams,
    PromptRenderError, PromptTemplate, PromptValidationError, RenderOptions, Section, SectionNode,
    SectionPath, SectionVisibility, WorkspaceSection, markdown_section,
};
use north_protocol::ToolSpec;
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

#[derive(Debug, Clone, Serialize, JsonSchema, Default, PromptParams)]
struct TaskParams {
    objective: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema, Default, PromptParams)]
struct StyleParams {
    tone: String,
    verbose: bool,
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: format!("The {name} tool."),
        input_schema: json!({"type": "object", "properties": {}}),
        approval: Default::default(),
    }
}

fn nested_template() -> PromptTemplate {
    PromptTemplate::builder("tests", "nested")
        .section(
            MarkdownSection::<TaskParams>::new("Task", "task", "Objective: ${objective}")
                .child(MarkdownSection::plain(
                    "Constraints",
                    "constraints",
                    "Keep it small.",
                ))
                .child(
                    MarkdownSection::plain("Steps", "steps", "Work in order.").child(
                        MarkdownSection::plain("Verification", "verify", "Run the tests."),
                    ),
                ),
        )
        .section(markdown_section!(
            StyleParams,
            "Style",
            "style",
            "Tone: $tone. Verbose: $verbose."
        ))
        .section(
            MarkdownSection::plain("Closing", "closing", "")
                .child(MarkdownSection::plain("Notes", "notes", "None.")),
        )
        .build()
        .unwrap()
}

#[test]
fn nested_sections_are_numbered_depth_first() {
    let prompt = Prompt::new(nested_template())
        .bind(TaskParams {
            objective: "ship it".into(),
        })
        .bind(StyleParams {
            tone: "calm".into(),
            verbose: false,
        });
    let rendered = prompt.render().unwrap();
    insta::assert_snapshot!("nested_numbering", rendered.text());
}

#[test]
fn disabled_sections_and_their_children_are_omitted() {
    let template = PromptTemplate::builder("tests", "disabled")
        .section(MarkdownSection::plain("Intro", "intro", "Hello."))
        .section(
            MarkdownSection::<StyleParams>::new("Verbose notes", "verbose", "Tone: $tone")
                .enabled(|p: &StyleParams| p.verbose)
                .child(MarkdownSection::plain(
                    "Hidden child",
                    "hidden",
                    "never shown",
                )),
        )
        .section(
            MarkdownSection::plain("Rules", "rules", "Follow them.")
                .child(
                    MarkdownSection::<StyleParams>::new("Tone rule", "tone", "Use a $tone tone.")
                        .enabled(|p: &StyleParams| !p.tone.is_empty()),
                )
                .child(MarkdownSection::plain("Last rule", "last", "Be brief.")),
        )
        .build()
        .unwrap();
    let quiet = Prompt::new(template.clone())
        .bind(StyleParams {
            tone: String::new(),
            verbose: false,
        })
        .render()
        .unwrap();
    insta::assert_snapshot!("disabled_sections", quiet.text());
    assert!(!quiet.text().contains("never shown"));

    let loud = Prompt::new(template)
        .bind(StyleParams {
            tone: "warm".into(),
            verbose: true,
        })
        .render()
        .unwrap();
    insta::assert_snapshot!("enabled_sections", loud.text());
}

#[test]
fn tools_of_enabled_sections_are_collected_in_order() {
    let template = PromptTemplate::builder("tests", "tools")
        .section(
            MarkdownSection::plain("A", "a", "a")
                .tool(tool("first"))
                .child(MarkdownSection::plain("A1", "a1", "a1").tool(tool("second"))),
        )
        .section(
            MarkdownSection::<StyleParams>::new("B", "b", "b")
                .enabled(|p: &StyleParams| p.verbose)
                .tool(tool("hidden")),
        )
        .section(MarkdownSection::plain("C", "c", "c").tool(tool("third")))
        .build()
        .unwrap();
    let rendered = Prompt::new(template).render().unwrap();
    let names: Vec<_> = rendered.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["first", "second", "third"]);
}

#[test]
fn params_lookup_prefers_bound_then_own_default_then_first_default_then_default() {
    let template = PromptTemplate::builder("tests", "lookup")
        .section(
            MarkdownSection::<TaskParams>::new("First", "first", "first: $objective")
                .default_params(TaskParams {
                    objective: "first default".into(),
                }),
        )
        .section(MarkdownSection::<TaskParams>::new(
            "Second",
            "second",
            "second: $objective",
        ))
        .section(
            MarkdownSection::<TaskParams>::new("Third", "third", "third: $objective")
                .default_params(TaskParams {
                    objective: "own default".into(),
                }),
        )
        .section(MarkdownSection::<StyleParams>::new(
            "Style",
            "style",
            "tone: [$tone]",
        ))
        .build()
        .unwrap();

    let unbound = Prompt::new(template.clone()).render().unwrap();
    assert_eq!(
        unbound.text(),
        "## 1. First\n\nfirst: first default\n\n## 2. Second\n\nsecond: first default\n\n\
         ## 3. Third\n\nthird: own default\n\n## 4. Style\n\ntone: []"
    );

    let bound = Prompt::new(template)
        .bind(TaskParams {
            objective: "bound".into(),
        })
        .render()
        .unwrap();
    assert!(bound.text().contains("first: bound"));
    assert!(bound.text().contains("second: bound"));
    assert!(bound.text().contains("third: bound"));
}

#[test]
fn rebinding_a_type_replaces_the_previous_value() {
    let template = PromptTemplate::builder("tests", "rebind")
        .section(MarkdownSection::<TaskParams>::new(
            "Task",
            "task",
            "$objective",
        ))
        .build()
        .unwrap();
    let prompt = Prompt::new(template)
        .bind(TaskParams {
            objective: "old".into(),
        })
        .bind(TaskParams {
            objective: "new".into(),
        });
    assert_eq!(prompt.params::<TaskParams>().unwrap().objective, "new");
    assert_eq!(prompt.render().unwrap().text(), "## 1. Task\n\nnew");
}

#[test]
fn bind_all_accepts_distinct_types() {
    let prompt = Prompt::new(nested_template()).bind_all([
        ParamValue::new(TaskParams {
            objective: "both".into(),
        }),
        ParamValue::new(StyleParams {
            tone: "dry".into(),
            verbose: true,
        }),
    ]);
    let text = prompt.render().unwrap().into_text();
    assert!(text.contains("Objective: both"));
    assert!(text.contains("Tone: dry. Verbose: true."));
}

#[test]
fn the_same_type_twice_in_one_bind_is_rejected_at_render() {
    let prompt = Prompt::new(nested_template()).bind_all([
        ParamValue::new(TaskParams {
            objective: "a".into(),
        }),
        ParamValue::new(TaskParams {
            objective: "b".into(),
        }),
    ]);
    let err = prompt.render().unwrap_err();
    assert!(
        matches!(
            &err,
            PromptRenderError::Invalid(PromptValidationError::DuplicateParams { params_type })
                if params_type.ends_with("TaskParams")
        ),
        "{err:?}"
    );
}

#[test]
fn markdown_templates_are_dedented_stripped_and_escaped() {
    #[derive(Serialize, JsonSchema, Default)]
    struct Values {
        name: String,
        count: u32,
        ratio: f64,
        flags: Vec<String>,
        nested: Inner,
    }
    #[derive(Serialize, JsonSchema, Default)]
    struct Inner {
        ok: bool,
    }
    let template = PromptTemplate::builder("tests", "text")
        .section(MarkdownSection::<Values>::new(
            "Values",
            "values",
            r#"
                Name: $name (costs $$5)
                  Count: ${count}, ratio: $ratio
                Flags: $flags; nested: $nested
            "#,
        ))
        .build()
        .unwrap();
    let text = Prompt::new(template)
        .bind(Values {
            name: "north".into(),
            count: 3,
            ratio: 0.5,
            flags: vec!["a".into(), "b".into()],
            nested: Inner { ok: true },
        })
        .render()
        .unwrap()
        .into_text();
    assert_eq!(
        text,
        "## 1. Values\n\nName: north (costs $5)\n  Count: 3, ratio: 0.5\nFlags: [\"a\",\"b\"]; nested: {\"ok\":true}"
    );
}

#[test]
fn visibility_overrides_and_body_overrides_apply_by_path() {
    let template = PromptTemplate::builder("tests", "overrides")
        .section(
            MarkdownSection::<TaskParams>::new("Task", "task", "Original: $objective").child(
                MarkdownSection::plain("Detail", "detail", "Original detail."),
            ),
        )
        .section(
            MarkdownSection::plain("Policy", "policy", "Never override me.")
                .accepts_overrides(false),
        )
        .build()
        .unwrap();
    let prompt = Prompt::new(template).bind(TaskParams {
        objective: "tests".into(),
    });

    let mut overrides = PromptOverrides::new();
    overrides
        .set("tests", "overrides", ["task"], "Overridden: ${objective}!")
        .set(
            "tests",
            "overrides",
            ["task", "detail"],
            "  Overridden detail.  ",
        )
        .set("tests", "other-prompt", ["task"], "Not this prompt.");
    let rendered = prompt
        .render_with(&RenderOptions::new().overrides(&overrides))
        .unwrap();
    insta::assert_snapshot!("overrides", rendered.text());
    assert!(rendered.text().contains("Never override me."));
    assert!(!rendered.text().contains("Not this prompt."));

    // The descriptor is the template's: overrides do not change the hash.
    assert_eq!(rendered.descriptor(), prompt.render().unwrap().descriptor());
}

#[test]
fn overrides_round_trip_through_entries() {
    let mut overrides = PromptOverrides::new();
    overrides.set("ns", "key", SectionPath::new(["a", "b.c"]), "text");
    let entries = overrides.entries();
    let json = serde_json::to_value(&entries).unwrap();
    assert_eq!(
        json,
        json!([{"ns": "ns", "key": "key", "path": ["a", "b.c"], "template": "text"}])
    );
    let back = PromptOverrides::from_entries(serde_json::from_value::<Vec<_>>(json).unwrap());
    assert_eq!(back, overrides);
    assert_eq!(
        back.get("ns", "key", &SectionPath::new(["a", "b.c"])),
        Some("text")
    );
}

#[test]
fn computed_visibility_uses_the_params() {
    let template = PromptTemplate::builder("tests", "computed")
        .section(
            MarkdownSection::<StyleParams>::new("Style", "style", "Full style guide: $tone")
                .summary("Style guide ($tone) available.")
                .visibility_with(|p: &StyleParams| {
                    if p.verbose {
                        SectionVisibility::Full
                    } else {
                        SectionVisibility::Summary
                    }
                }),
        )
        .build()
        .unwrap();
    let brief = Prompt::new(template.clone())
        .bind(StyleParams {
            tone: "calm".into(),
            verbose: false,
        })
        .render()
        .unwrap();
    assert!(
        brief
            .text()
            .starts_with("## 1. Style\n\nStyle guide (calm) available.")
    );
    let full = Prompt::new(template)
        .bind(StyleParams {
            tone: "calm".into(),
            verbose: true,
        })
        .render()
        .unwrap();
    assert_eq!(full.text(), "## 1. Style\n\nFull style guide: calm");
}

#[test]
fn descriptor_hash_tracks_template_content_only() {
    let a = nested_template();
    let b = nested_template();
    assert_eq!(a.descriptor(), b.descriptor());
    assert_eq!(a.descriptor().content_hash.len(), 64);
    assert_eq!(a.descriptor().ns, "tests");
    assert_eq!(a.descriptor().key, "nested");

    let changed = PromptTemplate::builder("tests", "nested")
        .section(MarkdownSection::<TaskParams>::new(
            "Task",
            "task",
            "Objective (changed): ${objective}",
        ))
        .build()
        .unwrap();
    assert_ne!(
        a.descriptor().content_hash,
        changed.descriptor().content_hash
    );

    let rendered_one = Prompt::new(a.clone())
        .bind(TaskParams {
            objective: "x".into(),
        })
        .render()
        .unwrap();
    let rendered_two = Prompt::new(a.clone())
        .bind(TaskParams {
            objective: "y".into(),
        })
        .render()
        .unwrap();
    assert_eq!(rendered_one.descriptor(), rendered_two.descriptor());
    assert_eq!(rendered_one.descriptor(), a.descriptor());
}

#[test]
fn rendering_is_byte_for_byte_deterministic() {
    let prompt = Prompt::new(nested_template()).bind(TaskParams {
        objective: "same".into(),
    });
    let first = prompt.render().unwrap();
    for _ in 0..5 {
        assert_eq!(prompt.render().unwrap().text(), first.text());
    }
}

#[test]
fn cloned_sections_are_decoupled() {
    let original = MarkdownSection::<TaskParams>::new("Task", "task", "Do $objective")
        .child(MarkdownSection::plain("Child", "child", "child text"));
    let extended = original
        .clone()
        .child(MarkdownSection::plain("Extra", "extra", "extra text"));
    assert_eq!(Section::children(&original).len(), 1);
    assert_eq!(Section::children(&extended).len(), 2);

    let node: SectionNode = original.into();
    let copy = node.clone();
    assert_eq!(copy.children().len(), 1);
    assert_eq!(copy.children()[0].key(), "child");
    let section = copy.downcast_ref::<MarkdownSection<TaskParams>>().unwrap();
    assert_eq!(section.template(), "Do $objective");

    let one = PromptTemplate::builder("tests", "clone")
        .section(node)
        .build()
        .unwrap();
    let two = PromptTemplate::builder("tests", "clone")
        .section(copy)
        .build()
        .unwrap();
    assert_eq!(
        Prompt::new(one).render().unwrap().text(),
        Prompt::new(two).render().unwrap().text()
    );
}

#[test]
fn workspace_section_renders_its_root() {
    let fs = Arc::new(HostFilesystem::new("/srv/project"));
    let template = PromptTemplate::builder("tests", "workspace")
        .section(WorkspaceSection::new(fs.clone()))
        .section(
            WorkspaceSection::new(fs)
                .titled("Sandbox", "sandbox")
                .template("Only touch files under ${root}."),
        )
        .build()
        .unwrap();
    let text = Prompt::new(template).render().unwrap().into_text();
    assert_eq!(
        text,
        "## 1. Workspace\n\nThe workspace root is `/srv/project`. Use paths relative to it.\n\n\
         ## 2. Sandbox\n\nOnly touch files under /srv/project."
    );
}

#[test]
fn a_deadline_rides_on_the_rendered_prompt() {
    let prompt = Prompt::new(nested_template()).bind(TaskParams {
        objective: "ship it".into(),
    });
    let plain = prompt.render().unwrap();
    assert_eq!(plain.deadline(), None);
    assert_eq!(plain.remaining(), None);
    let at = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let rendered = prompt
        .render_with(&RenderOptions::new().deadline(at))
        .unwrap();
    assert_eq!(rendered.deadline(), Some(at));
    assert!(rendered.remaining().is_some_and(|r| r.as_secs() <= 60));
    assert_eq!(rendered.text(), plain.text(), "the text is the same");
    let past = plain.with_deadline(std::time::Instant::now() - std::time::Duration::from_secs(1));
    assert_eq!(past.remaining(), Some(std::time::Duration::ZERO));
    assert_eq!(past.clone().deadline(), past.deadline(), "clones keep it");
}
