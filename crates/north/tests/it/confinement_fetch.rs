//! One network rule for every fetcher, and bounded documents, through the
//! real binary: `http.get` keeps to the private-address rule `web_fetch`
//! keeps, every redirect hop is resolved and checked (a name that resolves
//! to loopback is private, whatever it looks like), and a PDF bomb is
//! refused under a stated memory bound. Everything stays on loopback: the
//! "private" targets are this machine's own servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::ToSocketAddrs;

use north_test_support::{FakeServer, Reply};
use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, text};

fn get_turns(tool: &str, url: &str) -> Value {
    json!([
        {"tool_calls": [{"id": "g1", "name": tool, "args": {"url": url}}]},
        {"text": "done"}
    ])
}

/// A name other than `localhost` that resolves only to loopback (this
/// machine's host name, as `/etc/hosts` usually has it), so the check on
/// resolved addresses is what refuses it; `localhost` where there is none.
fn loopback_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into the buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let name = if rc == 0 {
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        String::new()
    };
    let loopback_only = !name.is_empty()
        && (name.as_str(), 80).to_socket_addrs().is_ok_and(|addrs| {
            let addrs: Vec<_> = addrs.collect();
            !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback())
        });
    if loopback_only {
        name
    } else {
        eprintln!("note: no host name resolves to loopback here; using localhost");
        "localhost".into()
    }
}

fn page() -> Reply {
    let mut r = Reply::json(200, "<html><body><p>INSIDE-PAGE-7731</p></body></html>");
    r.content_type = "text/html".into();
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_get_never_reaches_loopback_with_the_network_grant_alone() {
    let server = FakeServer::start().await.unwrap();
    server.route("GET", "/docs", page());
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let name = loopback_name();
    let urls = [
        format!("http://127.0.0.1:{port}/docs"),
        format!("http://localhost:{port}/docs"),
        format!("http://{name}:{port}/docs"),
        format!("http://0x7f.1:{port}/docs"),
    ];
    let results = tokio::task::spawn_blocking(move || {
        urls.iter()
            .map(|url| {
                let sb = Sandbox::new();
                sb.exec_scripted(&get_turns("http.get", url), &["--grant", "net"], &[])
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (out, requests) in results {
        let told = requests
            .get(1)
            .map(Value::to_string)
            .unwrap_or_else(|| text(&out.stderr));
        assert!(told.contains("loopback or private address"), "{told}");
        assert!(!told.contains("INSIDE-PAGE-7731"), "{told}");
    }
    assert!(
        server.requests_to("/docs").is_empty(),
        "a refused fetch reached the server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_a_name_that_resolves_to_loopback_is_refused() {
    let server = FakeServer::start().await.unwrap();
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let name = loopback_name();
    server.route(
        "GET",
        "/hop",
        Reply::json(302, "").header("location", &format!("http://{name}:{port}/docs")),
    );
    server.route("GET", "/docs", page());
    let url = format!("{}/hop", server.url());
    let runs = tokio::task::spawn_blocking(move || {
        ["web_fetch", "http.get"]
            .iter()
            .map(|tool| {
                let sb = Sandbox::new();
                // Only the first host is named: the hop is judged by what
                // its name resolves to.
                sb.exec_scripted(
                    &get_turns(tool, &url),
                    &["--grant", "net:127.0.0.1", "--grant", "net"],
                    &[],
                )
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (out, requests) in runs {
        let told = requests
            .get(1)
            .map(Value::to_string)
            .unwrap_or_else(|| text(&out.stderr));
        assert!(
            told.contains("loopback or private address") || told.contains(&format!("net:{name}")),
            "{told}"
        );
        assert!(
            !told.contains("INSIDE-PAGE-7731"),
            "the redirect was followed: {told}"
        );
    }
    assert!(server.requests_to("/docs").is_empty());
    assert_eq!(server.requests_to("/hop").len(), 2);
}

/// A PDF whose one content stream inflates to `inflated` bytes of zeros.
fn pdf_bomb(inflated: usize) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..inflated / chunk.len() {
        enc.write_all(&chunk).unwrap();
    }
    let stream = enc.finish().unwrap();
    let mut pdf = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n\
        2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n\
        3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>\nendobj\n"
        .to_vec();
    pdf.extend(
        format!(
            "4 0 obj\n<< /Length {} /Filter /FlateDecode >>\nstream\n",
            stream.len()
        )
        .as_bytes(),
    );
    pdf.extend(&stream);
    pdf.extend(b"\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
    pdf
}

/// The bound the README states for reading an untrusted document.
const MEMORY_BOUND_KIB: i64 = 256 * 1024;

/// Runs `cmd` and returns its output with its peak resident memory (KiB).
fn run_measured(mut cmd: std::process::Command) -> (std::process::Output, i64) {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let reader = std::thread::spawn(move || child.wait_with_output());
    // The kernel's high-water mark of the process (VmHWM), read while it
    // runs: a bomb takes far longer to inflate than one reading.
    let mut peak = 0i64;
    while !reader.is_finished() {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib: i64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            peak = peak.max(kib);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    (reader.join().unwrap().unwrap(), peak)
}

#[test]
fn a_pdf_bomb_is_refused_under_the_memory_bound() {
    let sb = Sandbox::new();
    let bomb = pdf_bomb(60 << 20);
    assert!(bomb.len() < 100 * 1024, "{}", bomb.len());
    std::fs::write(sb.project().join("report.pdf"), &bomb).unwrap();
    // The model reads it.
    let script = sb.file(
        "read.json",
        &json!([
            {"tool_calls": [{"id": "r1", "name": "read_file", "args": {"path": "report.pdf"}}]},
            {"text": "done"}
        ]),
    );
    let requests = sb.project().join("../requests-read.jsonl");
    let mut cmd = sb.north();
    cmd.args(["exec", "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("summarise it");
    let (out, peak) = run_measured(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let told = common::recorded(&requests)[1].to_string();
    assert!(told.contains("inflates past"), "{told}");
    assert!(peak < MEMORY_BOUND_KIB, "read_file peaked at {peak} KiB");
    // The user attaches it.
    let script = sb.file("say.json", &json!([{"text": "done"}]));
    let mut cmd = sb.north();
    cmd.args(["exec", "--script"])
        .arg(&script)
        .arg("read @report.pdf");
    let (out, peak) = run_measured(cmd);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("inflates past"), "{all}");
    assert!(peak < MEMORY_BOUND_KIB, "@report.pdf peaked at {peak} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_search_endpoint_may_be_local_but_not_where_it_redirects() {
    let server = FakeServer::start().await.unwrap();
    let port = server.url().rsplit(':').next().unwrap().to_string();
    server.set_responder(move |req| {
        if req.path.starts_with("/search") {
            Reply::json(302, "").header(
                "location",
                &format!("http://localhost:{port}/metadata/credentials"),
            )
        } else {
            Reply::json(200, r#"{"results": [{"title": "LEAKED-CREDENTIALS-881"}]}"#)
        }
    });
    let endpoint = format!("{}/search", server.url());
    let (out, requests) = tokio::task::spawn_blocking(move || {
        let sb = Sandbox::new();
        let dir = sb.home().join("config/north");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.json"),
            json!({"web_search": {"searxng_url": endpoint}}).to_string(),
        )
        .unwrap();
        sb.exec_scripted(
            &json!([
                {"tool_calls": [{"id": "s1", "name": "web_search", "args": {"query": "rust"}}]},
                {"text": "done"}
            ]),
            &["--grant", "net"],
            &[],
        )
    })
    .await
    .unwrap();
    let told = requests
        .get(1)
        .map(Value::to_string)
        .unwrap_or_else(|| text(&out.stderr));
    assert!(!told.contains("LEAKED-CREDENTIALS-881"), "{told}");
    assert!(
        server.requests_to("/metadata/credentials").is_empty(),
        "the redirect from the search endpoint was followed"
    );
    assert_eq!(server.requests().len(), 1, "the endpoint itself was asked");
}
