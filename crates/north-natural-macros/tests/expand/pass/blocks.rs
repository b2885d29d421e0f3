//! Sentinel detection, binding extraction and loop context, run on the stub.
use north_natural::{Envelope, Environment, Error, StubBackend, environment_sync, natural};

/// Not a natural docstring: the first line is not `natural`.
///
/// natural
#[natural]
fn detection(x: u32) -> north_natural::Result<u32> {
    let mut y = x;
    "Natural\nnot a block: the sentinel is case-sensitive";
    " natural\nnot a block: no leading whitespace";
    "natural \nnot a block: no trailing whitespace";
    "naturally\nnot a block";
    let _s = "natural\nnot a statement: an initializer";
    "natural
    block 1 reads <x> and writes <:y>";
    ("natural
    block 2: parentheses do not matter");
    r#"

natural
block 3: leading empty lines are skipped; raw strings work"#;
    Ok(y)
}

/// natural
/// Docstring block: runs first and may write the mutable parameter <:n>.
#[natural]
fn docstring(mut n: u32) -> north_natural::Result<u32> {
    "natural
    Then an inline block sees <n>.";
    Ok(n)
}

#[natural]
fn scopes(items: Vec<u32>) -> north_natural::Result<u32> {
    let mut total = 0;
    for (i, item) in items.iter().enumerate() {
        if let Some(next) = items.get(i + 1) {
            "natural
            In a loop, with <item>, <next>, <i> and <:total> in scope: {item} then {next}.";
        }
    }
    match items.first() {
        Some(first) => {
            let mut seen = *first;
            "natural
            Match arms bind <first>; block locals like <:seen> count.";
            total += seen;
        }
        None => {}
    }
    Ok(total)
}

#[natural]
fn outside_loop() -> north_natural::Result<()> {
    "natural
    Not in a loop: break fails at run time.";
    Ok(())
}

fn main() {
    let stub = StubBackend::new([
        Envelope::done().bind("y", 7),
        Envelope::done(),
        Envelope::done(),
    ]);
    let env = Environment::stub(stub);
    assert_eq!(environment_sync(env, || detection(1)).unwrap(), 7);

    let stub = StubBackend::new([Envelope::done().bind("n", 5), Envelope::done()]);
    let env = Environment::stub(stub);
    assert_eq!(environment_sync(env, || docstring(1)).unwrap(), 5);

    let stub = StubBackend::new([
        Envelope::done().bind("total", 10),
        Envelope::done().break_loop(),
        Envelope::done().bind("seen", 1),
    ]);
    let env = Environment::stub(stub);
    assert_eq!(environment_sync(env, || scopes(vec![1, 2, 3])).unwrap(), 11);

    let stub = StubBackend::new([Envelope::done().break_loop()]);
    let env = Environment::stub(stub);
    assert!(matches!(
        environment_sync(env, outside_loop),
        Err(Error::EffectOutsideLoop { .. })
    ));
}
