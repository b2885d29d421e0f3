//! Conformance with `spec/prompt-system.md` where the other test files left
//! a requirement untested (rows in `docs/conformance/prompt-system.md`): the
//! optional template `name`, a workspace section's template checked when
//! the template is built, the placeholders a custom section declares, and
//! the field path of a type mismatch in an object output. Public API only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use north_prompt::{
    Filesystem, HostFilesystem, MarkdownSection, NoParams, OutputParseErrorKind, Prompt,
    PromptDescriptor, PromptOverrides, PromptRenderError, PromptTemplate, PromptValidationError,
    RenderContext, RenderedPrompt, Section, SectionPath, TemplateError, WorkspaceSection,
    parse_structured_output,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn fs() -> Arc<dyn Filesystem> {
    Arc::new(HostFilesystem::new("/srv/app"))
}

// §3.1: `PromptTemplate` owns "an optional `name`".

#[test]
fn the_optional_name_is_read_back_from_the_descriptor() {
    let body = || MarkdownSection::plain("Body", "body", "Write the email.");
    let named = PromptTemplate::builder("demo", "compose-email")
        .name("compose_email")
        .section(body())
        .build()
        .unwrap();
    assert_eq!(named.name(), Some("compose_email"));
    assert_eq!(named.descriptor().name.as_deref(), Some("compose_email"));

    // What was rendered carries it, and so does a clone of the template.
    let rendered = Prompt::new(named.clone()).render().unwrap();
    assert_eq!(rendered.descriptor().name.as_deref(), Some("compose_email"));
    assert_eq!(rendered.descriptor(), named.descriptor());
    assert_eq!(named.clone().name(), Some("compose_email"));

    // It travels with the descriptor as JSON and comes back.
    let json = serde_json::to_value(rendered.descriptor()).unwrap();
    assert_eq!(json["ns"], "demo");
    assert_eq!(json["key"], "compose-email");
    assert_eq!(json["name"], "compose_email");
    let back: PromptDescriptor = serde_json::from_value(json).unwrap();
    assert_eq!(&back, rendered.descriptor());

    // Optional: without it the descriptor has none, and the JSON leaves it out.
    let unnamed = PromptTemplate::builder("demo", "compose-email")
        .section(body())
        .build()
        .unwrap();
    assert_eq!(unnamed.name(), None);
    let rendered = Prompt::new(unnamed).render().unwrap();
    assert_eq!(rendered.descriptor().name, None);
    let json = serde_json::to_value(rendered.descriptor()).unwrap();
    assert!(json.get("name").is_none(), "{json}");
    let back: PromptDescriptor = serde_json::from_value(json).unwrap();
    assert_eq!(back.name, None);
}

// §3.4 / §9.2: the workspace section's template meets the build-time rule:
// `${root}` (which the section fills itself) is its only placeholder.

#[test]
fn a_workspace_template_with_an_unknown_placeholder_is_refused_at_build() {
    let err = PromptTemplate::builder("tests", "workspace")
        .section(
            MarkdownSection::plain("Context", "context", "Where you work:")
                .child(WorkspaceSection::new(fs()).template("Work under ${root} on ${branch}.")),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::UnknownPlaceholder {
            path: SectionPath::new(["context", "workspace"]),
            placeholder: "branch".into(),
            params_type: std::any::type_name::<NoParams>(),
            available: vec!["root".into()],
        }
    );
    let message = err.to_string();
    assert!(message.contains("context.workspace"), "{message}");
    assert!(message.contains("`branch`"), "{message}");
    assert!(message.contains("(fields: root)"), "{message}");

    // A renamed workspace section is found under its own key.
    let err = PromptTemplate::builder("tests", "workspace")
        .section(
            WorkspaceSection::new(fs())
                .titled("Sandbox", "sandbox")
                .template("Stay in $rooot."),
        )
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, PromptValidationError::UnknownPlaceholder { path, placeholder, .. }
            if *path == SectionPath::new(["sandbox"]) && placeholder == "rooot"),
        "{err:?}"
    );
}

#[test]
fn a_workspace_template_with_a_bad_dollar_is_refused_at_build() {
    let err = PromptTemplate::builder("tests", "workspace")
        .section(
            WorkspaceSection::new(fs()).template("\n    Root: ${root}\n    Budget: $ 5 a day\n"),
        )
        .build()
        .unwrap_err();
    // Located in the dedented, stripped text, as the section renders it.
    assert_eq!(
        err,
        PromptValidationError::InvalidTemplate {
            path: SectionPath::new(["workspace"]),
            error: TemplateError::InvalidPlaceholder { line: 2, column: 9 },
        }
    );
    assert!(
        err.to_string().contains("line 2, column 9"),
        "{}",
        err.to_string()
    );

    // `$$` is a literal `$`, not a mistake.
    let template = PromptTemplate::builder("tests", "workspace")
        .section(WorkspaceSection::new(fs()).template("Budget: $$5 under ${root}."))
        .build()
        .unwrap();
    assert_eq!(
        Prompt::new(template).render().unwrap().text(),
        "## 1. Workspace\n\nBudget: $5 under /srv/app."
    );
}

// §9.2 "Missing placeholder in dataclass" for a custom section: the
// `Section` trait lets a section declare the placeholders its templates use
// (`placeholders`) and the names it fills itself (`provided_fields`); the
// template builder checks the declaration with the rule markdown sections
// meet.

#[derive(Serialize, JsonSchema, Default)]
struct ChecklistParams {
    owner: String,
    items: Vec<String>,
}

/// What the checklist substitutes: its params plus `count`, which the
/// section computes itself.
#[derive(Serialize)]
struct Filled<'a> {
    #[serde(flatten)]
    params: &'a ChecklistParams,
    count: usize,
}

#[derive(Clone)]
struct ChecklistSection {
    template: &'static str,
    /// What `placeholders` declares (`None`: the trait's default).
    declared: Option<Result<Vec<&'static str>, TemplateError>>,
}

impl ChecklistSection {
    fn declaring(template: &'static str, names: &[&'static str]) -> Self {
        ChecklistSection {
            template,
            declared: Some(Ok(names.to_vec())),
        }
    }
}

impl Section for ChecklistSection {
    type Params = ChecklistParams;

    fn title(&self) -> &str {
        "Checklist"
    }

    fn key(&self) -> &str {
        "checklist"
    }

    fn render_body(
        &self,
        params: &ChecklistParams,
        cx: &RenderContext<'_>,
    ) -> Result<String, PromptRenderError> {
        let template = cx.override_template().unwrap_or(self.template);
        let filled = Filled {
            params,
            count: params.items.len(),
        };
        let mut body = cx.substitute(template, &filled)?;
        for item in &params.items {
            body.push_str("\n- ");
            body.push_str(item);
        }
        Ok(body)
    }

    fn placeholders(&self) -> Result<Vec<String>, TemplateError> {
        match &self.declared {
            None => Ok(Vec::new()),
            Some(Ok(names)) => Ok(names.iter().map(|n| (*n).to_owned()).collect()),
            Some(Err(error)) => Err(error.clone()),
        }
    }

    fn provided_fields(&self) -> Vec<String> {
        vec!["count".to_owned()]
    }
}

fn checklist_template(section: ChecklistSection) -> Result<PromptTemplate, PromptValidationError> {
    PromptTemplate::builder("tests", "custom")
        .section(section)
        .build()
}

fn checklist_params() -> ChecklistParams {
    ChecklistParams {
        owner: "ann".into(),
        items: vec!["lint".into(), "test".into()],
    }
}

#[test]
fn a_custom_sections_declared_placeholders_are_checked_at_build() {
    // Params fields and names the section fills itself pass.
    let template = checklist_template(ChecklistSection::declaring(
        "Owner: $owner ($count items)",
        &["owner", "count"],
    ))
    .unwrap();
    let text = Prompt::new(template)
        .bind(checklist_params())
        .render()
        .unwrap()
        .into_text();
    assert_eq!(
        text,
        "## 1. Checklist\n\nOwner: ann (2 items)\n- lint\n- test"
    );

    // A declared name that is neither is the build-time error markdown
    // sections get, listing the fields and then the provided names.
    let err = checklist_template(ChecklistSection::declaring(
        "Owner: $ownr",
        &["ownr", "count"],
    ))
    .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::UnknownPlaceholder {
            path: SectionPath::new(["checklist"]),
            placeholder: "ownr".into(),
            params_type: std::any::type_name::<ChecklistParams>(),
            available: vec!["owner".into(), "items".into(), "count".into()],
        }
    );

    // A template the section reports as unparsable is located at its path.
    let bad = TemplateError::InvalidPlaceholder { line: 1, column: 8 };
    let err = checklist_template(ChecklistSection {
        template: "Owner: $ 5",
        declared: Some(Err(bad.clone())),
    })
    .unwrap_err();
    assert_eq!(
        err,
        PromptValidationError::InvalidTemplate {
            path: SectionPath::new(["checklist"]),
            error: bad,
        }
    );
}

#[test]
fn a_custom_section_that_declares_nothing_is_checked_when_it_renders() {
    // The trait's default declares no placeholders, so the build cannot see
    // into `render_body`; the typo surfaces at render as a substitution
    // failure, never as silent output.
    let template = checklist_template(ChecklistSection {
        template: "Owner: $ownr",
        declared: None,
    })
    .unwrap();
    let err = Prompt::new(template)
        .bind(checklist_params())
        .render()
        .unwrap_err();
    assert_eq!(
        err,
        PromptRenderError::Substitution {
            path: SectionPath::new(["checklist"]),
            error: TemplateError::MissingKey {
                name: "ownr".into()
            },
        }
    );
}

#[test]
fn overrides_of_a_custom_section_are_checked_against_its_params_and_provided_names() {
    let section = || ChecklistSection {
        template: "Owner: $owner",
        declared: None,
    };
    let override_with = |text: &str| {
        let mut overrides = PromptOverrides::new();
        overrides.set("tests", "custom", ["checklist"], text);
        overrides
    };

    let err = Prompt::new(checklist_template(section()).unwrap())
        .with_overrides(&override_with("Owner: $ownr"))
        .unwrap_err();
    assert!(
        matches!(&err, PromptValidationError::UnknownPlaceholder { path, placeholder, available, .. }
            if *path == SectionPath::new(["checklist"]) && placeholder == "ownr"
                && available.contains(&"count".to_owned())),
        "{err:?}"
    );

    let prompt = Prompt::new(checklist_template(section()).unwrap())
        .bind(checklist_params())
        .with_overrides(&override_with("$count for $owner:"))
        .unwrap();
    assert_eq!(
        prompt.render().unwrap().text(),
        "## 1. Checklist\n\n2 for ann:\n- lint\n- test"
    );
}

// §6.2 / §9.2: a value of the wrong type in an OBJECT output names the
// field's path (the array case is in `structured_output.rs`).

#[derive(Debug, Deserialize, JsonSchema)]
struct Estimate {
    summary: String,
    hours: u32,
    steps: Vec<String>,
    follow_up: Option<FollowUp>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct FollowUp {
    url: String,
    reviewers: Vec<Reviewer>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Reviewer {
    name: String,
    approved: bool,
}

fn estimate_prompt() -> RenderedPrompt<Estimate> {
    let template = PromptTemplate::builder("tests", "estimate")
        .output::<Estimate>()
        .section(MarkdownSection::plain("Task", "task", "Estimate it."))
        .build()
        .unwrap();
    Prompt::new(template).render().unwrap()
}

fn mismatch(text: &str) -> String {
    let err = parse_structured_output(text, &estimate_prompt()).unwrap_err();
    assert_eq!(err.raw(), text, "the raw answer travels with the error");
    match err.kind() {
        OutputParseErrorKind::InvalidValue { message } => message.clone(),
        other => panic!("expected a type mismatch, got {other:?}"),
    }
}

#[test]
fn a_type_mismatch_in_an_object_output_names_the_field_path() {
    // The well-typed answer parses, nested objects included.
    let ok = parse_structured_output(
        r#"{"summary": "s", "hours": 3, "steps": ["plan"], "follow_up": {"url": "u", "reviewers": [{"name": "a", "approved": true}]}}"#,
        &estimate_prompt(),
    )
    .unwrap();
    assert_eq!((ok.summary.as_str(), ok.hours, ok.steps.len()), ("s", 3, 1));
    let follow_up = ok.follow_up.unwrap();
    assert_eq!(follow_up.url, "u");
    assert_eq!(
        (
            follow_up.reviewers[0].name.as_str(),
            follow_up.reviewers[0].approved
        ),
        ("a", true)
    );

    // A top-level field.
    assert_eq!(
        mismatch(r#"{"summary": "s", "hours": "three", "steps": [], "follow_up": null}"#),
        r#"hours: expected integer, found string "three""#
    );
    // An element of an array field.
    assert_eq!(
        mismatch(r#"{"summary": "s", "hours": 3, "steps": ["plan", 2], "follow_up": null}"#),
        "steps[1]: expected string, found integer `2`"
    );
    // A field of a nested object.
    assert_eq!(
        mismatch(
            r#"{"summary": "s", "hours": 3, "steps": [], "follow_up": {"url": 7, "reviewers": []}}"#
        ),
        "follow_up.url: expected string, found integer `7`"
    );
    // A field of an object inside an array inside a nested object.
    assert_eq!(
        mismatch(
            r#"{"summary": "s", "hours": 3, "steps": [], "follow_up": {"url": "u", "reviewers": [{"name": "a", "approved": true}, {"name": "b", "approved": "maybe"}]}}"#
        ),
        r#"follow_up.reviewers[1].approved: expected boolean, found string "maybe""#
    );
}
