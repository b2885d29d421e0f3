//! Images through the real binary to each provider's wire format (the
//! test-support servers record what North sends): `@shot.png` in a prompt,
//! `--image`, `read_file` on a picture, scaling down, and a text-only model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Cursor;

use base64::Engine;
use north_test_support::{FakeServer, Reply, anthropic, openai, responses};
use serde_json::Value;

use crate::common;
use common::{Sandbox, output, text};

fn png(w: u32, h: u32, noisy: bool) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        if noisy {
            let v = (x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503))
                .wrapping_mul(2_246_822_519);
            image::Rgb([(v >> 24) as u8, (v >> 16) as u8, (v >> 8) as u8])
        } else {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        }
    });
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn anthropic_exec(sb: &Sandbox, server: &FakeServer, args: &[&str]) -> std::process::Command {
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-0000000000000000")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "exec",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
        ])
        .args(args);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_image_is_an_anthropic_image_block() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["A red square."])));
    let sb = Sandbox::new();
    let shot = png(40, 30, false);
    std::fs::write(sb.project().join("shot.png"), &shot).unwrap();
    let out = output(anthropic_exec(&sb, &server, &["what is in @shot.png ?"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests()[0].json();
    let content = body["messages"][0]["content"].as_array().unwrap();
    let image = content
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block");
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(image["source"]["data"], b64(&shot));
    assert!(content.iter().any(
        |b| b["type"] == "text" && b["text"].as_str().unwrap().contains("[Image #1: shot.png]")
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_on_a_picture_gives_the_model_the_image_inside_the_tool_result() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(
        anthropic::StreamBuilder::new()
            .tool_use("r1", "read_file", &[r#"{"path": "ui/shot.png"}"#])
            .build(),
    ));
    server.push(Reply::sse(anthropic::text_stream(&["I see it."])));
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.project().join("ui")).unwrap();
    let shot = png(64, 48, false);
    std::fs::write(sb.project().join("ui/shot.png"), &shot).unwrap();
    let out = output(anthropic_exec(&sb, &server, &["look at the screenshot"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests()[1].json();
    let results: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    let parts = results[0]["content"]
        .as_array()
        .expect("text and image parts");
    assert_eq!(parts[0]["type"], "text");
    assert!(
        !parts[0]["text"].as_str().unwrap().contains(&b64(&shot)),
        "the base64 is not text"
    );
    assert_eq!(parts[1]["type"], "image");
    assert_eq!(parts[1]["source"]["data"], b64(&shot));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_chat_and_responses_get_data_urls() {
    let sb = Sandbox::new();
    let shot = png(20, 20, false);
    std::fs::write(sb.project().join("shot.png"), &shot).unwrap();
    let data_url = format!("data:image/png;base64,{}", b64(&shot));
    for api in ["chat", "responses"] {
        let server = FakeServer::start().await.unwrap();
        server.push(Reply::sse(if api == "chat" {
            openai::text_stream(&["ok"])
        } else {
            responses::text_stream(&["ok"])
        }));
        let mut cmd = sb.north();
        cmd.env("OPENAI_API_KEY", "sk-test-0000000000000000")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
            .args([
                "exec",
                "--provider",
                "openai",
                "--model",
                "gpt-4o",
                "--openai-api",
                api,
            ])
            .arg("describe @shot.png");
        let out = output(cmd).await;
        assert!(out.status.success(), "{api}: {}", text(&out.stderr));
        let body = server.requests()[0].json();
        if api == "chat" {
            let user = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap();
            let parts = user["content"].as_array().expect("content parts");
            assert!(parts.iter().any(|p| p["type"] == "text"));
            let image = parts.iter().find(|p| p["type"] == "image_url").unwrap();
            assert_eq!(image["image_url"]["url"], data_url);
        } else {
            let items = body["input"].as_array().unwrap();
            let image = items
                .iter()
                .flat_map(|i| i["content"].as_array().into_iter().flatten())
                .find(|c| c["type"] == "input_image")
                .expect("an input_image");
            assert_eq!(image["image_url"], data_url);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_image_is_scaled_down_under_the_limit() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["Big."])));
    let sb = Sandbox::new();
    let big = png(3000, 2400, true);
    assert!(
        big.len() > 5_000_000,
        "the test image is oversize: {}",
        big.len()
    );
    let path = sb.dir.path().join("big.png");
    std::fs::write(&path, &big).unwrap();
    let out = output(anthropic_exec(
        &sb,
        &server,
        &["--image", path.to_str().unwrap(), "what is this"],
    ))
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests()[0].json();
    let image = body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .cloned()
        .unwrap();
    let data = image["source"]["data"].as_str().unwrap();
    assert!(
        data.len() <= 5 * 1024 * 1024,
        "{} bytes of base64",
        data.len()
    );
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let scaled = image::load_from_memory(&bytes).unwrap();
    assert_eq!(scaled.width().max(scaled.height()), 1568);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_model_gets_a_clear_error_before_any_request() {
    let server = FakeServer::start().await.unwrap();
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("shot.png"), png(10, 10, false)).unwrap();
    let mut cmd = sb.north();
    cmd.env("OPENAI_API_KEY", "sk-test-0000000000000000")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args([
            "exec",
            "--provider",
            "openai",
            "--model",
            "o3-mini",
            "--openai-api",
            "chat",
        ])
        .arg("what is @shot.png");
    let out = output(cmd).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("o3-mini reads text only"), "{stderr}");
    // (It may ask the server about the model's window; never for an answer.)
    assert!(
        server.requests_to("/v1/chat/completions").is_empty(),
        "a model request was sent"
    );
    // Not an image at all: refused with what it is.
    std::fs::write(sb.project().join("fake.png"), "just text").unwrap();
    let server = FakeServer::start().await.unwrap();
    let mut cmd = anthropic_exec(&sb, &server, &["--image"]);
    cmd.arg(sb.project().join("fake.png")).arg("hi");
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not a PNG, JPEG, GIF or WebP image"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_is_a_document_block_on_anthropic_and_its_pages_text_elsewhere() {
    let sb = Sandbox::new();
    let pdf = north_tools::media::sample_pdf(&["Quarterly revenue rose", "Costs fell by half"]);
    std::fs::create_dir_all(sb.project().join("docs")).unwrap();
    std::fs::write(sb.project().join("docs/report.pdf"), &pdf).unwrap();

    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["Read it."])));
    let out = output(anthropic_exec(
        &sb,
        &server,
        &["summarize @docs/report.pdf"],
    ))
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests()[0].json();
    let content = body["messages"][0]["content"].as_array().unwrap();
    let doc = content
        .iter()
        .find(|b| b["type"] == "document")
        .expect("a document block");
    assert_eq!(doc["source"]["type"], "base64");
    assert_eq!(doc["source"]["media_type"], "application/pdf");
    assert_eq!(doc["source"]["data"], b64(&pdf));
    assert_eq!(doc["title"], "report.pdf");
    assert!(content.iter().any(|b| {
        b["type"] == "text"
            && b["text"]
                .as_str()
                .unwrap()
                .contains("[Document #1: docs/report.pdf]")
    }));

    for api in ["chat", "responses"] {
        let server = FakeServer::start().await.unwrap();
        server.push(Reply::sse(if api == "chat" {
            openai::text_stream(&["ok"])
        } else {
            responses::text_stream(&["ok"])
        }));
        let mut cmd = sb.north();
        cmd.env("OPENAI_API_KEY", "sk-test-0000000000000000")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
            .args(["exec", "--provider", "openai", "--model", "gpt-4o"])
            .args(["--openai-api", api, "summarize @docs/report.pdf"]);
        let out = output(cmd).await;
        assert!(out.status.success(), "{api}: {}", text(&out.stderr));
        let sent = String::from_utf8_lossy(&server.requests()[0].body).into_owned();
        assert!(!sent.contains(&b64(&pdf)), "{api}: the file itself went");
        let body = server.requests()[0].json().to_string();
        let one = body.find("--- page 1 ---\\nQuarterly revenue rose");
        let two = body.find("--- page 2 ---\\nCosts fell by half");
        assert!(one.is_some() && two > one, "{api}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_a_pdf_is_refused_with_a_reason() {
    let server = FakeServer::start().await.unwrap();
    server.push(Reply::sse(anthropic::text_stream(&["ok"])));
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("fake.pdf"), "just text").unwrap();
    let out = output(anthropic_exec(&sb, &server, &["read @fake.pdf"])).await;
    let err = text(&out.stderr);
    assert!(err.contains("not attached: @fake.pdf (not a PDF"), "{err}");
}
