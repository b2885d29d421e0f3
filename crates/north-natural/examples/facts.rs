//! A function that accumulates facts in memory across calls.
//!
//! The memory is a typed struct the environment owns; the model updates its
//! fields with `nh_assign memory.<field>` (validated against the struct), and
//! later calls see what earlier ones stored.
//!
//! ```text
//! cargo run -p north-natural --example facts
//! ```

use std::sync::Arc;

use north_natural::{
    Configuration, Envelope, Environment, Memory, StubBackend, backend_from_env, environment,
    natural,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What the assistant has learned about the user.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
struct Profile {
    /// Short, self-contained facts, one per entry.
    facts: Vec<String>,
    /// How many messages were read.
    messages_read: u32,
}

#[natural]
async fn read_message(message: &str) -> north_natural::Result<usize> {
    "natural
    The user said: {message}
    Add every new fact about the user to memory.facts (keep the existing ones),
    add one to memory.messages_read, then return how many facts memory now holds.
    ";
    Ok(0)
}

fn stub() -> StubBackend {
    // Stands in for the model: stores the message as a fact with jq, the way
    // a model would call nh_assign, and returns the new count.
    StubBackend::from_fn(|block| {
        let said = block
            .program
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("The user said: ")
            .trim_end_matches('.');
        Envelope::done()
            .call(
                "nh_assign",
                json!({"target": "memory.facts", "expression": format!(".memory.facts + [{}]", json!(said))}),
            )
            .call(
                "nh_assign",
                json!({"target": "memory.messages_read", "expression": ".memory.messages_read + 1"}),
            )
            .call("nh_eval", json!({"expression": ".memory.facts | length"}))
            .returning(0)
    })
}

#[tokio::main]
async fn main() -> north_natural::Result<()> {
    let memory = Memory::new(Profile::default())?;
    let env = Environment::builder()
        .workspace_root(env!("CARGO_MANIFEST_DIR"))
        .memory(&memory);
    let (env, stubbed) = match backend_from_env() {
        Some((backend, configuration)) => {
            (env.backend(backend).configuration(configuration), false)
        }
        None => (
            env.backend(Arc::new(stub()))
                .configuration(Configuration::default()),
            true,
        ),
    };
    let env = env.build();
    println!("backend: {}", env.backend().provider());
    environment(env, async {
        for message in [
            "I live in Lyon.",
            "I am allergic to peanuts.",
            "My daughter plays the cello.",
        ] {
            let count = read_message(message).await?;
            if !stubbed {
                println!("model says {count} facts after: {message}");
            }
        }
        Ok::<(), north_natural::Error>(())
    })
    .await?;
    let profile = memory.get();
    println!("messages read: {}", profile.messages_read);
    for fact in &profile.facts {
        println!("- {fact}");
    }
    Ok(())
}
