//! A loop whose body decides `continue` and `break`.
//!
//! Each log line goes through a natural block that skips noise (`continue`),
//! stops at the first fatal error (`break`), and otherwise records a summary.
//!
//! ```text
//! cargo run -p north-natural --example triage_loop
//! ```

use std::sync::Arc;

use north_natural::{
    Configuration, Envelope, Environment, Memory, StubBackend, backend_from_env, environment,
    natural,
};

#[natural]
async fn triage(lines: Vec<String>) -> north_natural::Result<(Vec<String>, Option<String>)> {
    let mut notes: Vec<String> = Vec::new();
    let mut fatal: Option<String> = None;
    for line in lines {
        let mut note = String::new();
        "natural
        Log line: {line}
        If it is routine noise (debug or info), continue with the next line.
        If it reports a fatal failure, store a one-line explanation in <:fatal> and break.
        Otherwise write a short summary of the problem into <:note>.
        ";
        notes.push(note);
    }
    Ok((notes, fatal))
}

fn stub() -> StubBackend {
    StubBackend::from_fn(|block| {
        let line = block
            .program
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("Log line: ")
            .to_owned();
        if line.starts_with("DEBUG") || line.starts_with("INFO") {
            Envelope::done().continue_loop()
        } else if line.starts_with("FATAL") {
            Envelope::done()
                .bind("fatal", format!("stopped at: {line}"))
                .break_loop()
        } else {
            Envelope::done().bind("note", format!("needs a look: {line}"))
        }
    })
}

#[tokio::main]
async fn main() -> north_natural::Result<()> {
    // Every part of an environment is required (spec section 10): leaving
    // one out of the builder does not compile.
    let env = Environment::builder()
        .workspace_root(env!("CARGO_MANIFEST_DIR"))
        .memory(Memory::none());
    let env = match backend_from_env() {
        Some((backend, configuration)) => env.backend(backend).configuration(configuration),
        None => env
            .backend(Arc::new(stub()))
            .configuration(Configuration::default()),
    }
    .build();
    println!("backend: {}", env.backend().provider());
    let log = [
        "INFO server started on port 8080",
        "WARN disk usage at 91%",
        "DEBUG cache hit ratio 0.97",
        "ERROR payment webhook timed out after 30s",
        "FATAL database connection pool exhausted",
        "WARN this line is never reached",
    ]
    .map(String::from)
    .to_vec();
    let (notes, fatal) = environment(env, triage(log)).await?;
    for note in notes {
        println!("note:  {note}");
    }
    println!("fatal: {}", fatal.as_deref().unwrap_or("none"));
    Ok(())
}
