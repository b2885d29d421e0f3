//! The prompt's bounded summaries (spec 8.2): the locals summary stops at
//! `locals_summary_limit` across the call stack, the memory summary shows a
//! memory with fields and stops at `memory_summary_limit`, and booleans and
//! floats appear as their values.

use north_natural::{Configuration, Envelope, Memory, StubBackend, environment, natural};

use crate::{Notes, Recorder};

/// The text of the prompt section that follows `heading`.
fn section(prompt: &str, heading: &str) -> String {
    let start = prompt.find(heading).unwrap() + heading.len();
    let rest = &prompt[start..];
    let end = rest.find("\n\n## ").unwrap_or(rest.len());
    rest[..end].to_owned()
}

fn locals(prompt: &str) -> String {
    section(prompt, "## 3. Locals\n\n")
}

fn memory(prompt: &str) -> String {
    section(prompt, "## 4. Memory\n\n")
}

/// The mark `bounded` leaves where it cuts.
const CUT: &str = "\n… (cut)";

#[natural]
async fn descend(depth: u32, padding: String) -> north_natural::Result<u32> {
    if depth == 0 {
        "natural
        Report how deep the call stack is.
        ";
        return Ok(0);
    }
    Ok(Box::pin(descend(depth - 1, padding)).await? + 1)
}

#[tokio::test]
async fn the_locals_summary_leaves_out_whole_enclosing_calls_past_the_default_limit() {
    // 60 enclosing calls of about 270 characters each do not fit in 10,000.
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    let padding = "p".repeat(500);
    let env = crate::on(recorder.clone());
    assert_eq!(env.configuration().locals_summary_limit, 10_000);
    environment(env, descend(60, padding)).await.unwrap();
    let locals = locals(&recorder.first_prompt());
    assert!(locals.chars().count() <= 10_000, "{}", locals.len());
    assert!(!locals.ends_with(CUT), "whole calls are left out, not cut");
    // Nearest calls first: depth 1, 2, ... up to the last one that fits.
    let depths: Vec<u32> = locals
        .split("\nIn the enclosing natural call `descend`:\n- depth (`u32`, parameter) = ")
        .skip(1)
        .map(|s| s.split('\n').next().unwrap().parse().unwrap())
        .collect();
    assert!(depths.len() > 10 && depths.len() < 60, "{depths:?}");
    assert_eq!(depths, (1..=depths.len() as u32).collect::<Vec<_>>());
    // It stops because the next call did not fit: the room left is less
    // than the next call's lines, which are the last call's plus at most one
    // digit of depth, its final newline and the one the summary trimmed.
    let marker = "\nIn the enclosing natural call";
    let last_call =
        marker.chars().count() + locals.rsplit(marker).next().unwrap().chars().count() + 3;
    assert!(10_000 - locals.chars().count() < last_call, "{last_call}");
}

#[tokio::test]
async fn a_locals_summary_longer_than_the_limit_is_cut_at_the_limit() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    let limit = 120;
    let env = crate::on(recorder.clone()).with_configuration(Configuration {
        locals_summary_limit: limit,
        ..Configuration::default()
    });
    environment(env, descend(1, "p".repeat(500))).await.unwrap();
    let locals = locals(&recorder.first_prompt());
    // This call's own lines come first and are cut; no enclosing call fits.
    assert!(locals.starts_with("In this call (`descend`, inline block 1 (line "));
    assert!(locals.ends_with(CUT), "{locals}");
    assert_eq!(locals.chars().count(), limit + CUT.chars().count());
    assert!(!locals.contains("enclosing"), "{locals}");
}

#[natural]
async fn recall(topic: String) -> north_natural::Result<()> {
    "natural
    Recall what the memory says about <topic>.
    ";
    Ok(())
}

#[tokio::test]
async fn the_memory_section_shows_the_type_and_the_value_of_a_memory_with_fields() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    let notes = Memory::new(Notes {
        facts: vec!["sky is blue".into()],
        count: 2,
    })
    .unwrap();
    let env = crate::on(recorder.clone()).with_memory(&notes);
    environment(env, recall("sky".into())).await.unwrap();
    assert_eq!(
        memory(&recorder.first_prompt()),
        "Type `Notes` (update a field with nh_assign target `memory.<field>`; nh_help `memory` for its schema):\n\
         {\"facts\":[\"sky is blue\"],\"count\":2}"
    );
}

#[tokio::test]
async fn a_memory_summary_longer_than_its_limit_is_cut_at_the_limit() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    let notes = Memory::new(Notes {
        facts: (0..100).map(|i| format!("fact number {i}")).collect(),
        count: 100,
    })
    .unwrap();
    let limit = 150;
    let env = crate::on(recorder.clone())
        .with_memory(&notes)
        .with_configuration(Configuration {
            memory_summary_limit: limit,
            ..Configuration::default()
        });
    environment(env, recall("facts".into())).await.unwrap();
    let memory = memory(&recorder.first_prompt());
    let full = format!(
        "Type `Notes` (update a field with nh_assign target `memory.<field>`; nh_help `memory` for its schema):\n{}",
        notes.json()
    );
    let kept: String = full.chars().take(limit).collect();
    assert_eq!(memory, format!("{kept}{CUT}"));
}

#[natural]
async fn weigh(urgent: bool, ratio: f64, scale: f32, whole: f64) -> north_natural::Result<()> {
    "natural
    Weigh the ticket.
    ";
    Ok(())
}

#[tokio::test]
async fn booleans_and_floats_appear_as_their_values() {
    let recorder = Recorder::new(StubBackend::new([Envelope::done()]));
    environment(crate::on(recorder.clone()), weigh(true, 0.25, 1.5, 2.0))
        .await
        .unwrap();
    let locals = locals(&recorder.first_prompt());
    let lines: Vec<&str> = locals.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "- urgent (`bool`, parameter) = true",
            "- ratio (`f64`, parameter) = 0.25",
            "- scale (`f32`, parameter) = 1.5",
            "- whole (`f64`, parameter) = 2.0",
        ]
    );
}
