//! jq filters over JSON, through the jaq crates: the expression language of
//! `nh_eval` and `nh_assign`. Side-effect free: `env`, `halt`, `debug` and
//! `stderr` are replaced by inert versions, and module loading is off.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::OnceLock;

use jaq_core::box_iter::box_once;
use jaq_core::load::parse::Def;
use jaq_core::load::{Arena, File, Loader};
use jaq_core::native::{Fun, v};
use jaq_core::{Compiler, Ctx, Exn, Native, Vars, data::JustLut};
use jaq_json::{Num, Val};
use serde_json::{Map, Number, Value};

type D = JustLut<Val>;
type Filter = jaq_core::Filter<D>;

/// Natives that reach outside the value (process environment, exit,
/// stderr) are replaced so a filter can only compute.
const REPLACED: [&str; 4] = ["env", "halt", "debug_empty", "stderr_empty"];

fn funs() -> impl Iterator<Item = Fun<D>> {
    let inert: [Fun<D>; 4] = [
        (
            "env",
            v(0),
            Native::new(|_| box_once(Ok(Val::obj(Default::default())))),
        ),
        (
            "halt",
            v(1),
            Native::new(|_| {
                box_once(Err(Exn::from(jaq_core::Error::str(
                    "halt is not available in natural blocks",
                ))))
            }),
        ),
        (
            "debug_empty",
            v(0),
            Native::new(|_| Box::new(std::iter::empty())),
        ),
        (
            "stderr_empty",
            v(0),
            Native::new(|_| Box::new(std::iter::empty())),
        ),
    ];
    jaq_core::funs()
        .chain(jaq_std::funs().filter(|(name, ..)| !REPLACED.contains(name)))
        .chain(jaq_json::funs())
        .chain(inert)
}

fn prelude() -> &'static [Def<&'static str>] {
    static PRELUDE: OnceLock<Vec<Def<&'static str>>> = OnceLock::new();
    PRELUDE.get_or_init(|| {
        jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs())
            .collect()
    })
}

fn compile(expression: &str) -> Result<Filter, String> {
    let arena = Arena::default();
    let loader = Loader::new(prelude().iter().cloned());
    let modules = loader
        .load(
            &arena,
            File {
                code: expression,
                path: (),
            },
        )
        .map_err(|errs| {
            let mut out = Vec::new();
            for (_, err) in errs {
                match err {
                    jaq_core::load::Error::Io(items) => out.extend(
                        items
                            .into_iter()
                            .map(|(p, m)| format!("cannot load `{p}`: {m}")),
                    ),
                    jaq_core::load::Error::Lex(items) => {
                        out.extend(items.into_iter().map(|(expect, at)| {
                            format!("expected {} at `{}`", expect.as_str(), cut(at))
                        }))
                    }
                    jaq_core::load::Error::Parse(items) => {
                        out.extend(items.into_iter().map(|(expect, at)| {
                            format!("expected {} at `{}`", expect.as_str(), cut(at))
                        }))
                    }
                }
            }
            format!("syntax error: {}", out.join("; "))
        })?;
    Compiler::default()
        .with_funs(funs())
        .compile(modules)
        .map_err(|errs| {
            let out: Vec<String> = errs
                .into_iter()
                .flat_map(|(_, items)| items)
                .map(|(name, undefined)| format!("undefined {} `{name}`", undefined.as_str()))
                .collect();
            out.join("; ")
        })
}

fn cut(at: &str) -> String {
    let shown: String = at.chars().take(20).collect();
    if shown.is_empty() {
        "end of expression".to_owned()
    } else {
        shown
    }
}

thread_local! {
    /// Compiled filters by source text; a block's tools often evaluate the
    /// same expression again, and compiling with the prelude costs most.
    static CACHE: RefCell<HashMap<String, Rc<Filter>>> = RefCell::new(HashMap::new());
}

const CACHE_LIMIT: usize = 256;

fn compiled(expression: &str) -> Result<Rc<Filter>, String> {
    if let Some(hit) = CACHE.with(|c| c.borrow().get(expression).cloned()) {
        return Ok(hit);
    }
    let filter = Rc::new(compile(expression)?);
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(expression.to_owned(), filter.clone());
    });
    Ok(filter)
}

/// How long one expression may run.
pub(crate) const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
/// The largest result (serialized) an expression may produce.
pub(crate) const MAX_RESULT_BYTES: usize = 16 << 20;
/// Stack of the evaluating thread, deep enough that recursion bounded by
/// the data never reaches its end.
const WORKER_STACK: usize = 256 << 20;
/// Evaluations that ran past their time limit and still run; past this
/// many, new ones are refused rather than piling up busy threads.
const MAX_RUNAWAY: usize = 4;

struct Job {
    expression: String,
    input: Value,
    reply: std::sync::mpsc::SyncSender<Result<Value, String>>,
}

struct Worker {
    jobs: std::sync::mpsc::Sender<Job>,
}

thread_local! {
    /// Each calling thread has its own evaluator, so one slow expression
    /// never holds up another block's.
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}
static RUNAWAY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn spawn_worker() -> Result<Worker, String> {
    let (jobs, rx) = std::sync::mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("north-jq".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            for job in rx {
                let result = eval_here(&job.expression, &job.input).and_then(bounded);
                // The caller may have given up waiting (a time-out).
                let _ = job.reply.send(result);
            }
        })
        .map_err(|e| format!("cannot start the jq evaluator: {e}"))?;
    Ok(Worker { jobs })
}

/// A result too large to hand back is an error.
fn bounded(value: Value) -> Result<Value, String> {
    let size = serde_json::to_vec(&value).map(|v| v.len()).unwrap_or(0);
    if size > MAX_RESULT_BYTES {
        return Err(format!(
            "the result is {size} bytes, over the limit of {MAX_RESULT_BYTES}; select less"
        ));
    }
    Ok(value)
}

/// Runs `expression` on `input`; it must produce exactly one value, within
/// [`TIME_LIMIT`] and [`MAX_RESULT_BYTES`]. The filter runs on a worker
/// thread, so an endless loop cannot hang the program: a time-out is an
/// error the model sees (the stuck evaluation is abandoned; its thread ends
/// when it does, and new ones are refused while two are stuck).
pub(crate) fn eval(expression: &str, input: &Value) -> Result<Value, String> {
    if expression.trim().is_empty() {
        return Err("the expression is empty".to_owned());
    }
    // A JSON literal is a jq filter that yields itself: no worker needed.
    if let Ok(literal) = serde_json::from_str::<Value>(expression) {
        return Ok(literal);
    }
    use std::sync::atomic::Ordering;
    if RUNAWAY.load(Ordering::SeqCst) >= MAX_RUNAWAY {
        return Err(
            "earlier expressions are still running past their time limit; no more are evaluated"
                .to_owned(),
        );
    }
    let (reply, answer) = std::sync::mpsc::sync_channel(1);
    let job = Job {
        expression: expression.to_owned(),
        input: input.clone(),
        reply,
    };
    WORKER.with(|cell| {
        let mut worker = cell.borrow_mut();
        if worker.is_none() {
            *worker = Some(spawn_worker()?);
        }
        let sent = worker
            .as_ref()
            .map(|w| w.jobs.send(job))
            .ok_or("no jq evaluator")?;
        if sent.is_err() {
            *worker = None;
            return Err("the jq evaluator stopped; try again".to_owned());
        }
        Ok::<(), String>(())
    })?;
    match answer.recv_timeout(TIME_LIMIT) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            // Abandon the stuck worker; the next call starts a fresh one.
            if WORKER.with(|cell| cell.borrow_mut().take()).is_some() {
                RUNAWAY.fetch_add(1, Ordering::SeqCst);
            }
            Err(format!(
                "the expression ran longer than {} s and was stopped; it may loop forever, or do less",
                TIME_LIMIT.as_secs()
            ))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            WORKER.with(|cell| cell.borrow_mut().take());
            Err("the jq evaluator failed on this expression".to_owned())
        }
    }
}

/// Runs `expression` on `input` on this thread; exactly one value.
fn eval_here(expression: &str, input: &Value) -> Result<Value, String> {
    if expression.trim().is_empty() {
        return Err("the expression is empty".to_owned());
    }
    // A JSON literal is a jq filter that yields itself: skip compilation,
    // the costly part (the standard library prelude is compiled each time).
    if let Ok(literal) = serde_json::from_str::<Value>(expression) {
        return Ok(literal);
    }
    let filter = compiled(expression)?;
    let ctx = Ctx::<D>::new(&filter.lut, Vars::new([]));
    let mut outputs = Vec::new();
    for out in filter.id.run((ctx, to_val(input))) {
        match out {
            Ok(v) => outputs.push(v),
            Err(exn) => {
                return Err(match exn.get_err() {
                    Ok(err) => err.to_string(),
                    Err(_) => "the filter stopped early".to_owned(),
                });
            }
        }
        if outputs.len() > 1 {
            return Err(
                "the filter produced several values; wrap it in [ ... ] to collect them".to_owned(),
            );
        }
    }
    match outputs.pop() {
        Some(v) => from_val(&v),
        None => Err("the filter produced no value".to_owned()),
    }
}

/// JSON to a jaq value.
pub(crate) fn to_val(value: &Value) -> Val {
    match value {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64().and_then(|i| isize::try_from(i).ok()) {
                Val::Num(Num::Int(i))
            } else if let Some(u) = n.as_u64() {
                Val::Num(Num::from_integral(u))
            } else if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                Val::Num(Num::Float(f))
            } else {
                Val::Num(Num::from_dec_str(&n.to_string()))
            }
        }
        Value::String(s) => Val::utf8_str(s.clone().into_bytes()),
        Value::Array(items) => items.iter().map(to_val).collect(),
        Value::Object(map) => Val::obj(
            map.iter()
                .map(|(k, v)| (Val::utf8_str(k.clone().into_bytes()), to_val(v)))
                .collect(),
        ),
    }
}

/// A jaq value to JSON. NaN and infinities (not JSON) are errors.
pub(crate) fn from_val(value: &Val) -> Result<Value, String> {
    Ok(match value {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => match n {
            Num::Int(i) => Value::Number(Number::from(*i as i64)),
            Num::Float(f) => Number::from_f64(*f)
                .map(Value::Number)
                .ok_or_else(|| format!("{f} is not a JSON number"))?,
            other => serde_json::from_str::<Value>(&other.to_string())
                .map_err(|_| format!("{other} is not a JSON number"))?,
        },
        Val::TStr(b) | Val::BStr(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Val::Arr(items) => Value::Array(items.iter().map(from_val).collect::<Result<_, _>>()?),
        Val::Obj(map) => {
            let mut out = Map::new();
            for (k, v) in map.iter() {
                let key = match k {
                    Val::TStr(b) | Val::BStr(b) => String::from_utf8_lossy(b).into_owned(),
                    other => other.to_string(),
                };
                out.insert(key, from_val(v)?);
            }
            Value::Object(out)
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn evaluates_filters_over_objects() {
        let input = json!({"xs": [1, 2, 3], "name": "a", "memory": {"facts": ["x"]}});
        assert_eq!(eval(".xs | add", &input).unwrap(), json!(6));
        assert_eq!(eval("[.xs[] * 2]", &input).unwrap(), json!([2, 4, 6]));
        assert_eq!(
            eval(".memory.facts + [\"y\"]", &input).unwrap(),
            json!(["x", "y"])
        );
        assert_eq!(eval("{\"a\": 1.5}", &input).unwrap(), json!({"a": 1.5}));
        assert_eq!(eval(".name | ascii_upcase", &input).unwrap(), json!("A"));
    }

    #[test]
    fn reports_errors_instead_of_panicking() {
        let input = json!({"xs": [1]});
        assert!(eval(".xs[", &input).unwrap_err().contains("syntax error"));
        assert!(eval("nosuch(1)", &input).unwrap_err().contains("undefined"));
        assert!(
            eval(".xs[]", &json!({"xs": [1, 2]}))
                .unwrap_err()
                .contains("several")
        );
        assert!(eval("empty", &input).unwrap_err().contains("no value"));
        assert!(eval(".xs + 1", &input).unwrap_err().contains("cannot"));
        assert!(eval("halt(1)", &input).is_err());
        assert!(eval("", &input).is_err());
    }

    /// Regression: jq expressions of natural blocks had no time bound.
    #[test]
    fn an_endless_filter_is_stopped_with_a_clear_error() {
        let started = std::time::Instant::now();
        let err = eval("def f: f; f", &json!({})).unwrap_err();
        assert!(err.contains("longer than"), "{err}");
        assert!(started.elapsed() < TIME_LIMIT * 3);
        // The evaluator still works afterwards.
        assert_eq!(eval(".a + 1", &json!({"a": 1})).unwrap(), json!(2));
    }

    #[test]
    fn a_result_too_large_to_return_is_an_error() {
        let huge = Value::String("x".repeat(MAX_RESULT_BYTES));
        assert!(bounded(huge).unwrap_err().contains("over the limit"));
        assert_eq!(bounded(json!([1])).unwrap(), json!([1]));
    }

    #[test]
    fn has_no_access_to_the_process() {
        assert_eq!(eval("env", &json!({})).unwrap(), json!({}));
        assert_eq!(eval("1 | debug", &json!({})).unwrap(), json!(1));
    }

    #[test]
    fn numbers_round_trip() {
        for v in [
            json!(0),
            json!(-7),
            json!(1.25),
            json!(18446744073709551615u64),
            json!(1e300),
        ] {
            assert_eq!(eval(".", &v).unwrap(), v);
        }
    }
}
