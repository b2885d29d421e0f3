//! A standalone fake provider for whole-binary benchmarks and manual runs.
//!
//! `north-fake-server anthropic|openai|responses|anthropic-tool [TEXT]` serves a
//! streamed answer to every request on an ephemeral loopback port and prints
//! its URL. `anthropic-tool` first asks for a `read_file` of `README.md`, and
//! answers with text once the request carries the tool result: one tool
//! round trip per session.

use north_test_support::{FakeServer, Reply, anthropic, openai, responses};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let provider = args.next().unwrap_or_else(|| "anthropic".into());
    let text = args
        .next()
        .unwrap_or_else(|| "Hello from the fake server.".into());
    let parts: Vec<&str> = text.split_inclusive(' ').collect();
    let server = FakeServer::start().await?;
    let body = match provider.as_str() {
        "openai" => openai::text_stream(&parts),
        "responses" => responses::StreamBuilder::new().text(&parts).build(),
        "anthropic" => anthropic::text_stream(&parts),
        "anthropic-tool" => {
            let text = anthropic::text_stream(&parts);
            let tool = anthropic::StreamBuilder::new()
                .text(&["Reading the README."])
                .tool_use(
                    "toolu_bench",
                    "read_file",
                    &["{\"path\": \"README.md\",", " \"range\": null}"],
                )
                .build();
            server.set_responder(move |req| {
                let body = String::from_utf8_lossy(&req.body);
                Reply::sse(if body.contains("tool_result") {
                    text.clone()
                } else {
                    tool.clone()
                })
            });
            Vec::new()
        }
        other => {
            eprintln!(
                "unknown provider `{other}` (use anthropic, openai, responses or anthropic-tool)"
            );
            std::process::exit(2);
        }
    };
    if !body.is_empty() {
        server.set_fallback(Reply::sse(body));
    }
    println!("{}", server.url());
    // Serve until killed.
    std::future::pending::<()>().await;
    Ok(())
}
