//! One test per rule and error of the spec's "Validation Rules", plus the
//! construction checks this crate adds (key syntax, duplicates, tools).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use north_prompt::{
    MarkdownSection, Prompt, PromptOverrides, PromptRenderError, PromptTemplate,
    PromptValidationError, RenderOptions, SectionPath, TemplateError,
};
use north_protocol::ToolSpec;
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Serialize, JsonSchema, Default)]
struct TaskParams {
    objective: String,
}

#[derive(Serialize, JsonSchema, Default)]
struct OptionalParams {
    owner: Option<String>,
}

fn task(key: &str, template: &str) -> MarkdownSection<TaskParams> {
    MarkdownSection::new("Task", key, template)
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
        approval: Default::default(),
    }
}

// Rule: empty namespace or key -> PromptValidationError.

#[test]
fn empty_namespace_is_a_validation_error() {
    let err = PromptTemplate::builder("", "key")
        .section(task("task", "$objective"))
        .build()
        .unwrap_err();
    assert_eq!(err, PromptValidationError::EmptyNamespace);
    let blank = PromptTemplate::builder("  ", "key").build().unwrap_err();
    assert_eq!(blank, PromptValidationError::EmptyNamespace);
}

#[test]
fn empty_key_is_a_validation_error() {
    let err = PromptTemplate::builder("ns", "").build().unwrap_err();
    assert_eq!(err, PromptValidationError::EmptyKey { ns: "ns".into() });
    assert_eq!(
        err.to_string(),
        "prompt key is empty in namespace `ns`; every prompt needs a key"
    );
}

// Rule: unspecialized section -> PromptValidationError. In Rust a section
// must name its params type (a compile error otherwise, see the crate docs);
// what remains checkable is a params type that is not a struct.

#[test]
fn params_that_are_not_a_struct_are_a_validation_error() {
    let err = PromptTemplate::builder("ns", "key")
        .section(MarkdownSection::<String>::new("Text", "text", "plain"))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::ParamsNotStruct {
            path: SectionPath::new(["text"]),
            params_type: "alloc::string::String",
        }
    );

    let err = PromptTemplate::builder("ns", "key")
        .section(
            MarkdownSection::plain("Parent", "parent", "").child(MarkdownSection::<
                BTreeMap<String, String>,
            >::new(
                "Map", "map", ""
            )),
        )
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, PromptValidationError::ParamsNotStruct { path, .. } if path.dotted() == "parent.map"),
        "{err:?}"
    );
}

// Rule: placeholder missing from the params -> PromptValidationError.

#[test]
fn placeholder_missing_from_params_is_a_validation_error() {
    let err = PromptTemplate::builder("ns", "key")
        .section(
            MarkdownSection::plain("Parent", "parent", "")
                .child(task("child", "Plan: ${objectve}")),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::UnknownPlaceholder {
            path: SectionPath::new(["parent", "child"]),
            placeholder: "objectve".into(),
            params_type: std::any::type_name::<TaskParams>(),
            available: vec!["objective".into()],
        }
    );
    let message = err.to_string();
    assert!(message.contains("parent.child"), "{message}");
    assert!(message.contains("`objectve`"), "{message}");
    assert!(message.contains("fields: objective"), "{message}");
}

#[test]
fn placeholder_in_a_summary_is_checked_too() {
    let err = PromptTemplate::builder("ns", "key")
        .section(task("task", "$objective").summary("About $topic"))
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, PromptValidationError::UnknownPlaceholder { placeholder, .. } if placeholder == "topic"),
        "{err:?}"
    );
}

#[test]
fn invalid_dollar_in_a_template_is_a_validation_error() {
    let err = PromptTemplate::builder("ns", "key")
        .section(task("task", "Costs $5 for $objective"))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::InvalidTemplate {
            path: SectionPath::new(["task"]),
            error: TemplateError::InvalidPlaceholder { line: 1, column: 7 },
        }
    );
}

// Rule: missing required field at render -> PromptRenderError.

#[test]
fn missing_field_value_at_render_is_a_render_error() {
    let template = PromptTemplate::builder("ns", "key")
        .section(MarkdownSection::<OptionalParams>::new(
            "Owner",
            "owner",
            "Owner: $owner",
        ))
        .build()
        .unwrap();
    let err = Prompt::new(template.clone()).render().unwrap_err();
    assert_eq!(
        err,
        PromptRenderError::MissingField {
            path: SectionPath::new(["owner"]),
            field: "owner".into(),
            params_type: std::any::type_name::<OptionalParams>(),
        }
    );
    let ok = Prompt::new(template)
        .bind(OptionalParams {
            owner: Some("me".into()),
        })
        .render()
        .unwrap();
    assert_eq!(ok.text(), "## 1. Owner\n\nOwner: me");
}

// Rule: template substitution failure -> PromptRenderError. An override
// given to a render is checked before substitution, with the rule section
// templates met at build; the render error wraps that validation error.

#[test]
fn a_bad_override_given_to_a_render_is_a_render_error_wrapping_the_validation_error() {
    let template = PromptTemplate::builder("ns", "key")
        .section(task("task", "$objective"))
        .build()
        .unwrap();
    let prompt = Prompt::new(template.clone());

    let mut unknown = PromptOverrides::new();
    unknown.set("ns", "key", ["task"], "Now with $typo");
    let err = prompt
        .render_with(&RenderOptions::new().overrides(&unknown))
        .unwrap_err();
    let expected = PromptValidationError::UnknownPlaceholder {
        path: SectionPath::new(["task"]),
        placeholder: "typo".into(),
        params_type: std::any::type_name::<TaskParams>(),
        available: vec!["objective".into()],
    };
    assert_eq!(err, PromptRenderError::Override(expected.clone()));
    // The same error the construction-time check gives.
    assert_eq!(template.check_overrides(&unknown), Err(expected));
    assert!(err.to_string().contains("`typo`"), "{err}");

    let mut invalid = PromptOverrides::new();
    invalid.set("ns", "key", ["task"], "line one\n  price: $ 5");
    let err = prompt
        .render_with(&RenderOptions::new().overrides(&invalid))
        .unwrap_err();
    assert_eq!(
        err,
        PromptRenderError::Override(PromptValidationError::InvalidTemplate {
            path: SectionPath::new(["task"]),
            error: TemplateError::InvalidPlaceholder {
                line: 2,
                column: 10
            },
        })
    );
    assert!(err.to_string().contains("line 2, column 10"), "{err}");
}

#[test]
fn a_field_serde_skips_is_a_substitution_failure_at_render() {
    #[derive(Serialize, JsonSchema, Default)]
    struct Skipping {
        #[serde(skip_serializing_if = "String::is_empty")]
        note: String,
    }
    let template = PromptTemplate::builder("ns", "key")
        .section(MarkdownSection::<Skipping>::new(
            "Note",
            "note",
            "Note: $note",
        ))
        .build()
        .unwrap();
    let err = Prompt::new(template).render().unwrap_err();
    assert_eq!(
        err,
        PromptRenderError::Substitution {
            path: SectionPath::new(["note"]),
            error: TemplateError::MissingKey {
                name: "note".into()
            },
        }
    );
}

#[test]
fn a_section_always_summarized_without_summary_is_refused_when_built() {
    let err = PromptTemplate::builder("ns", "key")
        .section(task("task", "$objective").visibility(north_prompt::SectionVisibility::Summary))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::MissingSummary {
            path: SectionPath::new(["task"])
        }
    );
}

#[test]
fn a_section_summarized_by_its_params_without_summary_is_a_render_error() {
    // Only known at render: the visibility is computed from the params.
    let template = PromptTemplate::builder("ns", "key")
        .section(
            task("task", "$objective")
                .visibility_with(|_| north_prompt::SectionVisibility::Summary),
        )
        .build()
        .unwrap();
    let err = Prompt::new(template).render().unwrap_err();
    assert_eq!(
        err,
        PromptRenderError::MissingSummary {
            path: SectionPath::new(["task"])
        }
    );
}

// Construction checks beyond the spec's list.

#[test]
fn section_keys_must_match_the_key_pattern() {
    for bad in ["Task", "-task", "task key", "", "ключ", &"k".repeat(65)] {
        let err = PromptTemplate::builder("ns", "key")
            .section(task(bad, "$objective"))
            .build()
            .unwrap_err();
        assert!(
            matches!(&err, PromptValidationError::InvalidSectionKey { key, .. } if key == bad),
            "{bad:?}: {err:?}"
        );
    }
    for good in ["task", "0-task", "a.b_c-d", &"k".repeat(64)] {
        PromptTemplate::builder("ns", "key")
            .section(task(good, "$objective"))
            .build()
            .unwrap();
    }
}

#[test]
fn sibling_keys_must_be_unique() {
    let err = PromptTemplate::builder("ns", "key")
        .section(task("task", "$objective"))
        .section(task("task", "$objective"))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::DuplicateSectionKey {
            path: SectionPath::new(["task"])
        }
    );
    // The same key under different parents is fine.
    PromptTemplate::builder("ns", "key")
        .section(MarkdownSection::plain("A", "a", "").child(MarkdownSection::plain("X", "x", "")))
        .section(MarkdownSection::plain("B", "b", "").child(MarkdownSection::plain("X", "x", "")))
        .build()
        .unwrap();
}

#[test]
fn tool_names_must_be_unique_and_not_reserved() {
    let err = PromptTemplate::builder("ns", "key")
        .section(MarkdownSection::plain("A", "a", "").tool(tool("grep")))
        .section(MarkdownSection::plain("B", "b", "").tool(tool("grep")))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::DuplicateToolName {
            path: SectionPath::new(["b"]),
            tool: "grep".into()
        }
    );
    let err = PromptTemplate::builder("ns", "key")
        .section(MarkdownSection::plain("A", "a", "").tool(tool("read_section")))
        .build()
        .unwrap_err();
    assert!(
        matches!(err, PromptValidationError::ReservedToolName { .. }),
        "{err:?}"
    );
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Choice {
    A { x: u8 },
    B(String),
}

#[test]
fn output_types_must_be_structs_or_vecs_of_structs() {
    fn refused<O: north_prompt::Output>() -> PromptValidationError {
        PromptTemplate::builder("ns", "key")
            .output::<O>()
            .build()
            .unwrap_err()
    }
    for err in [
        refused::<String>(),
        refused::<Vec<String>>(),
        refused::<BTreeMap<String, u32>>(),
        refused::<Choice>(),
        refused::<Option<u32>>(),
    ] {
        assert!(
            matches!(err, PromptValidationError::OutputNotStruct { .. }),
            "{err:?}"
        );
    }
}
