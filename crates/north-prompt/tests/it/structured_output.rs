//! Structured output: declaration, schemas (plain and strict), and
//! `parse_structured_output` — every extraction path and every failure, for
//! object and array outputs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_prompt::{
    MarkdownSection, OutputContainer, OutputParseErrorKind, Prompt, PromptTemplate, RenderedPrompt,
    parse_structured_output, strict_schema_for,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The plan a model returns.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct TaskResult {
    /// One-line summary.
    summary: String,
    /// Ordered steps.
    steps: Vec<String>,
    /// Estimated hours.
    #[schemars(range(min = 0))]
    hours: u32,
    /// Whether tests are needed.
    #[serde(default)]
    needs_tests: bool,
    /// Who should review, if anyone.
    reviewer: Option<String>,
    /// Risk level.
    risk: Risk,
    /// Follow-up, nested.
    follow_up: Option<FollowUp>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Risk {
    Low,
    High,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct FollowUp {
    /// Link to the tracking issue.
    #[schemars(url)]
    url: String,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Finding {
    file: String,
    line: u32,
}

fn object_prompt(allow_extra_keys: bool) -> RenderedPrompt<TaskResult> {
    let template = PromptTemplate::builder("tests", "plan")
        .output::<TaskResult>()
        .allow_extra_keys(allow_extra_keys)
        .section(MarkdownSection::plain("Task", "task", "Plan it."))
        .build()
        .unwrap();
    Prompt::new(template).render().unwrap()
}

fn array_prompt() -> RenderedPrompt<Vec<Finding>> {
    let template = PromptTemplate::builder("tests", "findings")
        .output::<Vec<Finding>>()
        .section(MarkdownSection::plain("Review", "review", "List findings."))
        .build()
        .unwrap();
    Prompt::new(template).render().unwrap()
}

const PLAN: &str = r#"{"summary": "s", "steps": ["a", "b"], "hours": 3, "reviewer": null, "risk": "low", "follow_up": null}"#;

fn plan() -> TaskResult {
    TaskResult {
        summary: "s".into(),
        steps: vec!["a".into(), "b".into()],
        hours: 3,
        needs_tests: false,
        reviewer: None,
        risk: Risk::Low,
        follow_up: None,
    }
}

fn findings() -> Vec<Finding> {
    vec![
        Finding {
            file: "a.rs".into(),
            line: 1,
        },
        Finding {
            file: "b.rs".into(),
            line: 2,
        },
    ]
}

const FINDINGS: &str = r#"[{"file": "a.rs", "line": 1}, {"file": "b.rs", "line": 2}]"#;

fn kind<O: north_prompt::Output + std::fmt::Debug>(
    text: &str,
    rendered: &RenderedPrompt<O>,
) -> OutputParseErrorKind {
    let err = parse_structured_output(text, rendered).unwrap_err();
    assert_eq!(err.raw(), text, "the raw answer travels with the error");
    err.kind().clone()
}

// Declaration.

#[test]
fn rendered_prompt_carries_the_output_declaration() {
    let object = object_prompt(false);
    assert_eq!(object.container(), Some(OutputContainer::Object));
    assert_eq!(object.allow_extra_keys(), Some(false));
    assert!(object.output_type().unwrap().ends_with("TaskResult"));
    let array = array_prompt();
    assert_eq!(array.container(), Some(OutputContainer::Array));

    let mut request = north_protocol::ChatRequest::new("model", Vec::new());
    array.apply_to(&mut request);
    assert_eq!(request.system.as_deref(), Some(array.text()));
    assert_eq!(request.output_schema.as_ref(), array.strict_output_schema());

    let none = Prompt::new(
        PromptTemplate::builder("tests", "none")
            .section(MarkdownSection::plain("A", "a", "a"))
            .build()
            .unwrap(),
    )
    .render()
    .unwrap();
    assert!(none.structured_output().is_none());
    assert!(none.output_schema().is_none());
    assert_eq!(
        parse_structured_output("{}", &none).unwrap_err().kind(),
        &OutputParseErrorKind::NotDeclared
    );
}

// Extraction paths, object.

#[test]
fn object_from_fenced_json_block() {
    let text = format!("Sure! Here it is:\n```json\n{PLAN}\n```\nAnything else? {{\"not\": 1}}");
    assert_eq!(
        parse_structured_output(&text, &object_prompt(false)).unwrap(),
        plan()
    );
    let upper = format!("```JSON\n{PLAN}\n```");
    assert_eq!(
        parse_structured_output(&upper, &object_prompt(false)).unwrap(),
        plan()
    );
}

#[test]
fn object_from_whole_message() {
    let text = format!("\n  {PLAN}  \n");
    assert_eq!(
        parse_structured_output(&text, &object_prompt(false)).unwrap(),
        plan()
    );
}

#[test]
fn object_from_first_balanced_braces() {
    let text = format!(
        "I looked at [the code] and {{this is not json}} then decided: {PLAN} -- done {{\"x\": 1}}"
    );
    assert_eq!(
        parse_structured_output(&text, &object_prompt(false)).unwrap(),
        plan()
    );
    // Braces inside JSON strings do not confuse the scan.
    let tricky = r#"Result: {"summary": "use { and } freely", "steps": [], "hours": 1, "reviewer": null, "risk": "high", "follow_up": null} ok"#;
    let parsed = parse_structured_output(tricky, &object_prompt(false)).unwrap();
    assert_eq!(parsed.summary, "use { and } freely");
}

// Extraction paths, array.

#[test]
fn array_from_fenced_json_block() {
    let text = format!("Findings:\n```json\n{FINDINGS}\n```");
    assert_eq!(
        parse_structured_output(&text, &array_prompt()).unwrap(),
        findings()
    );
}

#[test]
fn array_from_whole_message() {
    assert_eq!(
        parse_structured_output(FINDINGS, &array_prompt()).unwrap(),
        findings()
    );
}

#[test]
fn array_from_first_balanced_brackets() {
    let text = format!("See {{the notes}} [1] and then {FINDINGS} end");
    assert_eq!(
        parse_structured_output(&text, &array_prompt()).unwrap(),
        findings()
    );
}

#[test]
fn array_in_the_strict_wrapper_object() {
    let text = format!("{{\"items\": {FINDINGS}}}");
    assert_eq!(
        parse_structured_output(&text, &array_prompt()).unwrap(),
        findings()
    );
}

// Coercions.

#[test]
fn conservative_coercions_only() {
    let coerced = r#"{"summary": "s", "steps": ["a", "b"], "hours": "3", "needs_tests": "TRUE", "reviewer": null, "risk": "low", "follow_up": null}"#;
    let parsed = parse_structured_output(coerced, &object_prompt(false)).unwrap();
    assert_eq!(parsed.hours, 3);
    assert!(parsed.needs_tests);

    let integral_float = r#"[{"file": "a.rs", "line": 7.0}]"#;
    assert_eq!(
        parse_structured_output(integral_float, &array_prompt()).unwrap()[0].line,
        7
    );

    // A number is never turned into a string.
    let number_for_string = r#"[{"file": 12, "line": 1}]"#;
    assert!(matches!(
        kind(number_for_string, &array_prompt()),
        OutputParseErrorKind::InvalidValue { .. }
    ));
    // A non-numeric string stays a string, and fails.
    let words = r#"{"summary": "s", "steps": [], "hours": "three", "reviewer": null, "risk": "low", "follow_up": null}"#;
    assert!(matches!(
        kind(words, &object_prompt(false)),
        OutputParseErrorKind::InvalidValue { .. }
    ));
}

#[test]
fn a_type_mismatch_names_the_field_path() {
    let text = r#"[{"file": "a.rs", "line": 1}, {"file": "b.rs", "line": 2}, {"file": "c.rs", "line": "seven"}]"#;
    match kind(text, &array_prompt()) {
        OutputParseErrorKind::InvalidValue { message } => assert_eq!(
            message,
            r#"items[2].line: expected integer, found string "seven""#
        ),
        other => panic!("{other:?}"),
    }
}

// Failures, object.

#[test]
fn object_failures() {
    let rendered = object_prompt(false);
    assert_eq!(
        kind("I could not decide.", &rendered),
        OutputParseErrorKind::NoJson
    );
    assert!(matches!(
        kind("```json\n{\"summary\": \n```", &rendered),
        OutputParseErrorKind::InvalidFencedJson { .. }
    ));
    assert_eq!(
        kind(FINDINGS, &rendered),
        OutputParseErrorKind::WrongContainer {
            expected: OutputContainer::Object,
            found: "an array"
        }
    );
    assert_eq!(
        kind(r#""just a string""#, &rendered),
        OutputParseErrorKind::WrongContainer {
            expected: OutputContainer::Object,
            found: "a string"
        }
    );
    assert_eq!(
        kind(r#"{"summary": "s", "risk": "low"}"#, &rendered),
        OutputParseErrorKind::MissingFields {
            path: "$".into(),
            fields: vec!["hours".into(), "steps".into()],
        }
    );
    let extra = r#"{"summary": "s", "steps": [], "hours": 1, "risk": "low", "mood": "great"}"#;
    assert_eq!(
        kind(extra, &rendered),
        OutputParseErrorKind::UnknownKeys {
            path: "$".into(),
            keys: vec!["mood".into()],
        }
    );
    let nested_extra = r#"{"summary": "s", "steps": [], "hours": 1, "risk": "low", "follow_up": {"url": "u", "why": 1}}"#;
    assert_eq!(
        kind(nested_extra, &rendered),
        OutputParseErrorKind::UnknownKeys {
            path: "$.follow_up".into(),
            keys: vec!["why".into()],
        }
    );
    assert!(matches!(
        kind(
            r#"{"summary": "s", "steps": [], "hours": 1, "risk": "medium"}"#,
            &rendered
        ),
        OutputParseErrorKind::InvalidValue { .. }
    ));
    let err = parse_structured_output("nothing", &rendered).unwrap_err();
    assert_eq!(
        err.to_string(),
        "could not parse structured output: no JSON object or array found in the answer"
    );
}

#[test]
fn extra_keys_are_tolerated_when_allowed() {
    let extra = r#"{"summary": "s", "steps": [], "hours": 1, "risk": "low", "mood": "great", "follow_up": {"url": "u", "why": 1}}"#;
    let parsed = parse_structured_output(extra, &object_prompt(true)).unwrap();
    assert_eq!(parsed.follow_up.unwrap().url, "u");
}

// Failures, array.

#[test]
fn array_failures() {
    let rendered = array_prompt();
    assert_eq!(
        kind("no findings today", &rendered),
        OutputParseErrorKind::NoJson
    );
    assert!(matches!(
        kind("```json\n[{\"file\": ]\n```", &rendered),
        OutputParseErrorKind::InvalidFencedJson { .. }
    ));
    assert_eq!(
        kind(r#"{"file": "a.rs", "line": 1}"#, &rendered),
        OutputParseErrorKind::WrongContainer {
            expected: OutputContainer::Array,
            found: "an object"
        }
    );
    assert_eq!(
        kind(
            r#"[{"file": "a.rs", "line": 1}, {"file": "b.rs"}]"#,
            &rendered
        ),
        OutputParseErrorKind::MissingFields {
            path: "$[1]".into(),
            fields: vec!["line".into()],
        }
    );
    assert_eq!(
        kind(
            r#"[{"file": "a.rs", "line": 1, "severity": "high"}]"#,
            &rendered
        ),
        OutputParseErrorKind::UnknownKeys {
            path: "$[0]".into(),
            keys: vec!["severity".into()],
        }
    );
    assert_eq!(
        kind(r#"[{"file": "a.rs", "line": 1}, "b.rs:2"]"#, &rendered),
        OutputParseErrorKind::NotAnObject {
            path: "$[1]".into(),
            found: "a string"
        }
    );
    assert!(matches!(
        kind(r#"[{"file": "a.rs", "line": -1}]"#, &rendered),
        OutputParseErrorKind::InvalidValue { .. }
    ));
}

// Schemas.

fn walk_schemas(value: &Value, visit: &mut dyn FnMut(&serde_json::Map<String, Value>)) {
    match value {
        Value::Object(map) => {
            visit(map);
            for (key, child) in map {
                if key == "enum" || key == "const" {
                    continue;
                }
                if key == "properties" {
                    if let Value::Object(props) = child {
                        props.values().for_each(|v| walk_schemas(v, visit));
                    }
                    continue;
                }
                walk_schemas(child, visit);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk_schemas(v, visit)),
        _ => {}
    }
}

fn assert_strict(schema: &Value) {
    assert_eq!(schema["type"], "object", "providers need an object root");
    walk_schemas(schema, &mut |map| {
        for keyword in [
            "format", "minimum", "default", "$schema", "oneOf", "allOf", "title",
        ] {
            assert!(!map.contains_key(keyword), "`{keyword}` left in {map:?}");
        }
        assert!(
            !map.contains_key("$ref"),
            "non-recursive refs are inlined: {map:?}"
        );
        if let Some(Value::Object(props)) = map.get("properties") {
            assert_eq!(map.get("additionalProperties"), Some(&Value::Bool(false)));
            let mut required: Vec<&str> = map["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            required.sort_unstable();
            let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
            names.sort_unstable();
            assert_eq!(required, names, "every property is required");
        }
    });
}

#[test]
fn strict_schema_of_an_object_output() {
    let rendered = object_prompt(false);
    let strict = rendered.strict_output_schema().unwrap();
    assert_strict(strict);
    insta::with_settings!({sort_maps => true}, {
        insta::assert_json_snapshot!("strict_object_schema", strict);
    });
    // The plain schema is schemars' own, with `$defs` and formats.
    let plain = rendered.output_schema().unwrap();
    assert!(plain.get("$defs").is_some());
    let mut required: Vec<&str> = plain["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["hours", "risk", "steps", "summary"]);
}

#[test]
fn strict_schema_of_an_array_output_wraps_it_in_an_object() {
    let rendered = array_prompt();
    let strict = rendered.strict_output_schema().unwrap();
    assert_strict(strict);
    assert_eq!(
        strict,
        &json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "string"},
                            "line": {"type": "integer"}
                        },
                        "required": ["file", "line"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["items"],
            "additionalProperties": false
        })
    );
}

#[test]
fn strict_schema_keeps_recursive_types_under_defs() {
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        name: String,
        children: Vec<Tree>,
    }
    // The root refers to itself with `#`; providers require an object root,
    // so it stays there.
    let strict = strict_schema_for::<Tree>();
    assert_eq!(
        strict["properties"]["children"]["items"],
        json!({"$ref": "#"})
    );
    assert_eq!(strict["additionalProperties"], json!(false));
    assert_eq!(strict["required"], json!(["children", "name"]));

    // Inside an array output the type lives under `$defs`.
    let template = PromptTemplate::builder("tests", "forest")
        .output::<Vec<Tree>>()
        .build()
        .unwrap();
    let rendered = Prompt::new(template).render().unwrap();
    let strict = rendered.strict_output_schema().unwrap();
    // The first level is inlined; the recursion points into `$defs`.
    let item = &strict["properties"]["items"]["items"];
    assert_eq!(item["additionalProperties"], json!(false));
    assert_eq!(
        item["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Tree"})
    );
    assert_eq!(
        strict["$defs"]["Tree"]["additionalProperties"],
        json!(false)
    );
    assert_eq!(
        strict["$defs"]["Tree"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Tree"})
    );

    // Answers for recursive types are checked all the way down.
    let ok = r#"[{"name": "a", "children": [{"name": "b", "children": []}]}]"#;
    assert_eq!(parse_structured_output(ok, &rendered).unwrap().len(), 1);
    let deep_missing = r#"[{"name": "a", "children": [{"name": "b"}]}]"#;
    assert_eq!(
        kind(deep_missing, &rendered),
        OutputParseErrorKind::MissingFields {
            path: "$[0].children[0]".into(),
            fields: vec!["children".into()],
        }
    );
}
