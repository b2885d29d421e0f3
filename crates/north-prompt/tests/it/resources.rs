//! Resource lifecycle: collection order, start/close order, closing on early
//! exit and panic, access outside the scope, and snapshot/restore around a
//! failing tool.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use north_prompt::{
    Binding, Filesystem, HostFilesystem, MarkdownSection, Prompt, PromptTemplate, Resource,
    ResourceError, ResourceInstance, ResourceRegistry, SessionSnapshot, Snapshot,
    ToolTransactionError, WorkspaceSection, execute_tool_transaction,
};
use north_protocol::ToolOutcome;
use pretty_assertions::assert_eq;

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A resource that records its lifecycle.
#[derive(Debug)]
struct Tracked {
    name: &'static str,
    log: Log,
    fail_start: bool,
}

impl Resource for Tracked {
    fn start(&self) -> Result<(), ResourceError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", self.name));
        if self.fail_start {
            return Err(ResourceError::other("refused to start"));
        }
        Ok(())
    }

    fn close(&self) {
        self.log
            .lock()
            .unwrap()
            .push(format!("close {}", self.name));
    }
}

#[derive(Debug)]
struct Database(Tracked);
impl Resource for Database {
    fn start(&self) -> Result<(), ResourceError> {
        self.0.start()
    }
    fn close(&self) {
        self.0.close()
    }
}

struct Cache(Tracked);
impl Resource for Cache {
    fn start(&self) -> Result<(), ResourceError> {
        self.0.start()
    }
    fn close(&self) {
        self.0.close()
    }
}

struct Service {
    tracked: Tracked,
    db: Arc<Database>,
}
impl Resource for Service {
    fn start(&self) -> Result<(), ResourceError> {
        self.tracked.start()
    }
    fn close(&self) {
        self.tracked.close()
    }
}

fn tracked(name: &'static str, log: &Log) -> Tracked {
    Tracked {
        name,
        log: log.clone(),
        fail_start: false,
    }
}

fn empty_template() -> PromptTemplate {
    PromptTemplate::builder("tests", "resources")
        .section(MarkdownSection::plain("A", "a", "a"))
        .build()
        .unwrap()
}

/// Service is registered first but depends on Database: Database is built
/// and started first, and everything closes in reverse start order.
fn registry(log: &Log) -> ResourceRegistry {
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    ResourceRegistry::of([
        Binding::managed(move |r| {
            let db = r.get::<Database>()?;
            Ok(Service {
                tracked: tracked("service", &l1),
                db,
            })
        }),
        Binding::managed(move |_| Ok(Database(tracked("database", &l2)))),
        Binding::managed(move |_| Ok(Cache(tracked("cache", &l3)))),
    ])
}

#[test]
fn resources_start_in_dependency_order_and_close_in_reverse() {
    let log = log();
    let template = PromptTemplate::builder("tests", "order")
        .section(MarkdownSection::plain("A", "a", "a"))
        .resources(registry(&log))
        .build()
        .unwrap();
    let prompt = Prompt::new(template);
    {
        let scope = prompt.resources().enter().unwrap();
        assert_eq!(
            entries(&log),
            ["start database", "start service", "start cache"]
        );
        let service = scope.get::<Service>().unwrap();
        assert!(Arc::ptr_eq(&service.db, &scope.get::<Database>().unwrap()));
        // The prompt resolves them too while the scope is active.
        assert!(prompt.resources().get::<Cache>().is_ok());
        assert!(prompt.resources().is_active());
    }
    assert_eq!(
        entries(&log),
        [
            "start database",
            "start service",
            "start cache",
            "close cache",
            "close service",
            "close database"
        ]
    );
    assert!(!prompt.resources().is_active());
}

#[test]
fn resources_close_on_early_return() {
    fn work(prompt: &Prompt) -> Result<(), ResourceError> {
        let scope = prompt.resources().enter()?;
        let _db = scope.get::<Database>()?;
        // Not bound: returns early through `?`.
        let _missing = scope.get::<String>()?;
        unreachable!("get::<String> fails");
    }
    let log = log();
    let prompt = Prompt::new(empty_template()).bind_resources(registry(&log));
    let err = work(&prompt).unwrap_err();
    assert_eq!(
        err,
        ResourceError::NotBound {
            type_name: "alloc::string::String"
        }
    );
    assert_eq!(
        entries(&log).last().map(String::as_str),
        Some("close database")
    );
    assert_eq!(entries(&log).len(), 6);
    assert_eq!(
        prompt.resources().get::<Database>().unwrap_err(),
        ResourceError::OutsideScope
    );
}

#[test]
fn resources_close_when_a_panic_unwinds() {
    let log = log();
    let prompt = Prompt::new(empty_template()).bind_resources(registry(&log));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _scope = prompt.resources().enter().unwrap();
        panic!("tool crashed");
    }));
    assert!(result.is_err());
    assert_eq!(
        entries(&log)
            .iter()
            .filter(|e| e.starts_with("close"))
            .count(),
        3
    );
    assert!(!prompt.resources().is_active());
    // The prompt can enter again afterwards.
    drop(prompt.resources().enter().unwrap());
}

#[test]
fn access_outside_the_scope_is_an_error_not_a_panic() {
    let log = log();
    let prompt = Prompt::new(empty_template()).bind_resources(registry(&log));
    assert_eq!(
        prompt.resources().get::<Database>().unwrap_err(),
        ResourceError::OutsideScope
    );
    assert_eq!(
        prompt.resources().get_optional::<Database>().unwrap_err(),
        ResourceError::OutsideScope
    );
    assert_eq!(
        prompt.resources().context().unwrap_err(),
        ResourceError::OutsideScope
    );
    assert_eq!(
        ResourceError::OutsideScope.to_string(),
        "resources accessed outside their scope: enter `prompt.resources()` first"
    );

    let kept = {
        let scope = prompt.resources().enter().unwrap();
        assert!(scope.get_optional::<String>().unwrap().is_none());
        scope.context()
    };
    // A context handle kept past its scope reports the same error.
    assert_eq!(
        kept.get::<Database>().unwrap_err(),
        ResourceError::OutsideScope
    );
    assert!(kept.snapshot().is_err());
}

#[test]
fn entering_twice_is_refused() {
    let prompt = Prompt::new(empty_template());
    let _scope = prompt.resources().enter().unwrap();
    assert_eq!(
        prompt.resources().enter().unwrap_err(),
        ResourceError::AlreadyActive
    );
}

#[test]
fn a_failing_start_closes_what_was_started() {
    let log = log();
    let (l1, l2) = (log.clone(), log.clone());
    let registry = ResourceRegistry::of([
        Binding::managed(move |_| Ok(Database(tracked("database", &l1)))),
        Binding::managed(move |_| {
            Ok(Cache(Tracked {
                name: "cache",
                log: l2.clone(),
                fail_start: true,
            }))
        }),
    ]);
    let prompt = Prompt::new(empty_template()).bind_resources(registry);
    let err = prompt.resources().enter().unwrap_err();
    assert!(
        matches!(&err, ResourceError::Start { type_name, message }
            if type_name.ends_with("Cache") && message == "refused to start"),
        "{err:?}"
    );
    assert_eq!(
        entries(&log),
        ["start database", "start cache", "close database"]
    );
    assert!(!prompt.resources().is_active());
}

#[test]
fn a_panicking_factory_closes_what_was_started() {
    let log = log();
    let l1 = log.clone();
    let registry = ResourceRegistry::of([
        Binding::managed(move |_| Ok(Database(tracked("database", &l1)))),
        Binding::new(|_| -> Result<u8, ResourceError> { panic!("factory bug") }),
    ]);
    let prompt = Prompt::new(empty_template()).bind_resources(registry);
    let result = catch_unwind(AssertUnwindSafe(|| prompt.resources().enter().map(drop)));
    assert!(result.is_err());
    assert_eq!(entries(&log), ["start database", "close database"]);
    assert!(!prompt.resources().is_active());
}

#[test]
fn dependency_cycles_are_reported() {
    struct A;
    struct B;
    let registry = ResourceRegistry::of([
        Binding::new(|r| r.get::<B>().map(|_| A)),
        Binding::new(|r| r.get::<A>().map(|_| B)),
    ]);
    let err = registry.enter().unwrap_err();
    let ResourceError::Cycle { chain } = err else {
        panic!("expected a cycle, got {err:?}");
    };
    assert_eq!(chain.len(), 3);
    assert_eq!(chain.first(), chain.last());
}

#[test]
fn collection_order_is_template_then_sections_then_bind_time_later_wins() {
    #[derive(Debug, Clone, PartialEq)]
    struct Clock(&'static str);
    let section = MarkdownSection::plain("A", "a", "a")
        .resources(ResourceRegistry::build([ResourceInstance::new(Clock(
            "section",
        ))]))
        .child(
            MarkdownSection::plain("B", "b", "b").resources(ResourceRegistry::build([
                ResourceInstance::new(Clock("child section")),
            ])),
        );
    let template = PromptTemplate::builder("tests", "collect")
        .section(section)
        .resources(ResourceRegistry::build([ResourceInstance::new(Clock(
            "template",
        ))]))
        .build()
        .unwrap();

    let prompt = Prompt::new(template.clone());
    {
        let scope = prompt.resources().enter().unwrap();
        assert_eq!(*scope.get::<Clock>().unwrap(), Clock("child section"));
    }
    let prompt =
        Prompt::new(template).bind_resources(ResourceRegistry::build([ResourceInstance::new(
            Clock("bind"),
        )]));
    let scope = prompt.resources().enter().unwrap();
    assert_eq!(*scope.get::<Clock>().unwrap(), Clock("bind"));
    assert_eq!(prompt.collected_resources().len(), 1);
}

#[test]
fn registry_merge_lets_the_later_registry_win() {
    #[derive(Clone)]
    struct Name(&'static str);
    let first = ResourceRegistry::build([
        ResourceInstance::new(Name("first")),
        ResourceInstance::new(1u8),
    ]);
    let second = ResourceRegistry::build([ResourceInstance::new(Name("second"))]);
    let merged = first.merge(&second);
    assert_eq!(merged.len(), 2);
    assert!(merged.contains::<u8>());
    let scope = merged.enter().unwrap();
    assert_eq!(scope.get::<Name>().unwrap().0, "second");
    // Merging does not change the inputs.
    assert_eq!(first.enter().unwrap().get::<Name>().unwrap().0, "first");
}

#[test]
fn workspace_section_contributes_its_filesystem() {
    let fs: Arc<dyn Filesystem> = Arc::new(HostFilesystem::new("/srv/app"));
    let template = PromptTemplate::builder("tests", "workspace")
        .section(WorkspaceSection::new(fs.clone()))
        .build()
        .unwrap();
    let prompt = Prompt::new(template);
    let scope = prompt.resources().enter().unwrap();
    let resolved = scope.get::<dyn Filesystem>().unwrap();
    assert!(Arc::ptr_eq(&resolved, &fs));
    assert_eq!(resolved.root(), std::path::Path::new("/srv/app"));

    let other: Arc<dyn Filesystem> = Arc::new(HostFilesystem::new("/srv/other"));
    let rewired = WorkspaceSection::new(fs).clone_with_filesystem(other.clone());
    assert!(Arc::ptr_eq(rewired.filesystem(), &other));
}

/// A snapshotable counter, like a transactional store.
struct Counter {
    value: Mutex<i64>,
}

impl Counter {
    fn get(&self) -> i64 {
        *self.value.lock().unwrap()
    }
    fn add(&self, n: i64) {
        *self.value.lock().unwrap() += n;
    }
}

impl Resource for Counter {
    fn snapshot(&self) -> Option<Snapshot> {
        Some(Snapshot::new(self.get()))
    }
    fn restore(&self, snapshot: &Snapshot) -> Result<(), ResourceError> {
        let saved = snapshot
            .downcast_ref::<i64>()
            .ok_or_else(|| ResourceError::other("not a counter snapshot"))?;
        *self.value.lock().unwrap() = *saved;
        Ok(())
    }
}

#[derive(Debug, Default, Clone, PartialEq)]
struct Session {
    notes: Vec<String>,
}

impl SessionSnapshot for Session {
    type Snapshot = Session;
    fn snapshot(&self) -> Session {
        self.clone()
    }
    fn restore(&mut self, snapshot: Session) {
        *self = snapshot;
    }
}

fn counter_prompt() -> Prompt {
    Prompt::new(empty_template()).bind_resources(ResourceRegistry::of([Binding::managed(|_| {
        Ok(Counter {
            value: Mutex::new(10),
        })
    })]))
}

#[test]
fn snapshot_and_restore_round_trip() {
    let prompt = counter_prompt();
    let scope = prompt.resources().enter().unwrap();
    let counter = scope.get::<Counter>().unwrap();
    let snapshot = scope.snapshot().unwrap();
    assert_eq!(snapshot.len(), 1);
    counter.add(5);
    scope.restore(&snapshot).unwrap();
    assert_eq!(counter.get(), 10);

    let other = counter_prompt();
    let other_scope = other.resources().enter().unwrap();
    assert_eq!(
        other_scope.restore(&snapshot).unwrap_err(),
        ResourceError::ForeignSnapshot
    );
}

#[test]
fn a_failing_tool_restores_session_and_resources() {
    let prompt = counter_prompt();
    let scope = prompt.resources().enter().unwrap();
    let counter = scope.get::<Counter>().unwrap();
    let mut session = Session::default();

    // Success keeps the changes.
    let outcome = execute_tool_transaction(&mut session, &scope, |s| {
        s.notes.push("kept".into());
        counter.add(1);
        Ok::<_, String>(ToolOutcome::ok(serde_json::json!("done")))
    })
    .unwrap();
    assert!(outcome.ok);
    assert_eq!(counter.get(), 11);
    assert_eq!(session.notes, ["kept"]);

    // A failed outcome rolls both back.
    let err = execute_tool_transaction(&mut session, &scope, |s| {
        s.notes.push("lost".into());
        counter.add(100);
        Ok::<_, String>(ToolOutcome::err("disk full"))
    })
    .unwrap_err();
    assert!(matches!(&err, ToolTransactionError::Failed(o) if !o.ok));
    assert_eq!(err.to_string(), "tool failed: disk full");
    assert_eq!(counter.get(), 11);
    assert_eq!(session.notes, ["kept"]);

    // An error rolls both back.
    let err = execute_tool_transaction(&mut session, &scope, |s| {
        s.notes.push("lost".into());
        counter.add(100);
        Err("bad arguments".to_owned())
    })
    .unwrap_err();
    assert!(matches!(err, ToolTransactionError::Tool(ref e) if e == "bad arguments"));
    assert_eq!(counter.get(), 11);
    assert_eq!(session.notes, ["kept"]);

    // A panic rolls both back and keeps unwinding.
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        let _ = execute_tool_transaction(&mut session, &scope, |s| {
            s.notes.push("lost".into());
            counter.add(100);
            if s.notes.len() > 1 {
                panic!("tool bug");
            }
            Ok::<_, String>(ToolOutcome::ok(serde_json::Value::Null))
        });
    }));
    assert!(panicked.is_err());
    assert_eq!(counter.get(), 11);
    assert_eq!(session.notes, ["kept"]);
}
