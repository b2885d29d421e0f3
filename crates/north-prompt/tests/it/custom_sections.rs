//! Extending prompts through the public API: custom sections through the
//! `Section` trait, the `template!` macro and the `PromptParams` derive.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_prompt::{
    MarkdownSection, NoParams, Prompt, PromptParams, PromptRenderError, PromptTemplate,
    RenderContext, Section, SectionNode, template,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, JsonSchema, Default, PromptParams)]
struct StyleParams {
    tone: String,
    verbose: bool,
}

/// A custom section: renders a bullet list from its params.
#[derive(Clone)]
struct ChecklistSection;

#[derive(Serialize, JsonSchema, Default)]
struct ChecklistParams {
    items: Vec<String>,
    owner: Option<String>,
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
        if params.items.is_empty() {
            return Err(cx.error("the checklist is empty"));
        }
        let mut body = cx.substitute("Owner: $owner\n", params)?;
        for item in &params.items {
            body.push_str("\n- ");
            body.push_str(item);
        }
        Ok(body)
    }
}

#[test]
fn custom_sections_render_through_the_trait() {
    let template = PromptTemplate::builder("tests", "custom")
        .section(ChecklistSection)
        .build()
        .unwrap();
    let text = Prompt::new(template.clone())
        .bind(ChecklistParams {
            items: vec!["lint".into(), "test".into()],
            owner: Some("ci".into()),
        })
        .render()
        .unwrap()
        .into_text();
    assert_eq!(text, "## 1. Checklist\n\nOwner: ci\n\n- lint\n- test");

    let err = Prompt::new(template).render().unwrap_err();
    assert_eq!(
        err.to_string(),
        "section `checklist`: the checklist is empty"
    );
}

#[test]
fn template_macro_is_usable_with_no_params() {
    let text = template!(NoParams, "No placeholders, only $$ signs.");
    assert_eq!(text, "No placeholders, only $$ signs.");
}

#[test]
fn derive_lists_serialized_field_names() {
    #[derive(Serialize, JsonSchema, Default, PromptParams)]
    #[serde(rename_all = "camelCase")]
    struct Renamed {
        user_name: String,
        #[serde(rename = "years")]
        age: u32,
        #[serde(skip)]
        _internal: u8,
        r#type: String,
    }
    assert_eq!(
        <Renamed as PromptParams>::FIELDS,
        &["userName", "years", "type"]
    );
    const { assert!(<Renamed as PromptParams>::EXHAUSTIVE) };

    #[derive(Serialize, JsonSchema, Default, PromptParams)]
    struct Flattened {
        own: String,
        #[serde(flatten)]
        inner: StyleParams,
    }
    assert_eq!(<Flattened as PromptParams>::FIELDS, &["own"]);
    const { assert!(!<Flattened as PromptParams>::EXHAUSTIVE) };
    // Not exhaustive: the macro defers to the construction-time check,
    // which sees the flattened fields through the schema.
    let section = MarkdownSection::<Flattened>::new(
        "Flat",
        "flat",
        template!(Flattened, "$own / $tone / $verbose"),
    );
    let text = Prompt::new(
        PromptTemplate::builder("tests", "flat")
            .section(section)
            .build()
            .unwrap(),
    )
    .render()
    .unwrap()
    .into_text();
    assert_eq!(text, "## 1. Flat\n\n /  / false");
}

#[test]
fn prompt_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Prompt>();
    assert_send_sync::<PromptTemplate<Vec<String>>>();
    assert_send_sync::<north_prompt::RenderedPrompt>();
    assert_send_sync::<SectionNode>();
    assert_send_sync::<north_prompt::ResourceRegistry>();
    assert_send_sync::<north_prompt::ScopedResourceContext>();
}
