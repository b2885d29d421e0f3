//! A classifier that fills a typed enum.
//!
//! Runs on the stub backend (a keyword rule stands in for the model) unless
//! `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` is set:
//!
//! ```text
//! cargo run -p north-natural --example classify
//! ```

use std::sync::Arc;

use north_natural::{
    Configuration, Envelope, Environment, Memory, StubBackend, backend_from_env, environment,
    natural,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a customer feels about the product.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Sentiment {
    /// Happy with it.
    Positive,
    /// Unhappy with it.
    Negative,
    /// Neither, or both.
    Mixed,
}

#[natural]
async fn classify(review: &str) -> north_natural::Result<Sentiment> {
    let mut sentiment = Sentiment::Mixed;
    "natural
    Set <:sentiment> to how the customer feels about the product, judging from
    their review <review>:

    {review}
    ";
    Ok(sentiment)
}

fn stub() -> StubBackend {
    StubBackend::from_fn(|block| {
        let text = block.program.to_lowercase();
        let label = match (
            text.contains("love") || text.contains("great"),
            text.contains("broke") || text.contains("refund"),
        ) {
            (true, false) => "positive",
            (false, true) => "negative",
            _ => "mixed",
        };
        Envelope::done().bind("sentiment", label)
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
    let reviews = [
        "I love it, works great.",
        "It broke after two days, I want a refund.",
        "Great screen, but the battery broke quickly.",
    ];
    environment(env, async {
        for review in reviews {
            let label = classify(review).await?;
            println!("{label:?}: {review}");
        }
        Ok(())
    })
    .await
}
