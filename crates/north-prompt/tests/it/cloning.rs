//! Cloning: a cloned prompt, template or section is decoupled from the
//! original — it gets its own resource instances, its sections hold the same
//! instances its scope resolves, and `clone_with` wires it to provided ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use north_prompt::{
    Binding, Filesystem, HostFilesystem, MarkdownSection, Prompt, PromptOverrides, PromptTemplate,
    Resource, ResourceInstance, ResourceRegistry, Rewiring, Section, SectionNode, SectionPath,
    WorkspaceSection,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Serialize;

/// Mutable state behind a lock, like a store a tool writes to.
#[derive(Debug, Default)]
struct Counter {
    value: Mutex<i64>,
}

impl Clone for Counter {
    fn clone(&self) -> Self {
        Counter {
            value: Mutex::new(self.get()),
        }
    }
}

impl Counter {
    fn get(&self) -> i64 {
        *self.value.lock().unwrap()
    }
    fn add(&self, n: i64) {
        *self.value.lock().unwrap() += n;
    }
}

impl Resource for Counter {}

#[derive(Debug, Clone, PartialEq)]
struct Label(&'static str);

#[derive(Serialize, JsonSchema, Default)]
struct TaskParams {
    objective: String,
}

fn fs(root: &str) -> Arc<dyn Filesystem> {
    Arc::new(HostFilesystem::new(root))
}

/// A section holding a managed counter, under a workspace section.
fn template(workspace: Arc<dyn Filesystem>) -> PromptTemplate {
    PromptTemplate::builder("tests", "cloning")
        .section(WorkspaceSection::new(workspace).child(
            MarkdownSection::<TaskParams>::new("Task", "task", "Do $objective.").resources(
                ResourceRegistry::build([ResourceInstance::managed(Counter::default())]),
            ),
        ))
        .resources(ResourceRegistry::build([ResourceInstance::new(Label(
            "template",
        ))]))
        .build()
        .unwrap()
}

fn counter_of(prompt: &Prompt) -> Arc<Counter> {
    prompt.resources().get::<Counter>().unwrap()
}

#[test]
fn mutating_a_resource_through_a_cloned_prompt_leaves_the_original_alone() {
    let original = Prompt::new(template(fs("/srv/app"))).bind(TaskParams {
        objective: "ship".into(),
    });
    {
        let _scope = original.resources().enter().unwrap();
        counter_of(&original).add(1);
    }
    let clone = original.clone();
    {
        let _scope = clone.resources().enter().unwrap();
        // The copy starts from the original's state, then goes its own way.
        assert_eq!(counter_of(&clone).get(), 1);
        counter_of(&clone).add(41);
        assert_eq!(counter_of(&clone).get(), 42);
    }
    let _scope = original.resources().enter().unwrap();
    assert_eq!(counter_of(&original).get(), 1);
    // Both are usable at once: separate scopes, separate instances.
    let _clone_scope = clone.resources().enter().unwrap();
    assert!(!Arc::ptr_eq(&counter_of(&original), &counter_of(&clone)));
    assert_eq!(counter_of(&clone).get(), 42);
}

#[test]
fn a_cloned_template_gives_its_prompts_their_own_instances() {
    let template = template(fs("/srv/app"));
    let original = Prompt::new(template.clone());
    let other = Prompt::new(template.clone());
    let _a = original.resources().enter().unwrap();
    let _b = other.resources().enter().unwrap();
    counter_of(&other).add(7);
    assert_eq!(counter_of(&original).get(), 0);
    assert_eq!(counter_of(&other).get(), 7);
    // Same blueprint: the descriptor (and its content hash) is unchanged.
    assert_eq!(
        original.template().descriptor(),
        other.template().descriptor()
    );
}

/// The workspace section and the task section of a prompt.
fn sections(prompt: &Prompt) -> (&WorkspaceSection, &SectionNode) {
    let template = prompt.template();
    let workspace = template
        .section(&SectionPath::new(["workspace"]))
        .and_then(|n| n.downcast_ref::<WorkspaceSection>())
        .unwrap();
    let task = template
        .section(&SectionPath::new(["workspace", "task"]))
        .unwrap();
    (workspace, task)
}

#[test]
fn the_sections_of_a_clone_hold_the_instances_the_clones_scope_resolves() {
    let original = Prompt::new(template(fs("/srv/app")));
    let clone = original.clone();

    let _scope = clone.resources().enter().unwrap();
    let (workspace, task) = sections(&clone);
    let scoped_fs = clone.resources().get::<dyn Filesystem>().unwrap();
    assert!(Arc::ptr_eq(workspace.filesystem(), &scoped_fs));
    let section_counter = task.resources().enter().unwrap().get::<Counter>().unwrap();
    assert!(Arc::ptr_eq(&section_counter, &counter_of(&clone)));

    // ...and none of them is the original's.
    let (original_workspace, original_task) = sections(&original);
    assert!(!Arc::ptr_eq(original_workspace.filesystem(), &scoped_fs));
    let original_counter = original_task
        .resources()
        .enter()
        .unwrap()
        .get::<Counter>()
        .unwrap();
    assert!(!Arc::ptr_eq(&original_counter, &section_counter));
    assert_eq!(scoped_fs.root(), Path::new("/srv/app"));
}

#[test]
fn one_instance_shared_in_the_original_is_one_copy_in_the_clone() {
    let shared = fs("/srv/app");
    let template = PromptTemplate::builder("tests", "cloning")
        .section(WorkspaceSection::new(shared.clone()))
        .section(WorkspaceSection::new(shared.clone()).titled("Sandbox", "sandbox"))
        .build()
        .unwrap();
    // Bind-time resources naming the same instance follow it too.
    let original =
        Prompt::new(template).bind_resources(ResourceRegistry::build([ResourceInstance::shared(
            shared.clone(),
        )]));
    let clone = original.clone();

    let node = |p: &Prompt, key: &str| {
        p.template()
            .section(&SectionPath::new([key]))
            .and_then(|n| n.downcast_ref::<WorkspaceSection>())
            .unwrap()
            .filesystem()
            .clone()
    };
    let (first, second) = (node(&clone, "workspace"), node(&clone, "sandbox"));
    assert!(Arc::ptr_eq(&first, &second));
    assert!(!Arc::ptr_eq(&first, &shared));
    let _scope = clone.resources().enter().unwrap();
    assert!(Arc::ptr_eq(
        &clone.resources().get::<dyn Filesystem>().unwrap(),
        &first
    ));
    // The original is untouched.
    assert!(Arc::ptr_eq(&node(&original, "workspace"), &shared));
}

#[test]
fn clone_with_wires_the_clone_to_provided_instances() {
    let original = Prompt::new(template(fs("/srv/app"))).bind(TaskParams {
        objective: "ship".into(),
    });
    let other = fs("/srv/other");
    let counter = Arc::new(Counter::default());
    let clone = original.clone_with(
        &mut Rewiring::new()
            .provide::<dyn Filesystem>(other.clone())
            .provide(counter.clone()),
    );

    let text = clone.render().unwrap().into_text();
    assert!(text.contains("`/srv/other`"), "{text}");
    assert!(original.render().unwrap().text().contains("`/srv/app`"));

    let _scope = clone.resources().enter().unwrap();
    assert!(Arc::ptr_eq(
        &clone.resources().get::<dyn Filesystem>().unwrap(),
        &other
    ));
    assert!(Arc::ptr_eq(&counter_of(&clone), &counter));
    assert!(Arc::ptr_eq(sections(&clone).0.filesystem(), &other));
    // What was not provided is still copied.
    assert_eq!(
        *clone.resources().get::<Label>().unwrap(),
        Label("template")
    );
}

#[test]
fn values_handed_over_as_an_arc_stay_shared_on_purpose() {
    let pool = Arc::new(Counter::default());
    let template = PromptTemplate::builder("tests", "cloning")
        .section(MarkdownSection::plain("A", "a", "a"))
        .resources(ResourceRegistry::build([ResourceInstance::shared_managed(
            pool.clone(),
        )]))
        .build()
        .unwrap();
    let original = Prompt::new(template);
    let clone = original.clone();
    let _scope = clone.resources().enter().unwrap();
    counter_of(&clone).add(3);
    assert_eq!(pool.get(), 3);
}

#[test]
fn factories_make_each_clone_its_own_value_per_scope() {
    let template = PromptTemplate::builder("tests", "cloning")
        .section(MarkdownSection::plain("A", "a", "a"))
        .resources(ResourceRegistry::of([Binding::managed(|_| {
            Ok(Counter::default())
        })]))
        .build()
        .unwrap();
    let original = Prompt::new(template);
    let clone = original.clone();
    let _a = original.resources().enter().unwrap();
    let _b = clone.resources().enter().unwrap();
    counter_of(&clone).add(2);
    assert_eq!(counter_of(&original).get(), 0);
}

#[test]
fn a_clone_keeps_params_and_overrides_but_not_the_active_scope() {
    let mut overrides = PromptOverrides::new();
    overrides.set("tests", "cloning", ["workspace", "task"], "Now: $objective");
    let original = Prompt::new(template(fs("/srv/app")))
        .bind(TaskParams {
            objective: "ship".into(),
        })
        .with_overrides(&overrides)
        .unwrap();
    let _scope = original.resources().enter().unwrap();
    let clone = original.clone();
    assert!(!clone.resources().is_active());
    assert_eq!(clone.params::<TaskParams>().unwrap().objective, "ship");
    assert_eq!(clone.overrides(), original.overrides());
    assert_eq!(
        clone.render().unwrap().text(),
        original.render().unwrap().text()
    );
    assert!(clone.render().unwrap().text().contains("Now: ship"));
}

#[test]
fn cloned_sections_copy_their_resources_and_children() {
    let section = MarkdownSection::plain("A", "a", "a")
        .resources(ResourceRegistry::build([ResourceInstance::managed(
            Counter::default(),
        )]))
        .child(WorkspaceSection::new(fs("/srv/app")));
    let copy = section.clone();
    let counter = |s: &MarkdownSection<_>| {
        Section::resources(s)
            .enter()
            .unwrap()
            .get::<Counter>()
            .unwrap()
    };
    counter(&copy).add(5);
    assert_eq!(counter(&section).get(), 0);
    assert_eq!(counter(&copy).get(), 5);

    let workspace = |s: &MarkdownSection<_>| {
        Section::children(s)[0]
            .downcast_ref::<WorkspaceSection>()
            .unwrap()
            .filesystem()
            .clone()
    };
    assert!(!Arc::ptr_eq(&workspace(&section), &workspace(&copy)));
    assert_eq!(workspace(&copy).root(), Path::new("/srv/app"));
}

#[test]
fn clone_with_filesystem_rewires_nested_workspace_sections_too() {
    let section = WorkspaceSection::new(fs("/srv/app"))
        .child(WorkspaceSection::new(fs("/srv/app")).titled("Inner", "inner"));
    let other = fs("/srv/other");
    let rewired = section.clone_with_filesystem(other.clone());
    assert!(Arc::ptr_eq(rewired.filesystem(), &other));
    let inner = Section::children(&rewired)[0]
        .downcast_ref::<WorkspaceSection>()
        .unwrap();
    assert!(Arc::ptr_eq(inner.filesystem(), &other));
    assert_eq!(section.filesystem().root(), Path::new("/srv/app"));
}
