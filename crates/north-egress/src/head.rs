//! A request's head as a client sends it to a proxy: the request line and
//! the headers, and where it asks to go.

/// The most a head may take; a longer one is refused.
pub(crate) const MAX_HEAD: usize = 32 * 1024;

/// Why a head cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HeadError {
    /// Not `METHOD TARGET VERSION` and headers.
    #[error("not an HTTP request")]
    Malformed,
    /// A target that names no host, or a scheme the proxy does not carry.
    #[error("{0}")]
    Target(String),
}

/// The request line and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub method: String,
    pub target: String,
    pub version: String,
    pub headers: Vec<(String, String)>,
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A tunnel (`CONNECT host:port`).
    Tunnel { host: String, port: u16 },
    /// A plain HTTP request, forwarded as `path` to `host:port`.
    Http {
        host: String,
        port: u16,
        path: String,
    },
}

impl Target {
    /// The host asked for.
    pub(crate) fn host(&self) -> &str {
        match self {
            Target::Tunnel { host, .. } | Target::Http { host, .. } => host,
        }
    }

    /// The port asked for.
    pub(crate) fn port(&self) -> u16 {
        match self {
            Target::Tunnel { port, .. } | Target::Http { port, .. } => *port,
        }
    }
}

/// Where the head ends in `bytes` (just after its blank line), if it does.
pub(crate) fn end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

/// Parses a complete head.
pub(crate) fn parse(bytes: &[u8]) -> Result<Head, HeadError> {
    let text = std::str::from_utf8(bytes).map_err(|_| HeadError::Malformed)?;
    let mut lines = text.split("\r\n");
    let line = lines.next().ok_or(HeadError::Malformed)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed);
    };
    if method.is_empty() || target.is_empty() || !version.starts_with("HTTP/") {
        return Err(HeadError::Malformed);
    }
    let mut headers = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed)?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    Ok(Head {
        method: method.to_string(),
        target: target.to_string(),
        version: version.to_string(),
        headers,
    })
}

/// Where `head` asks to go.
pub(crate) fn target(head: &Head) -> Result<Target, HeadError> {
    if head.method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(&head.target, None)?;
        return Ok(Target::Tunnel { host, port });
    }
    let lower = head.target.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("http://").map(|_| &head.target[7..]) else {
        return Err(HeadError::Target(format!(
            "`{}` is not a proxy request: send `http://` URLs in absolute form and `https://` through CONNECT",
            head.target
        )));
    };
    let (auth, path) = match rest.find(['/', '?', '#']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], &rest[i..]),
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    let (host, port) = authority(auth, Some(80))?;
    Ok(Target::Http { host, port, path })
}

/// `host:port` (`[v6]:port`); `default` when the port may be left out.
fn authority(text: &str, default: Option<u16>) -> Result<(String, u16), HeadError> {
    let bad = || HeadError::Target(format!("`{text}` names no host and port"));
    // Credentials in the authority are not the host.
    let text = text.rsplit_once('@').map_or(text, |(_, h)| h);
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad)?;
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            _ => (text, None),
        }
    };
    let port = match port {
        Some(p) => p.parse::<u16>().map_err(|_| bad())?,
        None => default.ok_or_else(bad)?,
    };
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// The request as the origin gets it: origin-form, without the proxy's
/// own headers, and one request a connection (`Connection: close`), so
/// nothing after it reaches a host that was not checked.
pub(crate) fn forwarded(head: &Head, path: &str, host: &str) -> Vec<u8> {
    let mut out = format!("{} {path} {}\r\n", head.method, head.version);
    // The host that was checked, not another the client names (a site on
    // the same server).
    out.push_str(&format!("Host: {host}\r\n"));
    for (name, value) in &head.headers {
        let lower = name.to_ascii_lowercase();
        if lower.starts_with("proxy-")
            || matches!(lower.as_str(), "connection" | "keep-alive" | "host")
        {
            continue;
        }
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    out.into_bytes()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn head(text: &str) -> Head {
        parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn targets_of_tunnels_and_plain_requests() {
        let t = target(&head(
            "CONNECT registry.example.test:443 HTTP/1.1\r\nHost: x\r\n\r\n",
        ));
        assert_eq!(
            t.unwrap(),
            Target::Tunnel {
                host: "registry.example.test".into(),
                port: 443
            }
        );
        let t = target(&head("CONNECT [::ffff:127.0.0.1]:8080 HTTP/1.1\r\n\r\n")).unwrap();
        assert_eq!((t.host(), t.port()), ("::ffff:127.0.0.1", 8080));
        let t = target(&head(
            "GET http://user:pw@Example.test:8080/a?b HTTP/1.1\r\n\r\n",
        ))
        .unwrap();
        assert_eq!(
            t,
            Target::Http {
                host: "Example.test".into(),
                port: 8080,
                path: "/a?b".into()
            }
        );
        let t = target(&head("GET http://example.test HTTP/1.1\r\n\r\n")).unwrap();
        assert_eq!((t.host(), t.port()), ("example.test", 80));
        assert!(target(&head("GET /local HTTP/1.1\r\n\r\n")).is_err());
        assert!(target(&head("CONNECT example.test HTTP/1.1\r\n\r\n")).is_err());
        assert!(parse(b"nonsense\r\n\r\n").is_err());
    }

    #[test]
    fn a_forwarded_request_drops_proxy_headers_and_is_the_only_one() {
        let h = head(
            "GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nProxy-Authorization: secret\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
        );
        let out = String::from_utf8(forwarded(&h, "/x", "a.test")).unwrap();
        assert_eq!(
            out,
            "GET /x HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        // The Host header names the checked host, whatever the client said.
        let h = head("GET http://a.test/x HTTP/1.1\r\nHost: other.test\r\n\r\n");
        let out = String::from_utf8(forwarded(&h, "/x", "a.test")).unwrap();
        assert!(
            out.contains("Host: a.test\r\n") && !out.contains("other.test"),
            "{out}"
        );
    }
}
