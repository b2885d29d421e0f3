//! Property: for random section trees (with random enabled flags),
//! rendering is deterministic and every heading carries the right level and
//! the right consecutive number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_prompt::{MarkdownSection, Prompt, PromptTemplate, SectionNode};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Node {
    enabled: bool,
    children: Vec<Node>,
}

fn tree() -> impl Strategy<Value = Vec<Node>> {
    let leaf = any::<bool>().prop_map(|enabled| Node {
        enabled,
        children: Vec::new(),
    });
    let node = leaf.prop_recursive(4, 40, 4, |inner| {
        (any::<bool>(), prop::collection::vec(inner, 0..4))
            .prop_map(|(enabled, children)| Node { enabled, children })
    });
    prop::collection::vec(node, 0..6)
}

fn build(nodes: &[Node], counter: &mut usize) -> Vec<SectionNode> {
    nodes
        .iter()
        .map(|node| {
            *counter += 1;
            let id = *counter;
            let enabled = node.enabled;
            let children = build(&node.children, counter);
            MarkdownSection::plain(
                format!("Section {id}"),
                format!("s{id}"),
                &format!("Body {id}."),
            )
            .enabled(move |_| enabled)
            .children(children)
            .into()
        })
        .collect()
}

/// Expected headings, computed without the renderer.
fn expected(nodes: &[Node], prefix: &[usize], counter: &mut usize, out: &mut Vec<String>) {
    let mut number = 0;
    for node in nodes {
        *counter += 1;
        let id = *counter;
        if !node.enabled {
            skip(&node.children, counter);
            continue;
        }
        number += 1;
        let mut numbers = prefix.to_vec();
        numbers.push(number);
        let hashes = "#".repeat(numbers.len() + 1);
        let label: String = numbers.iter().map(|n| format!("{n}.")).collect();
        out.push(format!("{hashes} {label} Section {id}"));
        expected(&node.children, &numbers, counter, out);
    }
}

fn skip(nodes: &[Node], counter: &mut usize) {
    for node in nodes {
        *counter += 1;
        skip(&node.children, counter);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn headings_are_numbered_by_depth_and_rendering_is_deterministic(nodes in tree()) {
        let mut counter = 0;
        let sections = build(&nodes, &mut counter);
        let template = PromptTemplate::builder("props", "tree")
            .sections(sections)
            .build()
            .unwrap();
        let prompt = Prompt::new(template.clone());
        let first = prompt.render().unwrap();
        let second = prompt.render().unwrap();
        prop_assert_eq!(first.text(), second.text());
        let rebuilt = Prompt::new(template).render().unwrap();
        prop_assert_eq!(first.text(), rebuilt.text());

        let headings: Vec<&str> = first
            .text()
            .lines()
            .filter(|line| line.starts_with('#'))
            .collect();
        let mut want = Vec::new();
        let mut counter = 0;
        expected(&nodes, &[], &mut counter, &mut want);
        prop_assert_eq!(headings, want.iter().map(String::as_str).collect::<Vec<_>>());

        // Every heading is followed by its own body.
        for heading in want {
            let id = heading.rsplit(' ').next().unwrap();
            let block = format!("{heading}\n\nBody {id}.");
            prop_assert!(first.text().contains(&block), "missing block {}", block);
        }
    }
}
