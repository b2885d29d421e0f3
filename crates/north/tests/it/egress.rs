//! Commands reach the network only through North's proxy, host by host,
//! under the same grants as North's own fetchers — through the binary in
//! `auto` (every command sandboxed, nothing asked). Everything here stays
//! on loopback: refused addresses are refused before any connection.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{Read, Write};
use std::net::TcpListener;

use north_test_support::recorded::tool_result;
use serde_json::json;

use crate::common::*;

/// An HTTP server on 127.0.0.1: `/hop` redirects to `target`, anything
/// else is a page. Each connection one request.
fn server(target: &str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let target = target.replace("PORT", &port.to_string());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&head);
            let answer = if head.starts_with("GET /hop") {
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                "HTTP/1.1 200 OK\r\nContent-Length: 19\r\nConnection: close\r\n\r\nPAGE-FROM-LOOPBACK\n".to_string()
            };
            let _ = conn.write_all(answer.as_bytes());
        }
    });
    port
}

/// Runs `command` once in `auto` with `grants`: what it printed.
fn run(sb: &Sandbox, command: &str, grants: &[&str]) -> String {
    let mut args = vec!["--mode", "auto"];
    for g in grants {
        args.extend(["--grant", g]);
    }
    let (out, sent) = sb.exec_scripted(
        &json!({"turns": [
            {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": command}}]},
            {"text": "Done."}
        ]}),
        &args,
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = tool_result(&sent[1], "c1");
    format!(
        "{}{}",
        result["output"]["stdout"].as_str().unwrap_or_default(),
        result["output"]["stderr"].as_str().unwrap_or_default()
    )
}

#[test]
fn a_granted_host_is_reached_through_the_proxy_and_nothing_else_is() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let port = server("http://127.0.0.2:PORT/");
    let shown = run(
        &sb,
        &format!(
            "curl -sS --noproxy '' http://127.0.0.1:{port}/page; \
             curl -sS --noproxy '' --proxytunnel http://127.0.0.1:{port}/tunnel; \
             curl -sS --noproxy '' --socks5-hostname \"$ALL_PROXY\" http://127.0.0.1:{port}/socks; \
             curl -sS --noproxy '' --socks5-hostname \"$ALL_PROXY\" http://127.0.0.2:{port}/socks-other || echo SOCKS-REFUSED; \
             curl -sS --noproxy '' -i http://127.0.0.2:{port}/other; \
             curl -sS --noproxy '*' http://127.0.0.1:{port}/direct || echo DIRECT-FAILED; \
             (python3 -m http.server 47901 --bind 127.0.0.1 >/dev/null 2>&1 &); \
             for i in $(seq 100); do curl -s http://127.0.0.1:47901/README.md && break; sleep 0.1; done; \
             rm -f /tmp/north-egress-*/proxy.sock; ls /tmp/north-egress-*/"
        ),
        &["net:127.0.0.1"],
    );
    // Plain HTTP, a CONNECT tunnel and SOCKS5 reach the granted host; SOCKS5
    // to another is refused.
    assert_eq!(shown.matches("PAGE-FROM-LOOPBACK").count(), 3, "{shown}");
    assert!(shown.contains("SOCKS-REFUSED"), "{shown}");
    // Another host is refused, saying why and what would allow it.
    assert!(shown.contains("HTTP/1.1 403 Forbidden"), "{shown}");
    // (curl bolds header names on a terminal: the name and the reason apart.)
    assert!(
        shown.contains("X-North-Denied")
            && shown.contains("North's sandbox proxy refused it")
            && shown.contains("net:127.0.0.2"),
        "{shown}"
    );
    // A connection that ignores the proxy variables reaches nothing.
    assert!(shown.contains("DIRECT-FAILED"), "{shown}");
    // A server the command started itself is reached directly, not through
    // the proxy (NO_PROXY names the namespace's own loopback).
    assert!(shown.contains("# Test project"), "{shown}");
    // The proxy's socket cannot be removed (or replaced) by a command.
    assert!(shown.contains("Read-only file system"), "{shown}");
    assert!(shown.lines().any(|l| l.trim() == "proxy.sock"), "{shown}");
    // Each allowed and refused connection is in the session's trace.
    let trace: String = std::fs::read_dir(sb.project().join(".north/sessions"))
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path().join("trace.jsonl")).ok())
        .collect();
    let done = trace
        .lines()
        .find(|l| l.contains("\"tool_done\"") && l.contains("\"hosts\""))
        .unwrap_or_else(|| panic!("no connections in the trace:\n{trace}"));
    assert!(
        done.contains("\"host\":\"127.0.0.1\"")
            && done.contains("\"host\":\"127.0.0.2\"")
            && done.contains("\"allowed\":false"),
        "{done}"
    );
}

#[test]
fn loopback_in_every_spelling_and_names_for_it_are_refused_unless_named() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let port = server("http://127.0.0.1:PORT/page");
    // A grant for another host makes the command's network the proxy's;
    // `*.localhost` is a wildcard, which never names a private host.
    let attempts = [
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://db.localhost:{port}/"),
        format!("http://0.0.0.0:{port}/"),
    ];
    let command: Vec<String> = attempts
        .iter()
        .map(|url| format!("curl -sS --noproxy '' -o /dev/null -w '%{{http_code}} {url}\\n' {url}"))
        .chain([format!(
            "curl -sS --noproxy '' -o /dev/null -w '%{{http_code}} tunnel\\n' --proxytunnel http://127.0.0.1:{port}/"
        )])
        .collect();
    let shown = run(
        &sb,
        &command.join("; "),
        &["net:registry.example.test", "net:*.localhost"],
    );
    for url in &attempts {
        assert!(
            shown.contains(&format!("403 {url}")),
            "{url} was not refused:\n{shown}"
        );
    }
    assert!(
        shown.contains("403 tunnel") || shown.contains("CONNECT tunnel failed, response 403"),
        "{shown}"
    );
    assert!(!shown.contains("PAGE-FROM-LOOPBACK"), "{shown}");

    // Named, the same loopback host is reached; a redirect from it to a
    // host no grant names is refused where it leads.
    let port = server("http://127.0.0.2:PORT/page");
    let shown = run(
        &sb,
        &format!(
            "curl -sS --noproxy '' http://127.0.0.1:{port}/page; curl -sS --noproxy '' -L -o /dev/null -w '%{{http_code}} after the redirect\\n' http://127.0.0.1:{port}/hop"
        ),
        &["net:127.0.0.1"],
    );
    assert!(shown.contains("PAGE-FROM-LOOPBACK"), "{shown}");
    assert!(shown.contains("403 after the redirect"), "{shown}");
}

/// What `program args` prints with the sandbox's environment (its scratch
/// home), trimmed; `None` when it cannot run.
fn ask_tool(sb: &Sandbox, program: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sb.home())
        .current_dir(sb.project())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The host of `url`.
fn host_of(url: &str) -> String {
    url.split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', ':'])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A real package manager through the proxy: npm installs a package from
/// the registry its own configuration names (read now, never written in
/// the repository) when that host is granted, and is refused with North's
/// reason when it is not.
#[test]
fn npm_installs_from_its_configured_registry_only_when_that_host_is_granted() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    std::fs::create_dir_all(sb.home()).unwrap();
    let Some(registry) = ask_tool(&sb, "npm", &["config", "get", "registry"]) else {
        north_test_support::missing("npm is not installed");
        return;
    };
    if ask_tool(&sb, "npm", &["view", "is-number@7.0.0", "version"]).is_none() {
        north_test_support::missing(&format!(
            "the npm registry {registry} is not reachable from here"
        ));
        return;
    }
    let host = host_of(&registry);
    let install = "npm install is-number@7.0.0 --no-audit --no-fund --no-save; ls node_modules";
    let refused = run(&sb, install, &[]);
    assert!(refused.contains("403"), "{refused}");
    assert!(
        !sb.project().join("node_modules/is-number").exists(),
        "{refused}"
    );
    let installed = run(&sb, install, &[&format!("net:{host}")]);
    assert!(
        sb.project()
            .join("node_modules/is-number/package.json")
            .exists(),
        "{installed}"
    );
}

/// `sandbox.network.registries` grants what pip's own configuration (here
/// its defaults) fetches from: `pip download` works with no `--grant`.
#[test]
fn the_registries_setting_lets_pip_download_from_where_pip_fetches() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    std::fs::create_dir_all(sb.home()).unwrap();
    if ask_tool(&sb, "python3", &["-m", "pip", "--version"]).is_none() {
        north_test_support::missing("pip is not installed");
        return;
    }
    let download = "python3 -m pip download six==1.16.0 --no-deps --no-cache-dir --disable-pip-version-check -d wheels 2>&1 | tail -3; ls wheels";
    let refused = run(&sb, download, &[]);
    assert!(
        !sb.project()
            .join("wheels/six-1.16.0-py2.py3-none-any.whl")
            .exists(),
        "{refused}"
    );
    if !refused.contains("403") && !refused.contains("ProxyError") {
        north_test_support::missing(&format!("pip did not reach the proxy: {refused}"));
        return;
    }
    let config = sb.home().join("config/north");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.json"),
        r#"{"sandbox": {"network": {"registries": true}}}"#,
    )
    .unwrap();
    let downloaded = run(&sb, download, &[]);
    assert!(
        sb.project()
            .join("wheels/six-1.16.0-py2.py3-none-any.whl")
            .exists(),
        "{downloaded}"
    );
}

/// The interactive assistant in `auto` (every command sandboxed without
/// asking, so the one question is the proxy's) on `script`.
fn auto_tui(sb: &Sandbox, script: &std::path::Path) -> crate::emulator::Term {
    let config = sb.home().join("config/north");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.json"), r#"{"mode": "auto"}"#).unwrap();
    crate::emulator::Term::start(
        sb,
        120,
        40,
        &format!("\"$NORTH\" --script '{}'; echo EXIT=$?", script.display()),
        &[],
    )
}

/// In the interactive assistant, a command's first connection to a host no
/// grant covers is put to the user; "this session" is not asked again,
/// and a refusal reaches the command as North's 403 while the turn goes on.
#[test]
fn the_tui_asks_at_a_new_host_and_this_session_is_not_asked_again() {
    use crate::emulator::available;
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let port = server("http://127.0.0.1:PORT/page");
    let fetch = |id: &str, host: &str, tag: &str| {
        json!({"tool_calls": [{"id": id, "name": "shell_run",
            "args": {"command": format!("curl -sSf --noproxy '' http://{host}:{port}/{tag} && echo {tag}-DONE")}}]})
    };
    let script = sb.file(
        "script.json",
        &json!({"turns": [
            fetch("c1", "127.0.0.1", "first"),
            {"text": "FIRST-TURN-OVER"},
            fetch("c2", "127.0.0.1", "second"),
            {"text": "SECOND-TURN-OVER"},
            fetch("c3", "127.0.0.2", "third"),
            {"text": "THIRD-TURN-OVER"}
        ]}),
    );
    let term = auto_tui(&sb, &script);
    term.wait_for("Ask North to do something");
    term.type_text("fetch it");
    term.keys(&["Enter"]);
    let asked = term.wait_for("A command connects to a host no grant covers");
    assert!(asked.contains(&format!("127.0.0.1:{port}")), "{asked}");
    term.keys(&["y"]);
    let screen = term.wait_for("FIRST-TURN-OVER");
    let all = term.everything();
    assert!(all.contains("first-DONE"), "{screen}");
    // The result line says which hosts the command reached.
    assert!(all.contains("reached 127.0.0.1"), "{all}");
    // The same host again, in another turn: not asked (a question would
    // hold the turn until answered; no key is pressed).
    term.type_text("again");
    term.keys(&["Enter"]);
    term.wait_for("SECOND-TURN-OVER");
    let all = term.everything();
    assert!(all.contains("second-DONE"), "{all}");
    // Another host, refused: the command gets North's 403; the turn goes on.
    term.type_text("elsewhere");
    term.keys(&["Enter"]);
    // The command's line can reach the screen a frame before its prompt.
    let asked = term.wait_until("the prompt for the other host", |s| {
        s.contains("A command connects") && s.contains("127.0.0.2")
    });
    assert!(asked.contains("no grant covers"), "{asked}");
    term.keys(&["n"]);
    term.wait_for("THIRD-TURN-OVER");
    let all = term.everything();
    assert!(!all.contains("│ third-DONE"), "{all}");
    assert!(
        all.contains("403"),
        "the command reports North's refusal:\n{all}"
    );
    assert!(all.contains("refused 127.0.0.2"), "{all}");
    // The status line says what this turn's commands reached and were refused.
    let screen = term.screen();
    assert!(screen.contains("net ✗ 127.0.0.2"), "{screen}");
}

/// "Always for this project" is kept in the user's state, not the
/// project: the next session reaches the host without a question.
#[test]
fn always_for_this_project_is_remembered_in_the_users_state_for_the_next_session() {
    use crate::emulator::available;
    if !available() {
        north_test_support::missing("tmux is not installed (.ci/run installs it)");
        return;
    }
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let port = server("http://127.0.0.1:PORT/page");
    let session = |tag: &str| {
        let script = sb.file(
            &format!("{tag}.json"),
            &json!({"turns": [
                {"tool_calls": [{"id": "c1", "name": "shell_run",
                    "args": {"command": format!("curl -sSf --noproxy '' http://127.0.0.1:{port}/{tag} && echo {tag}-DONE")}}]},
                {"text": format!("{tag}-OVER")}
            ]}),
        );
        let term = auto_tui(&sb, &script);
        term.wait_for("Ask North to do something");
        term.type_text("fetch");
        term.keys(&["Enter"]);
        term
    };
    let first = session("first");
    first.wait_for("A command connects to a host no grant covers");
    first.keys(&["a"]);
    first.wait_for("first-OVER");
    first.keys(&["C-d"]);
    first.wait_for("EXIT=0");
    drop(first);
    let kept = std::fs::read_to_string(sb.home().join("state/north/network-hosts.json")).unwrap();
    assert!(kept.contains("127.0.0.1"), "{kept}");
    assert!(
        !std::fs::read_dir(sb.project().join(".north"))
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().contains("host")),
        "nothing about hosts is written into the project"
    );
    // The next session: no question (it would hold the turn; no key is pressed).
    let second = session("second");
    second.wait_for("second-OVER");
    assert!(second.everything().contains("second-DONE"));
}
