//! A standalone fake provider for whole-binary benchmarks and manual runs.
//!
//! `north-fake-server anthropic|openai [TEXT]` serves the same streamed
//! answer to every request on an ephemeral loopback port and prints its URL.

use north_test_support::{FakeServer, Reply, anthropic, openai};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let provider = args.next().unwrap_or_else(|| "anthropic".into());
    let text = args
        .next()
        .unwrap_or_else(|| "Hello from the fake server.".into());
    let parts: Vec<&str> = text.split_inclusive(' ').collect();
    let body = match provider.as_str() {
        "openai" => openai::text_stream(&parts),
        "anthropic" => anthropic::text_stream(&parts),
        other => {
            eprintln!("unknown provider `{other}` (use anthropic or openai)");
            std::process::exit(2);
        }
    };
    let server = FakeServer::start().await?;
    server.set_fallback(Reply::sse(body));
    println!("{}", server.url());
    // Serve until killed.
    std::future::pending::<()>().await;
    Ok(())
}
