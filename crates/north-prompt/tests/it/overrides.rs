//! Body overrides meet the rule section templates meet at build, before
//! anything renders: checked by `PromptTemplate::check_overrides`, when
//! attached with `Prompt::with_overrides`, and again by a render given
//! overrides directly (defence in depth).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use north_prompt::{
    HostFilesystem, MarkdownSection, Prompt, PromptOverrides, PromptRenderError, PromptTemplate,
    PromptValidationError, RenderOptions, SectionPath, TemplateError, WorkspaceSection,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, Default)]
struct TaskParams {
    objective: String,
}

#[derive(Serialize, JsonSchema, Default)]
struct StyleParams {
    tone: String,
    length: u32,
}

/// `task` (TaskParams) with child `task.style` (StyleParams), a `policy`
/// that refuses overrides, and a `workspace` that fills `${root}` itself.
fn template() -> PromptTemplate {
    PromptTemplate::builder("tests", "overrides")
        .section(
            MarkdownSection::<TaskParams>::new("Task", "task", "Do $objective.").child(
                MarkdownSection::<StyleParams>::new("Style", "style", "Be $tone."),
            ),
        )
        .section(
            MarkdownSection::plain("Policy", "policy", "Never override me.")
                .accepts_overrides(false),
        )
        .section(WorkspaceSection::new(Arc::new(HostFilesystem::new(
            "/srv/app",
        ))))
        .build()
        .unwrap()
}

fn one(path: &[&str], text: &str) -> PromptOverrides {
    let mut overrides = PromptOverrides::new();
    overrides.set("tests", "overrides", SectionPath::new(path.to_vec()), text);
    overrides
}

fn task() -> TaskParams {
    TaskParams {
        objective: "ship".into(),
    }
}

#[test]
fn an_unknown_placeholder_in_an_override_is_the_build_time_error() {
    let template = template();
    let err = template
        .check_overrides(&one(&["task", "style"], "Be $tone in $lenght lines."))
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::UnknownPlaceholder {
            path: SectionPath::new(["task", "style"]),
            placeholder: "lenght".into(),
            params_type: std::any::type_name::<StyleParams>(),
            available: vec!["tone".into(), "length".into()],
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "section `task.style`: placeholder `lenght` names no field of `{}` (fields: tone, length)",
            std::any::type_name::<StyleParams>()
        )
    );

    // The same mistake in the section's own template fails the build with
    // the same variant: one rule for both.
    let built = PromptTemplate::builder("tests", "overrides")
        .section(MarkdownSection::<StyleParams>::new(
            "Style",
            "style",
            "Be $tone in $lenght lines.",
        ))
        .build()
        .unwrap_err();
    assert!(
        matches!(&built, PromptValidationError::UnknownPlaceholder { placeholder, .. } if placeholder == "lenght"),
        "{built:?}"
    );
}

#[test]
fn an_override_for_a_missing_section_path_is_refused_with_the_paths_there_are() {
    let err = template()
        .check_overrides(&one(&["task", "tone"], "Be nice."))
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::UnknownOverridePath {
            path: SectionPath::new(["task", "tone"]),
            available: vec![
                SectionPath::new(["task"]),
                SectionPath::new(["task", "style"]),
                SectionPath::new(["policy"]),
                SectionPath::new(["workspace"]),
            ],
        }
    );
    assert!(
        err.to_string()
            .contains("sections: task, task.style, policy, workspace"),
        "{err}"
    );
}

#[test]
fn an_override_on_a_section_that_refuses_overrides_is_refused() {
    let err = template()
        .check_overrides(&one(&["policy"], "Anything goes."))
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::OverrideNotAccepted {
            path: SectionPath::new(["policy"]),
        }
    );
    assert!(
        err.to_string().contains("does not accept overrides"),
        "{err}"
    );
}

#[test]
fn an_override_with_a_bad_dollar_is_an_invalid_template_located_in_the_dedented_text() {
    let err = template()
        .check_overrides(&one(&["task"], "\n    Do it.\n    Pay $ 5.\n"))
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::InvalidTemplate {
            path: SectionPath::new(["task"]),
            error: TemplateError::InvalidPlaceholder { line: 2, column: 5 },
        }
    );
}

#[test]
fn good_overrides_pass_and_names_a_section_fills_itself_count_as_fields() {
    let template = template();
    let mut overrides = one(&["task"], "Now: ${objective}!");
    overrides
        .set(
            "tests",
            "overrides",
            ["task", "style"],
            "$tone, $length lines",
        )
        .set("tests", "overrides", ["workspace"], "Root: ${root}.")
        // Other prompts' entries are not this template's business.
        .set("tests", "other", ["nowhere"], "$anything");
    assert_eq!(template.check_overrides(&overrides), Ok(()));
    assert_eq!(template.check_overrides(&PromptOverrides::new()), Ok(()));
}

#[test]
fn attached_overrides_are_checked_when_attached_and_applied_by_render() {
    let err = Prompt::new(template())
        .with_overrides(&one(&["task"], "Do $objectiv."))
        .unwrap_err();
    assert!(
        matches!(&err, PromptValidationError::UnknownPlaceholder { path, placeholder, .. }
            if *path == SectionPath::new(["task"]) && placeholder == "objectiv"),
        "{err:?}"
    );

    let prompt = Prompt::new(template())
        .bind(task())
        .with_overrides(&one(&["task"], "  Now: ${objective}!  "))
        .unwrap()
        .with_overrides(&one(&["workspace"], "Root: ${root}."))
        .unwrap();
    let text = prompt.render().unwrap().into_text();
    assert!(
        text.starts_with("## 1. Task\n\nNow: ship!\n\n### 1.1. Style"),
        "{text}"
    );
    assert!(
        text.ends_with("## 3. Workspace\n\nRoot: /srv/app."),
        "{text}"
    );
    assert_eq!(
        prompt
            .overrides()
            .get("tests", "overrides", &SectionPath::new(["task"])),
        Some("  Now: ${objective}!  ")
    );

    // Overrides given to one render apply over the attached ones, per path.
    let text = prompt
        .render_with(&RenderOptions::new().overrides(&one(&["task"], "Instead: $objective")))
        .unwrap()
        .into_text();
    assert!(
        text.starts_with("## 1. Task\n\nInstead: ship\n\n"),
        "{text}"
    );
    assert!(text.ends_with("Root: /srv/app."), "{text}");
}

#[test]
fn a_failed_attach_leaves_nothing_attached() {
    let prompt = Prompt::new(template()).bind(task());
    let mut mixed = one(&["task"], "Fine: $objective");
    mixed.set("tests", "overrides", ["policy"], "Not fine.");
    assert!(prompt.with_overrides(&mixed).is_err());

    let prompt = Prompt::new(template()).bind(task());
    let plain = prompt.render().unwrap().into_text();
    assert!(plain.contains("Do ship."), "{plain}");
}

#[test]
fn a_render_refuses_every_kind_of_bad_override_it_is_given() {
    let prompt = Prompt::new(template()).bind(task());
    for (path, text) in [
        (&["task", "style"][..], "Be $mood."),
        (&["policy"][..], "Anything goes."),
        (&["nowhere"][..], "Text."),
        (&["task"][..], "Pay $ 5."),
    ] {
        let overrides = one(path, text);
        let err = prompt
            .render_with(&RenderOptions::new().overrides(&overrides))
            .unwrap_err();
        let expected = prompt.template().check_overrides(&overrides).unwrap_err();
        assert_eq!(err, PromptRenderError::Override(expected), "{path:?}");
        assert!(
            err.to_string().starts_with("body override refused: "),
            "{err}"
        );
    }
}

#[test]
fn overrides_on_a_disabled_section_are_still_checked() {
    let template = PromptTemplate::builder("tests", "overrides")
        .section(
            MarkdownSection::<TaskParams>::new("Task", "task", "Do $objective.")
                .enabled(|p: &TaskParams| !p.objective.is_empty()),
        )
        .build()
        .unwrap();
    let prompt = Prompt::new(template);
    assert_eq!(prompt.render().unwrap().text(), "");
    // Whether a section renders this time is no reason to accept a typo.
    assert!(prompt.with_overrides(&one(&["task"], "$objectve")).is_err());
}
