use super::*;
use serde_json::json;

fn parse(v: Value) -> Result<ServerConfig, String> {
    parse_entry("s", &v, Scope::Project)
}

#[test]
fn stdio_and_http_entries_parse_and_bad_ones_say_what_to_write() {
    let s = parse(json!({"command": "node", "args": ["x.js", 3], "env": {"A": "b"}})).unwrap();
    assert!(matches!(s.transport, Transport::Stdio { ref args, .. } if args == &["x.js", "3"]));
    let h = parse(json!({"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer x"}})).unwrap();
    assert!(matches!(h.transport, Transport::Http { .. }));
    assert!(
        parse(json!({"url": "http://x"}))
            .unwrap_err()
            .contains("type")
    );
    assert!(
        parse(json!({"type": "sse", "url": "http://x"}))
            .unwrap_err()
            .contains("http")
    );
    assert!(parse(json!({"args": []})).unwrap_err().contains("command"));
    assert!(parse(json!({"command": "x", "timeout": -1})).is_err());
    assert!(parse_entry("a__b", &json!({"command": "x"}), Scope::User).is_err());
    assert!(parse_entry("a b", &json!({"command": "x"}), Scope::User).is_err());
}

#[test]
fn expansion_uses_defaults_and_never_hands_out_north_keys() {
    let env = |k: &str| match k {
        "HOME" => Some("/h".to_string()),
        "ANTHROPIC_API_KEY" => Some("sk-secret".to_string()),
        _ => None,
    };
    assert_eq!(expand("${HOME}/x", &env).unwrap(), "/h/x");
    assert_eq!(expand("${NOPE:-d}", &env).unwrap(), "d");
    let unset = expand("${NOPE}", &env).unwrap_err();
    assert_eq!(unset, ExpandError::Unset("NOPE".into()));
    assert!(unset.to_string().contains("not set"), "{unset}");
    let reserved = expand("${ANTHROPIC_API_KEY}", &env).unwrap_err();
    assert!(reserved.to_string().contains("never"), "{reserved}");
    assert!(!reserved.to_string().contains("sk-secret"));
    assert_eq!(expand("${ANTHROPIC_API_KEY:-none}", &env).unwrap(), "none");
    assert!(matches!(
        expand("${open", &env),
        Err(ExpandError::Unclosed(_))
    ));
}

#[test]
fn a_planted_mcp_json_that_is_a_fifo_or_too_big_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(ServersFile::PROJECT_FILE);
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path and a mode; no memory is shared.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let Err(err) = ServersFile::load(&path, Scope::Project) else {
        panic!("a fifo was read as servers");
    };
    assert!(err.to_string().contains("not a regular file"), "{err}");

    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, vec![b' '; 2 << 20]).unwrap();
    let Err(err) = ServersFile::load(&path, Scope::Project) else {
        panic!("a 2 MiB file was read");
    };
    assert!(err.to_string().contains("larger than"), "{err}");
}
